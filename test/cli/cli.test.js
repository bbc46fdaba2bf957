'use strict';
// The rloop command and compare(): verdicts from real reports, exit codes, bad input.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const rloop = require('../..');
const { busy } = require('../fixtures/helpers');

const CLI = path.join(__dirname, '..', '..', 'cli', 'rloop.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-cli-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const keepAlive = setInterval(() => {}, 1000);
test.after(() => clearInterval(keepAlive));

function cli(...args) {
  return spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });
}

function parseHeavy() {
  const text = JSON.stringify(Array.from({ length: 30000 }, (_, i) => ({ i, name: `n${i}`, tags: ['a', 'b'] })));
  return JSON.parse(text).length;
}

/**
 * A real capture of 10 ms of work every 250 ms in scope 'api', plus `extra` in the same scope.
 * The base's own work is 4 % of the profile, under the 5 points a function must move by: on a
 * loaded machine `extra` delays the ticks and `busy`'s share falls (and which of `busy` and the
 * clock's `now` holds its samples goes by V8's tier), which must not read as an improvement.
 */
async function capture(file, extra) {
  const mon = rloop.start({ io: false });
  const t = setInterval(() => rloop.scope('api', () => { busy(10); extra(); }), 250);
  const report = await mon.capture({ durationMs: 2500, profile: true, heapStats: false, json: file });
  clearInterval(t);
  mon.stop();
  return report;
}

test('compare: a build that adds heavy JSON work regresses; the reverse improves', async () => {
  const base = path.join(tmp, 'base.json');
  const head = path.join(tmp, 'head.json');
  await capture(base, () => {});
  await capture(head, parseHeavy);

  const worse = rloop.compare(JSON.parse(fs.readFileSync(base)), JSON.parse(fs.readFileSync(head)));
  const gains = { resolved: worse.patterns.resolved.map((p) => p.id), improved: worse.functions.improved, lag: worse.lag, scopes: worse.scopes };
  assert.strictEqual(worse.verdict, 'REGRESSED', JSON.stringify({ new: worse.patterns.new.map((p) => p.id), gains }));
  assert.ok(worse.patterns.new.some((p) => p.id === 'json-heavy'));
  assert.ok(worse.scopes.find((s) => s.name === 'api').deltaPoints >= 5);

  const r = cli('compare', base, head);
  assert.strictEqual(r.status, 1, r.stderr);
  assert.match(r.stdout, /^verdict: REGRESSED/);
  assert.match(r.stdout, /new +json-heavy/);

  const back = cli('compare', head, base, '--json');
  assert.strictEqual(back.status, 0, back.stderr);
  const better = JSON.parse(back.stdout);
  assert.strictEqual(better.verdict, 'IMPROVED');
  assert.ok(better.patterns.resolved.some((p) => p.id === 'json-heavy'));

  const same = cli('compare', base, base);
  assert.strictEqual(same.status, 0);
  assert.match(same.stdout, /^verdict: NO CHANGE/);
});

test('report --json writes a pretty copy; bad input exits 2 with a usage message', () => {
  const base = path.join(tmp, 'base.json');
  const out = path.join(tmp, 'pretty.json');
  const r = cli('report', base, '--json', out);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.deepStrictEqual(JSON.parse(fs.readFileSync(out, 'utf8')), JSON.parse(fs.readFileSync(base, 'utf8')));
  assert.match(fs.readFileSync(out, 'utf8'), /^\{\n {2}"schema": "rloop-report\/1"/);

  const bad = [
    [[], /no command/],
    [['frobnicate'], /unknown command frobnicate/],
    [['compare', base], /compare needs two report files/],
    [['compare', base, path.join(tmp, 'missing.json')], /cannot read .*missing\.json: ENOENT/],
    [['compare', base, __filename], /is not JSON/],
    [['report', base], /report needs --html and\/or --json/],
    [['report', base, '--pdf', 'x'], /Unknown option '--pdf'/],
  ];
  fs.writeFileSync(path.join(tmp, 'other.json'), '{"schema":"something/2"}');
  bad.push([['compare', base, path.join(tmp, 'other.json')], /head must be an rloop-report\/1 object/]);
  for (const [args, message] of bad) {
    const res = cli(...args);
    assert.strictEqual(res.status, 2, args.join(' '));
    assert.match(res.stderr, message);
    assert.strictEqual(res.stdout, '');
  }
});

test('--help prints the usage and --version the version, both on stdout with exit 0', () => {
  for (const flag of ['--help', '-h', 'help']) {
    const r = cli(flag);
    assert.deepEqual([r.status, r.stderr], [0, ''], flag);
    assert.match(r.stdout, /^usage:\n {2}rloop --help \| --version\n {2}rloop attach <pid>/, flag);
  }
  for (const flag of ['--version', '-v']) {
    const r = cli(flag);
    assert.deepEqual([r.status, r.stdout, r.stderr], [0, `rloop ${require('../../package.json').version}\n`, ''], flag);
  }
});

test("attach's flags: durations with a unit, a bare number in the flag's old unit, the --save-* aliases, --help", () => {
  const { options } = require('../../cli/attach/command');
  const o = options(['1', '-d', '1.5', '-t', '20ms', '--io-threshold', '2s', '--cpuprofile', 'p.cpuprofile', '--save-pprof', 'p.pb.gz', '--heap-pprof', 'h.pb.gz']);
  assert.deepStrictEqual([o.durationMs, o.start.lagThreshold, o.start.ioThreshold], [1500, 20, 2000], 'a bare -d is in seconds');
  assert.deepStrictEqual([o.cpuprofile, o.pprof, o.heapPprof], ['p.cpuprofile', 'p.pb.gz', 'h.pb.gz'].map((f) => path.resolve(f)));
  assert.deepStrictEqual([options(['1', '-d', '2m']).durationMs, options(['1', '-d', '500ms', '-t', '80']).start.lagThreshold], [120000, 80], 'a bare -t is in ms');
  assert.deepStrictEqual([options(['1']).durationMs, options(['1']).start.lagThreshold, options(['1']).start.ioThreshold], [10000, 50, 500], 'the options\' defaults');
  assert.strictEqual(options(['1', '--save-profile', 'old.cpuprofile', '--save-heap-pprof', 'old.pb.gz']).cpuprofile, path.resolve('old.cpuprofile'));
  assert.throws(() => options(['1', '--cpuprofile', 'a', '--save-profile', 'b']), /--cpuprofile and --save-profile \(its alias\) are both given/);
  assert.throws(() => options(['1', '-d', 'soon']), /--duration must be a duration such as 10s, 500ms or 2m \(a bare number is in seconds\), got "soon"/);
  assert.throws(() => options(['1', '-t', '0ms']), /--threshold must be between 1ms and 3600000ms, got "0ms"/);
  const help = cli('attach', '--help');
  assert.deepStrictEqual([help.status, help.stderr], [0, '']);
  assert.match(help.stdout, /^usage:\n {2}rloop attach <pid> \[-d <duration>\]/);
});

// One set of numbers: compare() counts stalls as the report's page does.
test('compare counts every stall recorded and the longest of them, as the page states them', () => {
  const report = (lagMs, dropped) => ({
    schema: 'rloop-report/1',
    lag: { enabled: true, thresholdMs: 50, events: lagMs.map((ms, i) => ({ lagMs: ms, at: 1000 * i })), dropped, summary: { stalls: 1, stretches: 9, p99Ms: 495, maxMs: 495 } },
  });
  const c = rloop.compare(report([60], 0), report([529, 80], 2));
  assert.deepStrictEqual(c.lag, { baseStalls: 1, headStalls: 4, baseMaxMs: 60, headMaxMs: 529 });
  assert.strictEqual(c.verdict, 'REGRESSED');
  assert.match(require('../../js/report/compare').formatComparison(c), /longest stall 60 ms -> 529 ms, stalls 1 -> 4/);
});

test('compare against a report without a CPU profile says what it cannot compare, and resolves nothing', () => {
  const report = (profile) => ({ schema: 'rloop-report/1', lag: { enabled: true, thresholdMs: 50, events: [], dropped: 0, summary: {} }, profile });
  const profiled = report({
    analysis: {
      patterns: [{ id: 'json-heavy', severity: 'warning', message: 'JSON.parse took 40 %', percent: 40 }],
      heavyFunctions: [{ functionName: '', url: '', line: null, column: null, selfPercent: 30 }],
    },
  });
  const c = rloop.compare(profiled, report(undefined));
  assert.deepStrictEqual([c.patterns, c.functions], [{ resolved: [], new: [], persistent: [] }, { regressed: [], improved: [] }]);
  assert.deepStrictEqual(c.notCompared, ['patterns and functions: the CPU profile, which head has none of']);
  assert.strictEqual(c.verdict, 'NO CHANGE');
  const text = require('../../js/report/compare').formatComparison(c);
  assert.match(text, /not compared patterns and functions: the CPU profile, which head has none of/);
  assert.doesNotMatch(text, /resolved/);
  // Both profiled: a function with no name, file or line reads as such, never "(:null)".
  const gone = rloop.compare(profiled, report({ analysis: { patterns: [], heavyFunctions: [] } }));
  assert.deepStrictEqual(gone.notCompared, []);
  assert.strictEqual(gone.patterns.resolved[0].id, 'json-heavy');
  const lines = require('../../js/report/compare').formatComparison(gone);
  assert.match(lines, /faster {5}\(anonymous\) 30\.0 % -> 0\.0 % of the profile/);
  assert.doesNotMatch(lines, /null|\(:/);
});

test("compare leaves rloop's own part of a stall out: the profile's start is no change of the app's", () => {
  // Seen on a loaded machine: the start of the CPU profile held base's loop 456 ms, head's 429.
  const report = (...events) => ({ schema: 'rloop-report/1', lag: { enabled: true, thresholdMs: 50, events, dropped: 0, summary: {} } });
  const c = rloop.compare(report({ lagMs: 456, rloopMs: 440, at: 0 }), report({ lagMs: 429, rloopMs: 420, at: 0 }, { lagMs: 60, rloopMs: 45, at: 900 }));
  // Under the threshold without rloop's part, a stall is rloop's: neither report counts it.
  assert.deepStrictEqual(c.lag, { baseStalls: 0, headStalls: 0, baseMaxMs: 0, headMaxMs: 0 });
  assert.strictEqual(c.verdict, 'NO CHANGE');
  const worse = rloop.compare(report({ lagMs: 456, rloopMs: 440, at: 0 }), report({ lagMs: 429, rloopMs: 350, at: 0 }));
  assert.deepStrictEqual(worse.lag, { baseStalls: 0, headStalls: 1, baseMaxMs: 0, headMaxMs: 79 });
  assert.strictEqual(worse.verdict, 'REGRESSED', 'the app held it 79 ms: a stall of its own');
});

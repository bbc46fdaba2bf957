'use strict';
// The rloop command and compare(): verdicts from real reports, exit codes, bad input.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const rloop = require('..');
const { busy } = require('./helpers');

const CLI = path.join(__dirname, '..', 'cli', 'rloop.js');
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
 * A real capture of 10 ms of work every 100 ms in scope 'api', plus `extra` in the same scope.
 * The period leaves room for `extra` even on a slow machine: were the ticks delayed, `busy`
 * would run less often, its share of the profile would fall, and compare() would rightly call
 * that an improvement (the verdict then reads MIXED).
 */
async function capture(file, extra) {
  const mon = rloop.start({ io: false });
  const t = setInterval(() => rloop.scope('api', () => { busy(10); extra(); }), 100);
  const report = await mon.capture({ durationMs: 1500, profile: true, heapStats: false, json: file });
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
  assert.strictEqual(worse.verdict, 'REGRESSED', JSON.stringify(worse.patterns.new.map((p) => p.id)));
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

// Issue #11 §5: one set of numbers: compare() counts stalls as the report's page does.
test('compare counts every stall recorded and the longest of them, as the page states them', () => {
  const report = (lagMs, dropped) => ({
    schema: 'rloop-report/1',
    lag: { enabled: true, thresholdMs: 50, events: lagMs.map((ms, i) => ({ lagMs: ms, at: 1000 * i })), dropped, summary: { stalls: 1, stretches: 9, p99Ms: 495, maxMs: 495 } },
  });
  const c = rloop.compare(report([60], 0), report([529, 80], 2));
  assert.deepStrictEqual(c.lag, { baseStalls: 1, headStalls: 4, baseMaxMs: 60, headMaxMs: 529 });
  assert.strictEqual(c.verdict, 'REGRESSED');
  assert.match(require('../js/compare').formatComparison(c), /longest stall 60 ms -> 529 ms, stalls 1 -> 4/);
});

'use strict';
// `npm run bench:check`: each benchmark runs end to end at a tiny scale and writes a well-formed
// result file. Structure and attribution only: timings at this scale mean nothing, so none are
// asserted. Minutes, not seconds: not part of `npm test`, which checks that each script starts
// and names a bad option (test/bench/starts.test.js).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const CONFIGS = ['nohook', 'hooks3', 'hooks4', 'purejs', 'rloop'];
const WITH_CLOCK = ['nohook', 'hooks3', 'hooks4', 'clock', 'hooks2', 'hooks2als', 'clock2', 'clock2als', 'purejs', 'rloop'];
const WORKLOADS = {
  setImmediate: WITH_CLOCK,
  'setImmediate-grouped': WITH_CLOCK,
  await: WITH_CLOCK,
  http: [...CONFIGS, 'full', 'autohttp'],
  timers: ['nohook', 'rloop', 'autotimers'],
  'timers-fresh': ['nohook', 'rloop', 'autotimers'],
  interval: ['nohook', 'rloop', 'autotimers'],
  memory: ['nohook', 'rloop'],
};

const finite = (x, what) => assert.ok(Number.isFinite(x), `${what} is ${x}`);

function assertStats(s, what) {
  for (const k of ['median', 'mad', 'min', 'max', 'n']) finite(s[k], `${what}.${k}`);
  assert.ok(s.min <= s.median && s.median <= s.max, `${what}: min ≤ median ≤ max`);
  assert.ok(s.min <= s.ci95[0] && s.ci95[0] <= s.median && s.median <= s.ci95[1] && s.ci95[1] <= s.max, `${what}: the median's interval`);
}

test('bench/run.js --quick at a tiny scale writes a result file with every workload and configuration', { timeout: 180_000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-bench-'));
  try {
    const args = ['bench/run.js', '--quick', '--rounds', '1', '--scale', '0.01', '--out', out];
    const stdout = execFileSync(process.execPath, args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const files = fs.readdirSync(out);
    assert.equal(files.length, 1);
    assert.match(stdout, new RegExp(files[0].replace(/\./g, '\\.')), 'the table names the result file');
    const result = JSON.parse(fs.readFileSync(path.join(out, files[0]), 'utf8'));

    const fp = result.fingerprint;
    for (const k of ['node', 'v8', 'cpu', 'startedAt']) assert.equal(typeof fp[k], 'string', `fingerprint.${k}`);
    finite(fp.cores, 'fingerprint.cores');
    assert.equal(fp.loadavg.length, 3);
    assert.ok('commit' in fp && 'dirty' in fp);
    assert.equal(fp.options.rounds, 1);

    assert.deepEqual(Object.keys(result.workloads), Object.keys(WORKLOADS));
    for (const [name, configs] of Object.entries(WORKLOADS)) {
      const w = result.workloads[name];
      assert.deepEqual(Object.keys(w.configs), configs, name);
      finite(w.events, `${name}.events`);
      for (const [c, s] of Object.entries(w.configs)) {
        assertStats(s.perEvent, `${name}.${c}.perEvent`);
        if (c === 'nohook') assert.equal(s.overhead, null);
        else assertStats(s.overhead, `${name}.${c}.overhead`);
        finite(s.fastest.ns, `${name}.${c}.fastest.ns`);
        assert.ok(s.fastest.ns <= s.perEvent.min, `${name}/${c}: the fastest batch is no slower than any sample's median`);
        if (c === 'nohook') assert.equal(s.fastest.overhead, null);
        else finite(s.fastest.overhead, `${name}.${c}.fastest.overhead`);
        if (['purejs', 'rloop', 'full', 'autohttp', 'autotimers'].includes(c)) {
          assert.ok(s.attribution.ok, `${name}/${c} charges every scope: ${JSON.stringify(s.attribution)}`);
          assertStats(s.attribution.share, `${name}.${c}.attribution.share`);
        } else {
          assert.equal(s.attribution, null);
        }
      }
      if (name === 'memory') assertStats(w.configs.rloop.rssGrowthMB, 'memory.rloop.rssGrowthMB');
      if (name === 'http') {
        assertStats(w.configs.full.extraShare, 'http.full.extraShare');
        const t = w.targets.find((x) => x.what.startsWith('(full − rloop)'));
        assert.equal(t.value, 100 * w.configs.full.extraShare.median, 'the verdict is on the per-round share');
        assert.deepEqual(t.ci95, w.configs.full.extraShare.ci95.map((x) => 100 * x));
      }
      assert.ok(w.targets.length > 0, `${name} has targets`);
      for (const t of w.targets) {
        // null: a ratio to an rloop overhead that is not above no hook (possible at this scale).
        assert.ok(t.value === null || Number.isFinite(t.value), `${name} target ${t.what} is ${t.value}`);
        assert.equal(typeof t.ok, 'boolean');
      }
      const samples = result.samples.filter((s) => s.workload === name);
      assert.equal(samples.length, configs.length, `${name}: one fresh-process sample per configuration`);
      for (const s of samples) finite(s.perEvent, `${name}/${s.config} sample`);
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('bench/keys.js prints what a key costs', () => {
  const out = execFileSync(process.execPath, ['bench/keys.js', '--rounds', '2', '--calls', '2000'], { cwd: root, encoding: 'utf8' });
  const ns = (label) => Number(new RegExp(`${label}\\s+(-?\\d+) ns`).exec(out)?.[1]);
  for (const label of ['without a key', 'with a new key', 'a key costs']) finite(ns(label), `${label} in:\n${out}`);
});

test('bench/metrics.js prints scrape latency and loop cost of both endpoints; only rloop answers a blocked loop', { timeout: 120_000 }, () => {
  const out = execFileSync(process.execPath, ['bench/metrics.js', '--rounds', '1', '--scrapes', '3'], { cwd: root, encoding: 'utf8' });
  for (const state of ['idle', 'busy']) {
    for (const name of ['rloop', 'prom-client']) assert.match(out, new RegExp(`^${state}\\s+${name}\\s+\\d[\\d.]* \\[.*3/3$`, 'm'), `${state} ${name} in:\n${out}`);
  }
  assert.match(out, /^blocked\s+rloop\s+\d.*\s[12]\/2$/m, out);
  assert.match(out, /^blocked\s+prom-client\s+none\s.*0\/2$/m, out);
  assert.match(out, /^rloop\s+-?\d+ \[/m, out);
});

test('bench/instructions.js counts instructions per event under valgrind: a slope over two sizes', { timeout: 300_000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-instructions-'));
  try {
    const stdout = execFileSync(process.execPath, ['bench/instructions.js', '--quick', '--out', out], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const [file] = fs.readdirSync(out);
    const { fingerprint, workloads } = JSON.parse(fs.readFileSync(path.join(out, file), 'utf8'));
    assert.match(fingerprint.options.method, /cachegrind.*--single-threaded/);
    const { configs, overhead } = workloads.setImmediate;
    for (const [name, c] of Object.entries(configs)) {
      assert.ok(c.large.events > c.small.events && c.large.instructions > c.small.instructions, `${name}: two sizes`);
      assert.equal(c.perEvent, (c.large.instructions - c.small.instructions) / (c.large.events - c.small.events));
      assert.match(stdout, new RegExp(`${name}\\s+${Math.round(c.perEvent).toLocaleString('en')}`));
    }
    // Timing every callback's scope switch is work: rloop runs more instructions than no hook.
    assert.ok(overhead.rloop > 0, `rloop's overhead: ${overhead.rloop} instructions/event`);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('bench/attach.js attaches to a fresh target and back, and writes latency and CPU per configuration', { timeout: 120_000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-bench-attach-'));
  try {
    const stdout = execFileSync(process.execPath, ['bench/attach.js', '--rounds', '1', '--span-ms', '200', '--rate', '20', '--out', out], { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    const [file] = fs.readdirSync(out);
    assert.match(stdout, /rloop attach → capture running: cold \d+/);
    const result = JSON.parse(fs.readFileSync(path.join(out, file), 'utf8'));
    assert.equal(result.fingerprint.options.rounds, 1);
    for (const kind of ['cold', 'warm']) {
      assertStats(result.latencyMs[kind], `latencyMs.${kind}`);
      assert.ok(result.latencyMs[kind].median > 0);
    }
    const configs = ['none', 'attached, --no-profile', 'attached, CPU profile'];
    assert.deepEqual(Object.keys(result.cpuMsPerS), configs);
    for (const c of configs) {
      assertStats(result.cpuMsPerS[c], c);
      assert.ok(result.cpuMsPerS[c].median > 0, `${c}: the target's CPU under load`);
    }
    assert.deepEqual(Object.keys(result.extraCpuMsPerS), configs.slice(1));
    for (const c of configs.slice(1)) assert.equal(result.extraCpuMsPerS[c].median, result.cpuMsPerS[c].median - result.cpuMsPerS.none.median);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

'use strict';
// rloop's own work is never a finding: an idle app (modules loaded at start-up, one interval
// timer) captured zero-code for 10 s with a CPU profile, its metrics endpoint scraped and a
// profile pulled from it meanwhile, gets a report with no warning. Each part of rloop's own
// work has its assertion: the profiler starting and stopping and the pulled profile's answer are
// left out of the app's busy time (js/capture/own-work.js), require() is module loading, not
// synchronous I/O (js/analyze/kinds.js), the scrapes are no slow I/O and no scope. The ledger
// charges rloop's own work apart, so live windows and the metrics say it apart too.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { scrape, parse, series } = require('../fixtures/metrics-helpers');
const { sleep } = require('../fixtures/helpers');
const { assertValidReport } = require('../fixtures/report');
const { findings, VOICES } = require('../../js/report/sections/diagnosis');
const { context } = require('../../js/report/context');
const { buildReport } = require('../../js/report/build');
const { heapGrowth } = require('../../js/report/facts');

const ROOT = path.join(__dirname, '..', '..');
const APP = path.join(__dirname, '..', 'fixtures', 'idle-app.js');

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

test('an idle app captured 10 s with a profile, its endpoint scraped and a profile pulled: no warning, rloop\'s own work left out', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-own-'));
  const json = path.join(tmp, 'r.json');
  const port = await freePort();
  const env = { ...process.env, RLOOP_PROFILE: '1', RLOOP_DURATION: '10s', RLOOP_JSON: json, RLOOP_METRICS_PORT: String(port) };
  const app = spawn(process.execPath, ['-r', path.join(ROOT, 'register'), APP], { env, stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    await new Promise((resolve, reject) => {
      app.stdout.once('data', resolve);
      app.once('exit', (code) => reject(new Error(`the app exited (${code})`)));
    });
    const began = Date.now();
    let pulled = null;
    let pulledAt = null;
    let scrapes = 0;
    while (!fs.existsSync(json)) {
      assert.ok(Date.now() - began < 30000, 'the report is written within 30 s');
      if ((await scrape(port)).status === 200) scrapes += 1;
      if (pulled === null && Date.now() - began > 3000) {
        pulledAt = Date.now();
        pulled = await scrape(port, '/debug/pprof/profile?seconds=1');
      }
      await sleep(200);
    }
    await sleep(300); // the file is written in one go; let it close
    const r = JSON.parse(fs.readFileSync(json, 'utf8'));
    assertValidReport(r);
    assert.strictEqual(pulled.status, 200, 'a profile was pulled during the capture');
    assert.ok(scrapes >= 20, `scraped ${scrapes} times`);

    // The acceptance: no warning at all.
    const found = findings(context(r), VOICES.text);
    const loud = found.filter((f) => f.severity === 'warning' || f.severity === 'critical');
    assert.deepStrictEqual(loud.map((f) => `${f.title} ${f.message}`), []);

    // require() at start-up: module loading, not synchronous I/O.
    const analysis = r.profile.analysis;
    assert.strictEqual(analysis.categories['sync-io'], 0, JSON.stringify(analysis.categories));
    assert.ok(!analysis.patterns.some((p) => p.id === 'sync-io'), JSON.stringify(analysis.patterns));
    assert.ok(!found.some((f) => f.title === 'Synchronous I/O.'));

    // The profiler's start and stop and the pulled profile's answer: left out, and said.
    const elu = r.elu;
    assert.ok(elu.thread.rloopMs > 0, JSON.stringify(elu.thread));
    const pullWindows = elu.windows.filter((w) => w.end >= pulledAt && w.start <= pulledAt + 2500);
    const left = pullWindows.reduce((sum, w) => sum + (w.thread.rloopMs ?? 0), 0);
    assert.ok(left > 0, `the windows of the pulled profile say what was left out: ${JSON.stringify(pullWindows.map((w) => w.thread))}`);
    // After the start-up's window the app's only work is its timer: what rloop took out of a
    // window is more than the unattributed time left in it (before, the pulled profile's answer
    // was that window's unattributed time).
    for (const w of elu.windows.slice(1)) {
      if (w.thread.rloopMs > 0) assert.ok(w.unattributed.busyMs < w.thread.rloopMs, JSON.stringify(w));
    }
    assert.ok(elu.thread.busyMs >= 0 && elu.unattributed.busyMs >= 0);

    // The heap as the capture ended is read before its profile stops: V8's profile, handed back
    // as JS objects, is rloop's, not the app's growth (it read as +0.5 to +1.3 MB after start-up here).
    const g = heapGrowth(r);
    assert.ok(g.after !== null && g.after < 1024 * 1024, `the heap after start-up grew ${g.after} bytes`);

    // The scrapes and the pulled profile's request: served by the endpoint's thread, no slow
    // I/O and no scope of the app's.
    assert.deepStrictEqual(r.io.events, []);
    assert.deepStrictEqual(elu.scopes.filter((s) => /metrics|pprof/.test(s.name)), []);
    assert.ok(!found.some((f) => f.title === 'Slow I/O.'));
  } finally {
    app.kill();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

test('a report takes rloop\'s own work from its windows and totals, apart as the ledger charged it: nothing subtracted again', () => {
  const busy = (busyMs, durationMs) => ({ busyMs, elu: busyMs / durationMs });
  const window = (seq, start, threadMs, unattributedMs, rloopMs) => ({
    seq, start, end: start + 1000, durationMs: 1000,
    thread: { ...busy(threadMs, 1000), ...(rloopMs > 0 && { rloopMs }) }, unattributed: { name: '(unattributed)', ...busy(unattributedMs, 1000), calls: 1 },
    scopes: [{ name: 'job', ...busy(threadMs - unattributedMs, 1000), calls: 1 }],
  });
  const totals = (threadMs, unattributedMs, rloopMs) => ({ thread: { busyMs: threadMs, rloopMs }, unattributed: { busyMs: unattributedMs, calls: 1 }, scopes: [{ name: 'job', busyMs: threadMs - unattributedMs, calls: 1 }] });
  const windows = [window(1, 0, 10, 5, 100), window(2, 1000, 30, 5, 0), window(3, 2000, 50, 0, 60)];
  const r = buildReport({
    meta: { start: 0, end: 3000 },
    windowMs: 1000,
    totalsBefore: totals(0, 0, 40),
    totalsAfter: totals(90, 10, 200),
    windows,
    lag: { enabled: true, thresholdMs: 50, events: [], dropped: 0 },
    io: { enabled: true, thresholdMs: 500, events: [], dropped: 0, aggregates: [] },
    heap: null,
    profile: null,
  });
  assert.deepStrictEqual(r.elu.windows, windows, 'the windows as the addon gave them');
  assert.deepStrictEqual(r.elu.thread, { busyMs: 90, elu: 0.03, rloopMs: 160 }, 'the totals\' difference');
  assert.deepStrictEqual(r.elu.unattributed, { busyMs: 10, elu: 10 / 3000, calls: 0 });
  const none = buildReport({ ...r, meta: { start: 0, end: 3000 }, windowMs: 1000, totalsBefore: totals(0, 0, 0), totalsAfter: totals(90, 10, 0), windows: [], lag: r.lag, io: r.io });
  assert.deepStrictEqual(none.elu.thread, { busyMs: 90, elu: 0.03 }, 'none: no rloopMs');
});

test('live windows and metrics say rloop\'s own work apart: a capture\'s profile starting and a pulled profile are thread.rloopMs, not the idle app\'s unattributed time', async () => {
  const app = spawn(process.execPath, [APP, 'live'], { stdio: ['ignore', 'pipe', 'inherit'] });
  try {
    const lines = [];
    let buffered = '';
    let wake = () => {};
    app.stdout.setEncoding('utf8').on('data', (d) => {
      buffered += d;
      const parts = buffered.split('\n');
      buffered = parts.pop();
      lines.push(...parts.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)));
      wake();
    });
    const line = async (n) => {
      while (lines.length < n) await new Promise((resolve) => { wake = resolve; });
      return lines[n - 1];
    };
    const { port } = await line(1);
    await sleep(2800);
    const pulled = await scrape(port, '/debug/pprof/profile?seconds=1');
    assert.strictEqual(pulled.status, 200, 'a profile was pulled');
    const { windows, live, own } = await line(2);
    const metrics = parse((await scrape(port)).body);

    // Each window holds rloop's own work as its spans say (the same clock, read at the switches).
    const overlap = (w) => own.reduce((sum, [a, b]) => sum + Math.max(0, Math.min(b, w.end) - Math.max(a, w.start)), 0);
    const worked = windows.filter((w) => overlap(w) >= 1);
    assert.ok(worked.length >= 2, `the capture's profile and the pulled one: ${JSON.stringify(own)}`);
    const quiet = windows.slice(1).filter((w) => overlap(w) === 0).map((w) => w.unattributed.busyMs).sort((a, b) => a - b);
    const idle = quiet[Math.floor(quiet.length / 2)];
    for (const w of worked) {
      const spans = overlap(w);
      console.log(`# window ${w.seq}: rloop's own work ${spans.toFixed(1)} ms by its spans, thread.rloopMs ${w.thread.rloopMs?.toFixed(1)}, unattributed ${w.unattributed.busyMs.toFixed(1)} ms (idle: ${idle.toFixed(1)})`);
      assert.ok(Math.abs(w.thread.rloopMs - spans) <= 0.5 + 0.02 * spans, JSON.stringify(w.thread));
      assert.ok(w.thread.busyMs + w.thread.rloopMs <= w.durationMs + 0.01, 'apart, not inside busyMs');
      // The app stays idle: its unattributed time is the idle app's and what capturing does
      // around the profile, never the profile's start.
      assert.ok(w.unattributed.busyMs < idle + 0.5 * w.thread.rloopMs + 5, JSON.stringify(w));
    }
    assert.ok(windows.every((w) => !(w.thread.rloopMs > 0) || overlap(w) > 0), 'no rloopMs outside its spans');

    // The endpoint reads the same ledger: rloop's own time is a state of its own, not active.
    const state = (s) => series(metrics, 'nodejs_eventloop_time_seconds_total', { thread: '0', nodejs_eventloop_state: s }) * 1000;
    const sum = (f) => windows.reduce((total, w) => total + f(w), 0);
    const rloopMs = sum((w) => w.thread.rloopMs ?? 0) + (live.thread.rloopMs ?? 0);
    assert.ok(Math.abs(state('rloop') - rloopMs) <= 0.5, `metrics ${state('rloop')} ms, windows ${rloopMs} ms`);
    const unattributed = series(metrics, 'rloop_scope_busy_seconds_total', { thread: '0', scope: '(unattributed)' }) * 1000;
    const inWindows = sum((w) => w.unattributed.busyMs) + live.unattributed.busyMs;
    assert.ok(unattributed >= inWindows - 0.5 && unattributed <= inWindows + 20, `metrics ${unattributed} ms unattributed, windows ${inWindows} ms`);
    assert.ok(Math.abs(state('active') - unattributed) <= 0.5, 'the idle app has no scope: active is its unattributed time');
    assert.ok(!metrics.some((m) => m.labels.scope === '(rloop)'), 'no scope series of it');
  } finally {
    app.kill();
  }
});

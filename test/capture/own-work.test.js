'use strict';
// rloop's own work is never a finding: an idle app (modules loaded at start-up, one interval
// timer) captured zero-code for 10 s with a CPU profile, its metrics endpoint scraped and a
// profile pulled from it meanwhile, gets a report with no warning. Each part of rloop's own
// work has its assertion: the profiler starting and stopping and the pulled profile's answer are
// left out of the app's busy time (js/capture/own-work.js), require() is module loading, not
// synchronous I/O (js/analyze/kinds.js), the scrapes are no slow I/O and no scope.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { scrape } = require('../fixtures/metrics-helpers');
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

test('a report leaves rloop\'s own work out of its windows and totals, never below the unattributed time, and says how much', () => {
  const busy = (busyMs, durationMs) => ({ busyMs, elu: busyMs / durationMs });
  const window = (seq, start, threadMs, unattributedMs) => ({
    seq, start, end: start + 1000, durationMs: 1000,
    thread: busy(threadMs, 1000), unattributed: { name: '(unattributed)', ...busy(unattributedMs, 1000), cpuMs: unattributedMs - 1, calls: 1 },
    scopes: [{ name: 'job', ...busy(threadMs - unattributedMs, 1000), calls: 1 }],
  });
  const totals = (threadMs, unattributedMs) => ({ thread: { busyMs: threadMs }, unattributed: { busyMs: unattributedMs, calls: 1 }, scopes: [{ name: 'job', busyMs: threadMs - unattributedMs, calls: 1 }] });
  const r = buildReport({
    meta: { start: 0, end: 3000 },
    windowMs: 1000,
    totalsBefore: totals(0, 0),
    totalsAfter: totals(250, 220),
    // 100 ms in the first window's start; 150 ms in the third, of which only 60 ms unattributed there.
    windows: [window(1, 0, 110, 105), window(2, 1000, 30, 5), window(3, 2000, 110, 60)],
    own: [[10, 110], [2500, 2650]],
    lag: { enabled: true, thresholdMs: 50, events: [], dropped: 0 },
    io: { enabled: true, thresholdMs: 500, events: [], dropped: 0, aggregates: [] },
    heap: null,
    profile: null,
  });
  const [w1, w2, w3] = r.elu.windows;
  assert.deepStrictEqual([w1.thread.busyMs, w1.unattributed.busyMs, w1.thread.rloopMs], [10, 5, 100]);
  assert.deepStrictEqual([w2.thread, w2.unattributed.busyMs], [busy(30, 1000), 5], 'a window without rloop\'s work is as it was');
  assert.deepStrictEqual([w3.thread.busyMs, w3.unattributed.busyMs, w3.thread.rloopMs], [50, 0, 60], 'never more than was unattributed');
  assert.deepStrictEqual([w1.unattributed.cpuMs, w2.unattributed.cpuMs, w3.unattributed.cpuMs], [5, 4, 0], 'what it ran stays within what is left');
  assert.strictEqual(w3.scopes[0].busyMs, 50, 'the scopes keep their time');
  // The totals: 250 ms in all, 220 unattributed; 250 ms of rloop's own work, at most the 220.
  assert.deepStrictEqual(r.elu.thread, { busyMs: 30, elu: 0.01, rloopMs: 220 });
  assert.deepStrictEqual(r.elu.unattributed, { busyMs: 0, elu: 0, calls: 0 });
});

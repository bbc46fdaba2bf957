'use strict';
// One scenario of bench/memory.js in this process: `run(name, mode, { captureMs, churnKeys }, options)`
// resolves to `{ heapUsedMb, rssMb, parts, note }`, growth after GC over the scenario's work
// (`options` go to rloop.start(); `parts` splits RSS, see parts() below; reads for the note
// come after the measurement; long-names says what RSS is once its history was read).

const fs = require('node:fs');
const v8 = require('node:v8');
const { Worker } = require('node:worker_threads');
const { setTimeout: sleep } = require('node:timers/promises');

let rloop = null; // loaded only with rloop, so the baseline has none of it
// The floor: empty hooks of the kinds rloop enables on this line (before and after where the
// scope travels by AsyncContextFrame, init too where it does not), what any async_hooks tool costs.
function floorHooks() {
  const { createHook, AsyncLocalStorage } = require('node:async_hooks');
  const frames = !('_propagate' in AsyncLocalStorage.prototype);
  createHook({ ...(frames ? {} : { init() {} }), before() {}, after() {} }).enable();
}
const scope = (name, fn, key) => (rloop ? rloop.scope(name, fn, key === undefined ? undefined : { key }) : fn());

async function settled() {
  global.gc();
  await sleep(50);
  global.gc();
  return { ...process.memoryUsage(), ...parts() };
}

/** What RSS is made of, in bytes: V8's new space and its other spaces (this isolate's), and the
 * process's anonymous and file-backed pages (other isolates, such as the stack sampler's worker,
 * and malloc are in the anonymous ones). */
function parts() {
  const spaces = v8.getHeapSpaceStatistics();
  const newSpace = spaces.filter((s) => s.space_name === 'new_space').reduce((a, s) => a + s.physical_space_size, 0);
  const v8All = spaces.reduce((a, s) => a + s.physical_space_size, 0);
  const kb = (field) => Number(/^(\w+):\s+(\d+)/m.exec(fs.readFileSync('/proc/self/smaps_rollup', 'utf8').split('\n').find((l) => l.startsWith(`${field}:`)) ?? '')?.[2] ?? NaN) * 1024;
  return { newSpace, v8Other: v8All - newSpace, anonOutsideV8: kb('Anonymous') - v8All, file: kb('Rss') - kb('Anonymous') };
}

const spin = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };

const scenarios = {
  // 1 M keyed scope() calls (`churnKeys`), each 10 awaits: 10 M async operations.
  async churn(mon, { churnKeys }) {
    for (let k = 0; k < churnKeys; k++) {
      await scope(`s${k % 12_000}`, async () => {
        for (let j = 0; j < 10; j++) await null;
      }, `key-${k}`);
    }
    return mon && (() => `scopesOverflowed ${mon.liveWindow().scopesOverflowed}`);
  },
  async names(mon) {
    for (let i = 0; i < 1_000_000; i++) {
      scope(`name-${i}`, () => {});
      if (i % 10_000 === 0) await null;
    }
    return mon && (() => `scopesOverflowed ${mon.liveWindow().scopesOverflowed}`);
  },
  // names' names looked up in a Map, no scope(): what V8 charges any code that looks a
  // million fresh names up (on Node 26 most of names' excess), as rloop does once a call.
  async lookups() {
    const known = new Map();
    let found = 0;
    for (let i = 0; i < 1_000_000; i++) {
      if (known.get(`name-${i}`) !== undefined) found++;
      if (i % 10_000 === 0) await null;
    }
    return `${found} found`;
  },
  // 60 windows (the default history) of 100 ms, every name busy in each.
  async 'long-names'(mon) {
    const names = Array.from({ length: 10_000 }, (_, i) => `${i}`.padStart(256, 'n'));
    for (let w = 0; w < 62; w++) {
      for (const n of names) scope(n, () => {});
      await sleep(100);
    }
    return mon && (async (before) => {
      const n = mon.history().length; // its JSON is freed, and malloc's pages given back
      const m = await settled();
      return `${n} windows in history; after reading them, RSS +${((m.rss - before.rss) / 2 ** 20).toFixed(1)} MB`;
    });
  },
  async workers() {
    const code = `const { workerData } = require('node:worker_threads');
      const rloop = workerData ? require(${JSON.stringify(require.resolve('..'))}) : null;
      if (rloop) { const m = rloop.start(); rloop.scope('w', () => {}); m.stop(); }`;
    for (let i = 0; i < 1000; i++) {
      const w = new Worker(code, { eval: true, workerData: rloop !== null });
      await new Promise((resolve, reject) => w.once('exit', resolve).once('error', reject));
    }
    return null;
  },
  async capture(mon, { captureMs }) {
    const report = mon?.capture({ durationMs: Infinity, heapStats: false });
    let n = 0;
    const work = setInterval(() => {
      for (let i = 0; i < 20; i++) scope(`scope-${i}`, () => spin(0.02), `job-${n++}`);
    }, 5);
    await sleep(captureMs / 4);
    const quarter = await settled(); // the key ring is full by now
    await sleep((3 * captureMs) / 4);
    const m = await settled(); // while the capture still runs
    clearInterval(work);
    const grew = (k) => ((m[k] - quarter[k]) / 2 ** 20).toFixed(1);
    const since = `over the last 3/4: heap used +${grew('heapUsed')} MB, RSS +${grew('rss')} MB`;
    if (!mon) return since;
    mon.stop();
    const r = await report;
    const mb = (k) => (m[k] / 2 ** 20).toFixed(1);
    return `${since}; before the capture ended: heap used ${mb('heapUsed')} MB, RSS ${mb('rss')} MB; report: ${r.elu.windows.length} windows for ${r.elu.windows.reduce((s, w) => s + (w.merged ?? 1), 0)}`;
  },
};

/** `mode`: 'none', 'floor' (floorHooks()) or 'rloop'. */
async function run(name, mode, sizes, extra = {}) {
  const options = { ...({ capture: { windowMs: 10 }, 'long-names': { windowMs: 100 } }[name] ?? {}), ...extra };
  const withRloop = mode === 'rloop';
  if (withRloop) rloop = require('..');
  if (mode === 'floor') floorHooks();
  const before = await settled();
  const mon = withRloop && name !== 'workers' ? rloop.start(options) : null;
  const note = await scenarios[name](mon, sizes); // a string, or a function read after measuring
  const after = await settled();
  const said = typeof note === 'function' ? await note(before) : note ?? undefined;
  if (mon && !mon.stopped) mon.stop();
  const mb = (k) => (after[k] - before[k]) / 2 ** 20;
  const parts = Object.fromEntries(['newSpace', 'v8Other', 'anonOutsideV8', 'file'].map((k) => [`${k}Mb`, mb(k)]));
  return { heapUsedMb: mb('heapUsed'), rssMb: mb('rss'), parts, note: said };
}

module.exports = { run };

'use strict';
// Does rloop at the extremes of its options throttle the app? Loop delay (perf_hooks'
// monitorEventLoopDelay, 1 ms resolution) and the cost of a keyed scope() in an app that binds
// every key slot first, then runs a steady keyed load, in fresh processes: without rloop, with
// the defaults, and with windowMs 10, maxScopes 10⁶, keySlots 1 048 576; `wide` (maxScopes
// 10⁶) with `--scopes 100000 --batch 100` charges 100 000 scopes in every 1 s window. Target:
// loop delay p99 within 2 ms of no rloop.
//
//   node bench/extremes.js [--ms 5000] [--rounds 3] [--scopes 1000] [--batch 20] [--only none,wide]

const { execFileSync } = require('node:child_process');
const { parseArgs } = require('node:util');

const CONFIGS = {
  none: null,
  defaults: {},
  extreme: { windowMs: 10, maxScopes: 1_000_000, keySlots: 1_048_576 },
  wide: { maxScopes: 1_000_000 },
};
const { values: o } = parseArgs({
  options: {
    ms: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '3' },
    scopes: { type: 'string', default: '1000' }, // scope names the load goes round
    batch: { type: 'string', default: '20' }, // keyed scope() calls a millisecond
    only: { type: 'string', default: Object.keys(CONFIGS).join(',') },
    child: { type: 'string' },
  },
});

async function child(name, ms, scopes, batch) {
  const { monitorEventLoopDelay } = require('node:perf_hooks');
  const options = CONFIGS[name];
  const rloop = options ? require('..') : null;
  const mon = rloop?.start(options);
  const scope = (n, fn, key) => (rloop ? rloop.scope(n, fn, { key }) : fn());
  let k = 0;
  const slots = options ? mon.liveWindow() && (options.keySlots ?? 65536) : 65536;
  for (; k < Math.max(slots, scopes); k++) scope(`s${k % scopes}`, () => {}, `warm-${k}`); // every key slot and name in use
  const delay = monitorEventLoopDelay({ resolution: 1 });
  const costs = [];
  delay.enable();
  const load = setInterval(() => {
    const t0 = performance.now();
    for (let i = 0; i < batch; i++) scope(`s${k % scopes}`, () => {}, `key-${k++}`);
    costs.push((performance.now() - t0) / batch);
  }, 1);
  await new Promise((resolve) => setTimeout(resolve, ms));
  clearInterval(load);
  delay.disable();
  const windows = mon ? mon.liveWindow().last?.seq ?? 0 : 0;
  mon?.stop();
  costs.sort((a, b) => a - b);
  return {
    p99Ms: delay.percentile(99) / 1e6,
    maxMs: delay.max / 1e6,
    scopeUs: (costs.reduce((a, b) => a + b, 0) / costs.length) * 1e3,
    scopeWorstUs: costs[costs.length - 1] * 1e3,
    rssMb: process.memoryUsage().rss / 2 ** 20,
    windows,
  };
}

if (o.child) {
  child(o.child, Number(o.ms), Number(o.scopes), Number(o.batch)).then((r) => console.log(JSON.stringify(r)));
} else {
  const rounds = Number(o.rounds);
  const names = o.only.split(',');
  const all = Object.fromEntries(names.map((n) => [n, []]));
  for (let r = 0; r < rounds; r++) {
    for (const n of r % 2 ? [...names].reverse() : names) {
      all[n].push(JSON.parse(execFileSync(process.execPath, [__filename, '--child', n, '--ms', o.ms, '--scopes', o.scopes, '--batch', o.batch], { encoding: 'utf8' })));
    }
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const base = median(all.none.map((x) => x.p99Ms));
  console.log(`node ${process.version}, ${rounds} rounds × ${o.ms} ms, ${o.scopes} scopes, ${o.batch} calls/ms, medians; loop delay p99 over no rloop's ${base.toFixed(2)} ms`);
  for (const n of names) {
    const m = (k) => median(all[n].map((x) => x[k]));
    console.log(`${n.padEnd(9)} p99 ${m('p99Ms').toFixed(2)} ms (+${(m('p99Ms') - base).toFixed(2)}), max ${m('maxMs').toFixed(1)} ms, keyed scope() ${m('scopeUs').toFixed(2)} µs (worst batch ${m('scopeWorstUs').toFixed(0)} µs), RSS ${m('rssMb').toFixed(0)} MB, windows ${m('windows')}`);
  }
}

'use strict';
// What a key costs: ns per rloop.scope() call with a new key each time, against the same call
// without a key, in one process, interleaved over rounds (median and fastest round).
//
//   node bench/keys.js [--rounds N] [--calls N]

const { parseArgs } = require('node:util');
const rloop = require('..');
const { summarize } = require('./stats');

const { values: o } = parseArgs({ options: { rounds: { type: 'string', default: '9' }, calls: { type: 'string', default: '200000' } } });
const rounds = Number(o.rounds);
const calls = Number(o.calls);
if (!(Number.isInteger(rounds) && rounds > 0)) throw new RangeError(`--rounds must be a positive integer, got ${o.rounds}`);
if (!(Number.isInteger(calls) && calls > 0)) throw new RangeError(`--calls must be a positive integer, got ${o.calls}`);

const noop = () => {};
let next = 0;
const keyed = () => rloop.scope('route:/users', noop, { key: `req-${next++}` });
const unkeyed = () => rloop.scope('route:/users', noop);

function time(fn) {
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < calls; i++) fn();
  return Number(process.hrtime.bigint() - t0) / calls;
}

const monitor = rloop.start({ lag: false, io: false });
time(keyed); // warm-up
time(unkeyed);
const samples = { unkeyed: [], keyed: [] };
for (let r = 0; r < rounds; r++) {
  for (const [name, fn] of r % 2 ? [['keyed', keyed], ['unkeyed', unkeyed]] : [['unkeyed', unkeyed], ['keyed', keyed]]) {
    samples[name].push(time(fn));
  }
}
monitor.stop();

const extra = summarize(samples.keyed.map((k, r) => k - samples.unkeyed[r]));
const fmt = (s) => `${s.median.toFixed(0)} ns (fastest ${s.min.toFixed(0)})`;
console.log(`rloop.scope() on node ${process.version}, ${rounds} rounds × ${calls.toLocaleString('en')} calls`);
console.log(`  without a key   ${fmt(summarize(samples.unkeyed))}`);
console.log(`  with a new key  ${fmt(summarize(samples.keyed))}`);
console.log(`  a key costs     ${extra.median.toFixed(0)} ns ±${extra.mad.toFixed(0)} (paired per round)`);

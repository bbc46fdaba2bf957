'use strict';
// Memory: 10 M async operations under ten scopes, two thirds of them promises that are never
// awaited (some settled, some pending forever), then full GCs: RSS must come back to where
// it was. An attribution that keeps per-resource state (a map, a tag that outlives its
// resource) would grow here.

const { SCOPES, inScopes } = require('./scoped');

const OPS = 3; // async operations per iteration of churn()
const MB = 1e6;
const noop = () => {};

async function churn(n) {
  for (let i = 0; i < n; i++) {
    Promise.resolve(i); // settled, never awaited
    new Promise(noop); // pending forever, never awaited
    await null;
    // A turn of the loop now and then: immediates, timers and rloop's idle mark get to run.
    if (i % 1024 === 1023) await new Promise(setImmediate);
  }
}

/** Memory after full GCs, with loop turns between them so finalizers and destroy hooks run. */
async function settledMemory() {
  for (let i = 0; i < 3; i++) {
    global.gc();
    await new Promise(setImmediate);
  }
  return process.memoryUsage();
}

async function run(cfg, events) {
  const iterations = Math.max(1, Math.round(events / OPS / SCOPES.length));
  await inScopes(cfg, churn, Math.max(1, Math.round(iterations / 10))); // warm-up
  const m0 = await settledMemory();
  const t0 = process.hrtime.bigint();
  await inScopes(cfg, churn, iterations);
  const ns = Number(process.hrtime.bigint() - t0);
  const m1 = await settledMemory();
  return {
    events: iterations * OPS * SCOPES.length,
    batches: [ns], // one: the claim is about all 10 M operations at once
    rssGrowthMB: (m1.rss - m0.rss) / MB,
    // Where RSS growth lives: the JS heap (a leak of objects), or outside it.
    growthMB: Object.fromEntries(['heapTotal', 'heapUsed', 'external'].map((k) => [k, (m1[k] - m0[k]) / MB])),
  };
}

module.exports = {
  name: 'memory',
  describe: (events) =>
    `${events.toLocaleString('en')} async operations (2/3 promises never awaited) under ${SCOPES.length} scopes, RSS after GC`,
  unit: 'ns/event',
  events: 1e7,
  scopes: SCOPES,
  configs: ['nohook', 'rloop'], // the claim is about rloop; no hook shows what Node itself keeps
  target: { rssGrowthMB: 10 },
  run,
};

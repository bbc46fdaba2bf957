'use strict';
// Shared by the in-process workloads: a step split over concurrent scopes, warmed up, then timed.

const SCOPES = Array.from({ length: 10 }, (_, i) => `s${i}`);
const WARMUP = 0.1; // of the timed events, run first in the same process

/** Runs `step(n)` once in each scope, all at once, so their callbacks interleave. */
function inScopes(cfg, step, perScope) {
  return Promise.all(SCOPES.map((name) => cfg.scope(name, () => step(perScope))));
}

/** Warm-up, a full GC, then `events` events timed with hrtime (wall time of the one thread). */
async function timeInScopes(cfg, step, events) {
  const perScope = Math.max(1, Math.round(events / SCOPES.length));
  await inScopes(cfg, step, Math.max(1, Math.round(perScope * WARMUP)));
  global.gc();
  const t0 = process.hrtime.bigint();
  await inScopes(cfg, step, perScope);
  const ns = Number(process.hrtime.bigint() - t0);
  return { events: perScope * SCOPES.length, ns };
}

module.exports = { SCOPES, WARMUP, inScopes, timeInScopes };

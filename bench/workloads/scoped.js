'use strict';
// Shared by the in-process workloads: a step split over ten scopes, warmed up, then timed in
// batches (each well over 10 ms at full scale) whose median is the sample's value.

const { BATCHES } = require('./batches');

const SCOPES = Array.from({ length: 10 }, (_, i) => `s${i}`);
const WIDTH = SCOPES.length; // chains at once in either order, so both run ten callbacks per loop turn

/**
 * Runs `perScope` events of `step` in each scope. Interleaved: every scope at once, one
 * chain each, so consecutive callbacks belong to different scopes. Grouped: one scope after
 * the other, WIDTH chains each, so consecutive callbacks belong to the same scope.
 */
async function inScopes(cfg, step, perScope, interleaved = true) {
  if (interleaved) return Promise.all(SCOPES.map((name) => cfg.scope(name, () => step(perScope))));
  const chains = () => Promise.all(Array.from({ length: WIDTH }, () => step(perScope / WIDTH)));
  for (const name of SCOPES) await cfg.scope(name, chains);
}

/** One batch of warm-up (`warmupEvents`), then `events` events in timed batches (wall time). */
async function timeInScopes(cfg, step, events, interleaved) {
  const perScope = WIDTH * Math.max(1, Math.round(events / SCOPES.length / BATCHES / WIDTH));
  await inScopes(cfg, step, perScope, interleaved);
  const batches = [];
  for (let b = 0; b < BATCHES; b++) {
    const t0 = process.hrtime.bigint();
    await inScopes(cfg, step, perScope, interleaved);
    batches.push(Number(process.hrtime.bigint() - t0));
  }
  return { events: perScope * SCOPES.length * BATCHES, warmupEvents: perScope * SCOPES.length, batches };
}

module.exports = { SCOPES, inScopes, timeInScopes };

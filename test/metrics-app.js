'use strict';
// An app for the Prometheus test: three scopes doing known busy work (10, 20 and 30 % of the
// loop), the truth measured here as it runs; on 'block', 2 s of blocked loop in scope 'blocker'.
// With argument 'rotate': topScopes 2, and on 'rotate' eight phases of 1 s, each one's scope
// busier than all before it (it overtakes them), then it answers with the phases' scopes.

const rloop = require('..');
const { busy } = require('./helpers');

const rotating = process.argv[2] === 'rotate';
const mon = rloop.start({ metrics: { port: 0, topScopes: rotating ? 2 : 50 } });
const started = performance.now();
const spun = { a: 0, b: 0, c: 0 };
const SHARE = { a: 10, b: 20, c: 30 }; // ms per 100 ms

if (!rotating) {
  setInterval(() => {
    for (const [name, ms] of Object.entries(SHARE)) spun[name] += rloop.scope(name, () => busy(ms));
  }, 100);
}

function rotate() {
  const phases = Array.from({ length: 8 }, (_, k) => `phase-${k}`);
  const started = performance.now();
  const tick = setInterval(() => {
    const k = Math.floor((performance.now() - started) / 1000);
    if (k >= phases.length) {
      clearInterval(tick);
      process.send({ phases });
    } else {
      rloop.scope(phases[k], () => busy(4 + 4 * k));
    }
  }, 100);
}

process.on('message', (m) => {
  if (m === 'rotate') rotate();
  if (m === 'truth') process.send({ spun, elapsedMs: performance.now() - started });
  if (m === 'block') {
    const ms = rloop.scope('blocker', () => busy(2000));
    process.send({ blockedMs: ms });
  }
});
process.send({ port: mon.metrics.port });

'use strict';
// An app for the Prometheus test: three scopes doing known busy work (10, 20 and 30 % of the
// loop), the truth measured here as it runs; on 'block', 2 s of blocked loop in scope 'blocker'.

const rloop = require('..');
const { busy } = require('./helpers');

const mon = rloop.start({ metrics: { port: 0 } });
const started = performance.now();
const spun = { a: 0, b: 0, c: 0 };
const SHARE = { a: 10, b: 20, c: 30 }; // ms per 100 ms

setInterval(() => {
  for (const [name, ms] of Object.entries(SHARE)) spun[name] += rloop.scope(name, () => busy(ms));
}, 100);

process.on('message', (m) => {
  if (m === 'truth') process.send({ spun, elapsedMs: performance.now() - started });
  if (m === 'block') {
    const ms = rloop.scope('blocker', () => busy(2000));
    process.send({ blockedMs: ms });
  }
});
process.send({ port: mon.metrics.port });

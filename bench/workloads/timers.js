'use strict';
// Timers created outside any scope, what automatic timer scopes name by call site
// (js/auto/timers.js): `timers` creates and fires setTimeout chains (a stack per chain's
// callback), `timers-fresh` the same with a new closure per timer (a stack per timer),
// `interval` only fires intervals created at warm-up (the name is their tag).

const { BATCHES } = require('./batches');

const CHAINS = 500; // timers due at once: one loop turn fires them all

/** CHAINS chains of `perChain` timers each; `fresh`: each timer's callback a new closure, so each takes a stack. */
function chains(perChain, fresh) {
  return Promise.all(Array.from({ length: CHAINS }, () => new Promise((resolve) => {
    let left = perChain;
    const tick = () => (--left > 0 ? setTimeout(fresh ? () => tick() : tick, 0) : resolve());
    setTimeout(tick, 0);
  })));
}

async function timed(events, step) {
  const per = Math.max(1, Math.round(events / BATCHES / CHAINS));
  await step(per);
  const batches = [];
  for (let b = 0; b < BATCHES; b++) {
    const cpu0 = process.cpuUsage();
    await step(per);
    const cpu = process.cpuUsage(cpu0);
    batches.push((cpu.user + cpu.system) * 1000); // CPU, not wall: timers wait for their time
  }
  return { events: per * CHAINS * BATCHES, warmupEvents: per * CHAINS, batches };
}

// CHAINS intervals of 1 ms, created at the first batch (the warm-up): later batches only fire them.
let intervals = null;
let left = 0;
let done = null;

/** Fires the intervals `per` times each. */
function fires(per) {
  left = per * CHAINS;
  const fired = new Promise((resolve) => (done = resolve));
  intervals ??= Array.from({ length: CHAINS }, () => setInterval(() => {
    if (left > 0 && --left === 0) done();
  }, 1));
  return fired;
}

const workload = (name, describe, step) => ({
  name,
  describe: (events) => `${events.toLocaleString('en')} ${describe}, no scope, CPU time`,
  unit: 'ns/event',
  events: 2e5,
  scopes: [],
  target: { overheadNs: 1000 }, // rloop's own, a timer created and fired unattributed
  configs: ['nohook', 'rloop', 'autotimers'],
  run: (cfg, events) => timed(events, step),
});

module.exports = [
  workload('timers', `setTimeout(0) created and fired, ${CHAINS} chains`, (per) => chains(per, false)),
  workload('timers-fresh', `setTimeout(0) of a new closure each, created and fired, ${CHAINS} chains`, (per) => chains(per, true)),
  workload('interval', `fires of ${CHAINS} setInterval(1 ms) created at warm-up`, fires),
];

'use strict';
// A test app whose truth is known: three scopes, each running its own named CPU function, their
// callbacks interleaved through setImmediate, promises and timers (nearly every callback switches
// scope), JSON.parse inside one of them, a key per call in another, unattributed work on timers outside any scope, and idle
// gaps. Every function measures the spans it ran.

const { performance } = require('node:perf_hooks');

let sink = 0;
// Arithmetic for about `n` thousand iterations, each function its own leaf in the profile.
function computeA(n) {
  let x = sink;
  for (let i = 0; i < n * 1000; i++) x = (x * 31 + i) % 1000003;
  sink = x;
}
function computeB(n) {
  let x = sink;
  for (let i = 0; i < n * 1000; i++) x = (x * 37 + i) % 1000003;
  sink = x;
}
function computeC(n) {
  let x = sink;
  for (let i = 0; i < n * 1000; i++) x = (x * 41 + i) % 1000003;
  sink = x;
}
function computeU(n) {
  let x = sink;
  for (let i = 0; i < n * 1000; i++) x = (x * 43 + i) % 1000003;
  sink = x;
}

/** Runs the app for `ms`; resolves to the ms each function measured itself running, by scope. */
function run(rloop, ms, { unit = 60 } = {}) {
  const spent = { computeA: 0, computeB: 0, computeC: 0, 'JSON.parse': 0, computeU: 0 };
  const timed = (fn, n) => {
    const t = performance.now();
    fn(n);
    spent[fn.name] += performance.now() - t;
  };
  const text = JSON.stringify(Array.from({ length: 150 }, (_, i) => ({ i, name: `item ${i}`, tags: ['x', 'y'] })));
  const parse = (t) => JSON.parse(t);
  Object.defineProperty(parse, 'name', { value: 'JSON.parse' });
  const end = performance.now() + ms;
  const going = () => performance.now() < end;
  // Bursts of 40 ms of interleaved work, then 10 ms idle.
  const pause = () => Math.floor(performance.now() / 50) % 5 === 4;
  const later = (fn) => (pause() ? setTimeout(fn, 10) : setImmediate(fn));
  return new Promise((resolve) => {
    let running = 3;
    const done = () => --running === 0 && (clearInterval(u), resolve(spent));
    rloop.scope('a', () => {
      const step = () => {
        timed(computeA, unit);
        if (going()) later(step);
        else done();
      };
      setImmediate(step);
    });
    rloop.scope('b', async () => {
      while (going()) {
        await null;
        timed(computeB, unit);
        await Promise.resolve();
        timed(parse, text);
        await new Promise(later);
      }
      done();
    });
    let steps = 0;
    rloop.scope('c', () => {
      const step = () => {
        // A key per call: its slot is another key's later, its scope stays c.
        rloop.scope('c', () => timed(computeC, 2 * unit), { key: `step ${++steps}` });
        if (going()) setTimeout(step, pause() ? 10 : 0);
        else done();
      };
      setTimeout(step, 0);
    });
    const u = setInterval(() => timed(computeU, unit), 3);
  });
}

module.exports = { run };

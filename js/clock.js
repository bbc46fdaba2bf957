'use strict';
// rloop's one time base, and converting between performance.now() and another monotonic
// clock read on this thread.

const { performance } = require('node:perf_hooks');

/**
 * Now, in epoch ms on the clock of every time rloop reports (windows, stalls, slow I/O, a
 * capture's start and end, heap samples): the monotonic clock from performance.timeOrigin, so
 * a step of the wall clock (NTP, a resumed VM) never moves one part of a report against another.
 */
function epochMs() {
  return performance.timeOrigin + performance.now();
}

/**
 * `read() - performance.now()`, in read()'s milliseconds, from the tightest of a few paired
 * readings: the pair with the least time between its two performance.now() calls wins.
 */
function offsetFrom(read) {
  let best = Infinity;
  let offset = 0;
  for (let i = 0; i < 7; i++) {
    const a = performance.now();
    const r = read();
    const b = performance.now();
    if (b - a < best) {
      best = b - a;
      offset = r - (a + b) / 2;
    }
  }
  return offset;
}

module.exports = { epochMs, offsetFrom };

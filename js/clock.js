'use strict';
// Converting between performance.now() and another monotonic clock read on this thread.

const { performance } = require('node:perf_hooks');

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

module.exports = { offsetFrom };

'use strict';
// rloop's one time base, its timers, and converting between its clock and another monotonic
// clock read on this thread.
//
// All read once, as rloop loads: an app's tests with fake timers (@sinonjs/fake-timers, as jest
// and sinon install it; node:test's mock.timers) replace performance.now, process.hrtime and
// the timers on the objects every module shares. rloop timed on them would charge fake time
// (a scope charged the clock.tick() inside it) and its own timers would sit on the app's fake
// clock: counted by clock.countTimers(), run by runAll(), never on their own.

const { performance } = require('node:perf_hooks');
const timers = require('node:timers');

/** performance.now(): ms on the monotonic clock since performance.timeOrigin. From the
 * prototype: fake timers define their own now() on the object, so this is real even when they
 * were installed before rloop loaded (its timers are not: load rloop first, as -r does). */
const now = Object.getPrototypeOf(performance).now.bind(performance);
const ORIGIN = performance.timeOrigin;
const hrtimeNs = process.hrtime.bigint;
const { setTimeout, clearTimeout } = timers;

/**
 * Now, in epoch ms on the clock of every time rloop reports (windows, stalls, slow I/O, a
 * capture's start and end, heap samples): the monotonic clock from performance.timeOrigin, so
 * a step of the wall clock (NTP, a resumed VM) never moves one part of a report against another.
 */
function epochMs() {
  return ORIGIN + now();
}

/**
 * `read() - now()`, in read()'s milliseconds, from the tightest of a few paired readings: the
 * pair with the least time between its two now() calls wins.
 */
function offsetFrom(read) {
  let best = Infinity;
  let offset = 0;
  for (let i = 0; i < 7; i++) {
    const a = now();
    const r = read();
    const b = now();
    if (b - a < best) {
      best = b - a;
      offset = r - (a + b) / 2;
    }
  }
  return offset;
}

module.exports = { now, epochMs, ORIGIN, hrtimeNs, offsetFrom, setTimeout, clearTimeout };

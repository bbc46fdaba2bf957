'use strict';
// rloop's own periodic work — memory samples, I/O overdue checks — run as the monitored loop
// wakes (js/attribution/charge.js atWake), never on a timer the app's hooks could see. Several users share
// the hot path's one slot; each says when it is next due.

const hooks = require('./hooks');
const { attempt } = require('../attempt');

const due = new Map(); // fn(now) -> the performance.now() time it is next due

function run(now) {
  let next = Infinity;
  for (const [fn, at] of due) {
    let then = at;
    if (now >= at) {
      then = attempt(fn, now) ?? Infinity; // one that threw asks again through wakeAt()
      if (due.has(fn)) due.set(fn, then);
    }
    next = Math.min(next, then);
  }
  return next === Infinity ? null : next;
}

/** Runs `fn(now)` at the first wake at or after `at` (default: the next wake); it returns its next time, or null. */
function wakeAt(fn, at = -Infinity) {
  due.set(fn, Math.min(due.get(fn) ?? Infinity, at));
  hooks.atWake(run, at); // not every wake: an I/O operation beginning asks for its deadline only
}

function stopWaking(fn) {
  due.delete(fn);
  if (due.size === 0) hooks.atWake(null);
}

module.exports = { wakeAt, stopWaking };

'use strict';
// rloop runs its own code inside the app's callbacks: async hooks, diagnostics channel
// subscribers, wrapped functions, work run as the loop wakes, process listeners, Node-RED's
// hooks. An exception of rloop's there must never reach the app: attempt() runs that code,
// swallows what it throws and counts it. The count is this thread's (module state is per
// thread), read by a capture for its report and by the I/O tracker.
//
// On the hot path (js/attribution/hooks.js): a plain call of fixed arity, so no closure or
// arguments array is made per call; callers pass what fn needs as arguments.

let count = 0;

/** `fn(a, b, c, d)`, or undefined if it threw (counted): callers give a fallback with `??`. */
function attempt(fn, a, b, c, d) {
  try {
    return fn(a, b, c, d);
  } catch {
    count++;
    return undefined;
  }
}

/** Exceptions of rloop's own swallowed on this thread so far. */
function swallowed() {
  return count;
}

module.exports = { attempt, swallowed };

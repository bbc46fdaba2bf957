'use strict';
// Shared by the tests: known busy work and waiting.

const { setTimeout: sleep } = require('node:timers/promises');

/** Spins the calling thread for `ms` milliseconds of wall time. */
function busy(ms) {
  const end = performance.now() + ms;
  let x = 0;
  while (performance.now() < end) x++;
  return x;
}

/** The window entry for scope `name`, or a zero entry when the scope was not charged. */
function scopeIn(window, name) {
  return window.scopes.find((s) => s.name === name) ?? { name, elu: 0, busyMs: 0, calls: 0 };
}

module.exports = { busy, sleep, scopeIn };

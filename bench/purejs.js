'use strict';
// The pure-JS reference attribution, the shape the Node-RED forum experiment used: a Map
// asyncId → scope filled in `init` and emptied in `destroy`, and performance.now() at every
// before/after to charge exclusive (self) time to the scope that was running. Like rloop, it
// tracks the current scope itself (no executionAsyncId() in init), so the comparison measures
// the design (Map + destroy + a clock read per switch), not a handicap.

const { createHook } = require('node:async_hooks');
const { performance } = require('node:perf_hooks');

function start() {
  const ROOT = { name: '(unattributed)', ms: 0 };
  const registry = new Map(); // name -> scope
  const scopeOf = new Map(); // asyncId -> scope
  const stack = [];
  let since = performance.now();
  let current = ROOT;

  function switchTo(scope) {
    const now = performance.now();
    current.ms += now - since;
    since = now;
    current = scope;
  }

  createHook({
    init(asyncId) {
      if (current !== ROOT) scopeOf.set(asyncId, current);
    },
    before(asyncId) {
      stack.push(current);
      switchTo(scopeOf.get(asyncId) ?? ROOT);
    },
    after() {
      switchTo(stack.pop() ?? ROOT); // empty when hooks were enabled inside this callback
    },
    destroy(asyncId) {
      scopeOf.delete(asyncId);
    },
  }).enable();

  return {
    scope(name, fn) {
      let s = registry.get(name);
      if (s === undefined) registry.set(name, (s = { name, ms: 0 }));
      const prev = current;
      switchTo(s);
      try {
        return fn();
      } finally {
        switchTo(prev);
      }
    },
    /** Busy ms per scope name, the running interval included. */
    busyMs() {
      switchTo(current);
      return new Map([...registry].map(([n, s]) => [n, s.ms]));
    },
  };
}

module.exports = { start };

'use strict';
// The configurations compared side by side. Each is set up in a fresh process before the
// workload runs, and gives the workload a `scope(name, fn)`; those that attribute report
// how much of the thread's busy time reached the workload's scopes.

const { createHook, AsyncLocalStorage } = require('node:async_hooks');
const { performance } = require('node:perf_hooks');

const noop = () => {};
// Keeps the clock reads of `clock` from being optimised away, in a typed array: a `let` holding
// a double would allocate a number at every read, a cost rloop's clock reads do not have.
const clockSink = new Float64Array(1);
let storeSink = null; // and the store reads of `hooks2als`
const unscoped = { scope: (name, fn) => fn(), attribution: () => null };

function emptyHooks(callbacks) {
  createHook(callbacks).enable();
  return unscoped;
}

/**
 * `busyMs()` gives busy ms per scope name. Busy time of the thread comes from
 * eventLoopUtilization(), the same independent yardstick for every configuration.
 */
function attributing(scope, busyMs) {
  const elu0 = performance.eventLoopUtilization();
  return {
    scope,
    attribution(names) {
      const busy = busyMs();
      const ms = names.map((n) => busy.get(n) ?? 0);
      const attributedMs = ms.reduce((a, b) => a + b, 0);
      return {
        scopes: ms.filter((x) => x > 0).length, // how many of `names` were charged anything
        attributedMs,
        share: attributedMs / performance.eventLoopUtilization(elu0).active,
      };
    },
  };
}

/** before+after reading a store every scope() entered: what finding the scope costs with no init. */
function storeHooks(clock) {
  const als = new AsyncLocalStorage();
  const before = clock ? () => { storeSink = als.getStore() ?? storeSink; clockSink[0] += performance.now(); } : () => { storeSink = als.getStore() ?? storeSink; };
  createHook({ before, after: noop }).enable();
  return { scope: (name, fn) => als.run(name, fn), attribution: () => null };
}

function pureJs() {
  const ref = require('./purejs').start();
  return attributing(ref.scope, ref.busyMs);
}

/** rloop's attribution alone (issue: core) or, with `full`, also its lag watchdog and I/O tracking. */
function rloop(full) {
  const rloop = require('..');
  const monitor = rloop.start(full ? {} : { lag: false, io: false });
  const busyMs = () => new Map(monitor.totals().scopes.map((s) => [s.name, s.busyMs]));
  return attributing((name, fn) => rloop.scope(name, fn), busyMs);
}

/** rloop with automatic scopes `kinds` and no scope() in the app; an automatic name `GET /r0` counts for scope `/r0`. */
function rloopAuto(kinds) {
  const monitor = require('..').start({ lag: false, io: false, autoScopes: kinds });
  if (kinds.timers) monitor.capture({ durationMs: 3600e3 }); // timers are named while a capture runs
  const busyMs = () => new Map(monitor.totals().scopes.map((s) => [s.name.replace(/^GET /, ''), s.busyMs]));
  return attributing((name, fn) => fn(), busyMs);
}

const CONFIGS = {
  nohook: { label: 'no hook', setup: () => unscoped },
  hooks3: { label: 'empty hooks: init+before+after', setup: () => emptyHooks({ init: noop, before: noop, after: noop }) },
  hooks4: {
    label: 'empty hooks: all four incl. destroy',
    setup: () => emptyHooks({ init: noop, before: noop, after: noop, destroy: noop }),
  },
  // Exact timing reads the clock at least once per change of scope: with every callback in
  // another scope, this is the least any exact attribution on async hooks can cost.
  clock: {
    label: 'empty hooks + a clock read per callback',
    setup: () => emptyHooks({ init: noop, before: () => { clockSink[0] += performance.now(); }, after: noop }),
  },
  // The floor of a design that propagates by AsyncContextFrame (Node ≥ 24) and needs no init:
  // timing hooks alone, and the same reading an AsyncLocalStorage store in `before`.
  hooks2: { label: 'empty hooks: before+after', setup: () => emptyHooks({ before: noop, after: noop }) },
  hooks2als: { label: 'empty hooks: before+after, getStore() in before', setup: () => storeHooks(false) },
  clock2: {
    label: 'empty before+after + a clock read per callback',
    setup: () => emptyHooks({ before: () => { clockSink[0] += performance.now(); }, after: noop }),
  },
  // The floor of that design when every callback changes scope: the store read and the clock.
  clock2als: { label: 'before+after, getStore() + a clock read in before', setup: () => storeHooks(true) },
  purejs: { label: 'pure-JS reference (Map+destroy+now)', setup: pureJs },
  rloop: { label: 'rloop', setup: () => rloop(false) },
  full: { label: 'rloop + lag watchdog + I/O tracking', setup: () => rloop(true) },
  autohttp: { label: 'rloop, automatic HTTP scopes instead of scope()', setup: () => rloopAuto({ http: true }) },
  autotimers: { label: 'rloop, automatic timer scopes', setup: () => rloopAuto({ timers: true }) },
};

module.exports = { CONFIGS, BASELINE: 'nohook', REFERENCE: 'purejs', SUBJECT: 'rloop', FULL: 'full' };

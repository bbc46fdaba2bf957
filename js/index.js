'use strict';
// The public API. Attribution is per thread: each thread (main or worker) starts its own.

const native = require('./native');
const hooks = require('./attribution/hooks');
const { Monitor } = require('./monitor');
const { startOptions, checkOptions, OPTIONS, scopeName, scopeKey } = require('./options');
const { describe, duration } = require('./validate');
const { WRITTEN } = require('./capture/options');
const heap = require('./capture/heap');
const { analyze } = require('./analyze');
const { compare } = require('./report/compare');
const { warnIfUnpatched } = require('./node-support');
const { pauseSampler } = require('./stalls/sampler');

let active = null; // this thread's running monitor

/** Starts attribution on this thread and returns its monitor. */
function start(options) {
  const opts = startOptions(options);
  if (active !== null) {
    throw new Error('rloop: already started on this thread; stop() the running monitor first');
  }
  active = new Monitor(opts, (m) => {
    if (active === m) active = null;
  });
  warnIfUnpatched();
  return active;
}

/** Runs `fn` with its busy time, and that of all async work it starts, charged to `name`. */
function scope(name, fn, options) {
  scopeName(name);
  if (typeof fn !== 'function') throw new TypeError(`rloop: scope() needs a function, got ${typeof fn}`);
  const key = scopeKey(options);
  if (active === null) return fn();
  return hooks.run(active.context(name, key), fn);
}

/**
 * Charges the rest of the current callback, and all it starts, to `name`. Returns what was
 * charged before, for restore().
 */
function enter(name, options) {
  scopeName(name);
  const key = scopeKey(options);
  return active === null ? hooks.UNATTRIBUTED : hooks.enter(active.context(name, key));
}

/** Charges what an enter() replaced again: the entry ends before its callback does. */
function restore(previous) {
  if (!hooks.isContext(previous)) throw new TypeError(`rloop: restore() needs what enter() returned, got ${describe(previous)}`);
  if (active !== null) hooks.restore(previous);
}

/** This thread's running monitor, or null. */
function monitor() {
  return active;
}

/** Every monitored thread's current (live) and last complete window, readable from any thread. */
function threads() {
  return native.threads();
}

module.exports = {
  start,
  scope,
  enter,
  restore,
  current: hooks.current,
  monitor,
  threads,
  heapStats: heap.stats,
  captureHeapSnapshot: heap.captureHeapSnapshot,
  analyze,
  compare,
  // Loaded on first use: most processes never render a page, or use these adapters.
  renderHtml: (report) => require('./report/html').renderHtml(report),
  promClient: (register, options) => require('./metrics/prom-client').promClient(register, options),
  otel: (meterProvider, options) => require('./metrics/otel').otel(meterProvider, options),
  otelLogs: (loggerProvider) => require('./logs/otel').otelLogs(active, loggerProvider),
  top: (options) => require('./top').top(options, { monitor, start }),
};

// For rloop attach's agent in a target that runs rloop (cli/attach/agent.js): what makes closing
// the inspector safe while a monitor runs. Keyed by a symbol, not enumerable: not public API.
Object.defineProperty(module.exports, Symbol.for('rloop.pauseSampler'), { value: pauseSampler });
// For zero-code use (register/), its one way in past the public API: its variables checked as
// start() and capture() check options, before anything starts; the options' table, which names
// the variables; how a duration is written as text; and the capture option that is told which
// files were written. Keyed by a symbol, not enumerable: not public API, so its shape can follow
// register/ without a major version.
Object.defineProperty(module.exports, Symbol.for('rloop.zeroCode'), { value: Object.freeze({ checkOptions, OPTIONS, duration, WRITTEN }) });

'use strict';
// Garbage collections by kind, for the metrics (src/metrics/gc.rs): Node's 'gc' performance
// entries, pushed to the addon a batch at a time. Observed only on a thread whose metrics are
// read (its monitor serves the endpoint, or an adapter was made there): Node delivers each
// batch through a setImmediate, an async resource the app's own hooks see.

const { PerformanceObserver, constants } = require('node:perf_hooks');
const { threadId } = require('node:worker_threads');
const native = require('../native');

// Node's kind of each entry, as an index into src/metrics/gc.rs KINDS (major, minor, incremental, weakcb).
const KIND = new Map([
  [constants.NODE_PERFORMANCE_GC_MAJOR, 0],
  [constants.NODE_PERFORMANCE_GC_MINOR, 1],
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL, 2],
  [constants.NODE_PERFORMANCE_GC_WEAKCB, 3],
]);

let users = 0;
let observer = null;
let failed = () => {};

/**
 * Observes this thread's collections until every user has called the returned `release()`.
 * `fail(e)`: where an error of rloop's own goes (the latest user's).
 */
function useGc(fail) {
  failed = fail;
  if (users++ === 0) observer = observe();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--users === 0) {
      observer.disconnect();
      observer = null;
    }
  };
}

function observe() {
  const o = new PerformanceObserver((list) => {
    try {
      const kinds = [];
      const seconds = [];
      for (const e of list.getEntries()) {
        const kind = KIND.get(e.detail?.kind);
        if (kind === undefined) continue;
        kinds.push(kind);
        seconds.push(e.duration / 1e3);
      }
      native.recordGc(threadId, kinds, seconds);
    } catch (e) {
      failed(e);
    }
  });
  o.observe({ entryTypes: ['gc'] });
  return o;
}

module.exports = { useGc };

'use strict';
// Sampling heap profiles of the calling thread through an in-process inspector session: V8
// records one allocation in about every `samplingIntervalBytes` bytes with its stack, a few
// percent of the cost of a heap snapshot and none of its memory. Objects collected since are
// kept, so the profile shows what was allocated (the churn a GC pays for), not what is live.

const { fromTable } = require('../validate');
const { onSession } = require('./profile');

// The options of capture({ heapProfile: { … } }), an entry of the capture table (js/capture/options.js).
const HEAP_PROFILE = Object.freeze([
  { name: 'samplingIntervalBytes', default: 32768, range: [1024, 1 << 30], unit: 'bytes', meaning: "bytes allocated between samples (V8's default)" },
]);
const DEFAULT_INTERVAL_BYTES = HEAP_PROFILE[0].default;

/** Heap profile options, defaults filled in; a bad value throws a TypeError or RangeError naming it. */
function heapProfileOptions(options) {
  return fromTable(HEAP_PROFILE, options, { what: 'heapProfile', prefix: 'heapProfile.' });
}

/**
 * Starts sampling this thread's allocations; returns `{ stop, stopSync }`, both giving V8's
 * sampling heap profile (`{ head, samples }`, the same one on repeated calls) and ending the session.
 */
function start(options) {
  const { samplingIntervalBytes } = heapProfileOptions(options);
  const sampling = { samplingInterval: samplingIntervalBytes, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
  return onSession([['HeapProfiler.enable'], ['HeapProfiler.startSampling', sampling]], 'HeapProfiler.stopSampling');
}

module.exports = { start, HEAP_PROFILE, heapProfileOptions, DEFAULT_INTERVAL_BYTES };

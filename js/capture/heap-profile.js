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

// V8 samples a thread's heap for one profile at a time, whatever the session: a second start
// is answered as if it began one, and its stop would end the first's. So one at a time here.
let sampling = false;

/** Whether a sampling heap profile of this thread runs (a capture's, or one pulled). */
function running() {
  return sampling;
}

/**
 * Starts sampling this thread's allocations; returns `{ stop, stopSync }`, both giving V8's
 * sampling heap profile (`{ head, samples }`, the same one on repeated calls) and ending the
 * session. Throws while another runs on this thread.
 */
function start(options) {
  const { samplingIntervalBytes } = heapProfileOptions(options);
  if (sampling) throw new Error('rloop: a sampling heap profile of this thread is running already; V8 takes one at a time');
  const params = { samplingInterval: samplingIntervalBytes, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
  const profile = onSession([['HeapProfiler.enable'], ['HeapProfiler.startSampling', params]], 'HeapProfiler.stopSampling', () => { sampling = false; });
  sampling = true;
  return profile;
}

module.exports = { start, running, HEAP_PROFILE, heapProfileOptions, DEFAULT_INTERVAL_BYTES };

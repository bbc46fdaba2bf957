'use strict';
// Sampling heap profiles of the calling thread through an in-process inspector session: V8
// records one allocation in about every `samplingIntervalBytes` bytes with its stack, a few
// percent of the cost of a heap snapshot and none of its memory. Objects collected since are
// kept, so the profile shows what was allocated (the churn a GC pays for), not what is live.

const { integerIn, plainObject, knownOnly } = require('../validate');
const { onSession } = require('./profile');

const DEFAULT_INTERVAL_BYTES = 32768; // V8's default
const INTERVAL_LIMITS = [1024, 1 << 30];

/** Heap profile options, defaults filled in; a bad value throws a TypeError or RangeError naming it. */
function heapProfileOptions(options) {
  const given = knownOnly('heapProfile', plainObject('heapProfile options', options), ['samplingIntervalBytes']);
  const { samplingIntervalBytes = DEFAULT_INTERVAL_BYTES } = given;
  return { samplingIntervalBytes: integerIn('samplingIntervalBytes', samplingIntervalBytes, INTERVAL_LIMITS) };
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

module.exports = { start, heapProfileOptions, DEFAULT_INTERVAL_BYTES };

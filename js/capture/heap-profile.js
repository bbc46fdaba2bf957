'use strict';
// Sampling heap profiles of the calling thread through an in-process inspector session: V8
// records one allocation in about every `samplingIntervalBytes` bytes with its stack, a few
// percent of the cost of a heap snapshot and none of its memory. Objects collected since are
// kept, so the profile shows what was allocated (the churn a GC pays for), not what is live.

const { integerIn, plainObject, knownOnly } = require('../validate');
const { post } = require('./profile');

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
  const { Session } = require('node:inspector'); // throws where Node has no inspector
  const session = new Session();
  session.connect();
  try {
    post(session, 'HeapProfiler.enable');
    post(session, 'HeapProfiler.startSampling', {
      samplingInterval: samplingIntervalBytes,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    });
  } catch (e) {
    session.disconnect();
    throw e;
  }
  let outcome = null;
  const stopSync = () => {
    if (outcome === null) {
      try {
        outcome = { profile: post(session, 'HeapProfiler.stopSampling').profile };
      } catch (error) {
        outcome = { error };
      } finally {
        session.disconnect();
      }
    }
    if (outcome.error) throw outcome.error;
    return outcome.profile;
  };
  return { stop: async () => stopSync(), stopSync };
}

module.exports = { start, heapProfileOptions, DEFAULT_INTERVAL_BYTES };

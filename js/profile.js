'use strict';
// CPU profiles of the calling thread (main or worker) through an in-process inspector session.
// The result is V8's raw profile, the content of a .cpuprofile file; js/analyze.js reads it.

const vm = require('node:vm');
const { offsetFrom } = require('./clock');
const { integerIn, plainObject, knownOnly } = require('./options');

const DEFAULT_INTERVAL_US = 100;
const INTERVAL_LIMITS = [10, 1e6];

// V8 reports no frame for JSON.parse/stringify (C++ builtins): their time lands on the caller,
// indistinguishable from the caller's own work. While a profile runs, both are replaced by
// wrappers compiled under this script URL, so their frames say what the work is. A function
// someone else put in their place is never replaced, nor removed.
const JSON_MARKER_URL = 'rloop:json';
const JSON_MARKER_SOURCE = `(function (parse, stringify) {
  return {
    'JSON.parse'(text, reviver) { return parse(text, reviver); },
    'JSON.stringify'(value, replacer, space) { return stringify(value, replacer, space); },
  };
})`;
const JSON_FUNCTIONS = ['parse', 'stringify'];
const jsonBuiltins = { parse: JSON.parse, stringify: JSON.stringify };

let jsonMarkers = null; // compiled on first use: { parse, stringify }
let profiling = 0; // this thread's running profiles

function compileJsonMarkers() {
  const compiled = vm.runInThisContext(JSON_MARKER_SOURCE, { filename: JSON_MARKER_URL });
  const m = compiled(jsonBuiltins.parse, jsonBuiltins.stringify);
  const markers = {};
  for (const name of JSON_FUNCTIONS) {
    markers[name] = m[`JSON.${name}`];
    // The profiler names frames from the source; code that reads .name sees the builtin's name.
    Object.defineProperty(markers[name], 'name', { value: name });
  }
  return markers;
}

function markJson() {
  if (profiling++ > 0) return;
  for (const name of JSON_FUNCTIONS) if (JSON[name] === jsonBuiltins[name]) JSON[name] = jsonMarkers[name];
}

function unmarkJson() {
  if (--profiling > 0) return;
  for (const name of JSON_FUNCTIONS) if (JSON[name] === jsonMarkers[name]) JSON[name] = jsonBuiltins[name];
}

/** Profile options, defaults filled in; a bad value throws a TypeError or RangeError naming it. */
function profileOptions(options) {
  const { intervalUs = DEFAULT_INTERVAL_US } = knownOnly('profile', plainObject('profile options', options), ['intervalUs']);
  return { intervalUs: integerIn('intervalUs', intervalUs, INTERVAL_LIMITS) };
}

/**
 * The answer to `method` on an in-process session. It comes synchronously (Node 20, 22 and 24,
 * main thread and workers), which lets a profile stop inside an 'exit' listener.
 */
function post(session, method, params) {
  let answer = null;
  session.post(method, params, (error, result) => {
    answer = { error, result };
  });
  if (answer === null) throw new Error(`rloop: the inspector did not answer ${method} synchronously`);
  if (answer.error) throw answer.error;
  return answer.result;
}

/**
 * Starts sampling this thread's stacks every `intervalUs` µs, with JSON.parse/stringify marked.
 * Resolves to `{ stop(), stopSync() }`: both give the raw V8 profile (the same one on repeated
 * calls), end the session and, with the thread's last profile, unmark JSON.
 */
async function start(options) {
  const { intervalUs } = profileOptions(options);
  const { Session } = require('node:inspector'); // throws where Node has no inspector
  jsonMarkers ??= compileJsonMarkers(); // before the profile starts: not the app's time
  const session = new Session();
  session.connect();
  try {
    post(session, 'Profiler.enable');
    post(session, 'Profiler.setSamplingInterval', { interval: intervalUs });
    post(session, 'Profiler.start');
  } catch (e) {
    session.disconnect();
    throw e;
  }
  markJson();
  let outcome = null; // { profile } or { error }, once stopped
  const stopSync = () => {
    if (outcome === null) {
      try {
        outcome = { profile: post(session, 'Profiler.stop').profile };
      } catch (error) {
        outcome = { error };
      } finally {
        unmarkJson();
        session.disconnect();
      }
    }
    if (outcome.error) throw outcome.error;
    return outcome.profile;
  };
  return { stop: async () => stopSync(), stopSync };
}

/**
 * µs to add to `performance.now() * 1000` to get the profile clock: profiles time samples in µs
 * of CLOCK_MONOTONIC, the clock of process.hrtime.
 */
function profileClockOffsetUs() {
  return offsetFrom(() => Number(process.hrtime.bigint()) / 1e6) * 1000;
}

module.exports = { start, profileOptions, profileClockOffsetUs, JSON_MARKER_URL };

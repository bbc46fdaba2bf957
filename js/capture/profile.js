'use strict';
// CPU profiles of the calling thread (main or worker) through an in-process inspector session.
// The result is V8's raw profile, the content of a .cpuprofile file; js/analyze/index.js reads it.

const { hrtimeNs, offsetFrom, ORIGIN } = require('../clock');
const { fromTable } = require('../validate');
const markers = require('./markers');
const { own } = require('./own-work');

// The options of capture({ profile: { … } }), an entry of the capture table (js/capture/options.js).
const PROFILE = Object.freeze([
  { name: 'intervalUs', default: 100, range: [10, 1e6], unit: 'µs', variable: 'RLOOP_PROFILE_INTERVAL_US', meaning: 'CPU sampling interval' },
]);
const DEFAULT_INTERVAL_US = PROFILE[0].default;

/** Profile options, defaults filled in; a bad value throws a TypeError or RangeError naming it. */
function profileOptions(options) {
  return fromTable(PROFILE, options, { what: 'profile', prefix: 'profile.' });
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
 * Starts sampling this thread's stacks every `intervalUs` µs, with JSON and RegExp builtins
 * marked (js/capture/markers.js).
 * Resolves to `{ stop(), stopSync() }`: both give the raw V8 profile (the same one on repeated
 * calls), end the session and, with the thread's last profile, unmark the builtins.
 */
async function start(options) {
  const { intervalUs } = profileOptions(options);
  return own(() => {
    markers.compile(); // before the profile starts: not the app's time
    const running = onSession(
      [['Profiler.enable'], ['Profiler.setSamplingInterval', { interval: intervalUs }], ['Profiler.start']],
      'Profiler.stop',
      markers.unmark,
    );
    markers.mark();
    return running;
  });
}

/**
 * A profiler on a new in-process session: posts each of `starting` (`[method, params]`), and
 * gives `{ stop(), stopSync() }`, both the `profile` of the answer to `stopping` (the same one on
 * repeated calls), ending the session; `stopped()` runs once then. Throws, the session ended,
 * where a start fails or Node has no inspector.
 */
function onSession(starting, stopping, stopped = () => {}) {
  const { Session } = require('node:inspector');
  const session = new Session();
  session.connect();
  try {
    for (const [method, params] of starting) post(session, method, params);
  } catch (e) {
    session.disconnect();
    throw e;
  }
  let outcome = null; // { profile } or { error }, once stopped
  const stopSync = () => {
    if (outcome === null) {
      own(() => {
        try {
          outcome = { profile: post(session, stopping).profile };
        } catch (error) {
          outcome = { error };
        } finally {
          stopped();
          session.disconnect();
        }
      });
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
  return offsetFrom(() => Number(hrtimeNs()) / 1e6) * 1000;
}

/**
 * A scope timeline as the monitor gives it (`{ transitions: [[performance.now() ms, scope,
 * key?]], routes, keysDropped }`) on the profile's clock, as analyze() takes it, with what
 * renderPprof() needs of the clocks: `{ scopeTimeline, routes, keysDropped, offsetUs, epochOffsetUs }`.
 */
function onProfileClock({ transitions, routes, keysDropped = 0 }) {
  const offsetUs = profileClockOffsetUs();
  const scopeTimeline = transitions.map((e) => (e.length > 2 ? [e[0] * 1000 + offsetUs, e[1], e[2]] : [e[0] * 1000 + offsetUs, e[1]]));
  return { scopeTimeline, routes, keysDropped, offsetUs, epochOffsetUs: ORIGIN * 1000 - offsetUs };
}

module.exports = { start, onSession, PROFILE, profileOptions, profileClockOffsetUs, onProfileClock, DEFAULT_INTERVAL_US };

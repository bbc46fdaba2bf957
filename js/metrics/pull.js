'use strict';
// CPU profiles pulled over the metrics endpoint, in Go's convention (GET
// /debug/pprof/profile?seconds=N: go tool pprof, Grafana Alloy's pyroscope.scrape, Parca). The
// server thread (src/metrics/pull.rs) asks this thread for one; it is taken as a capture's
// profile is, labelled by scope, and handed back as pprof. Nothing here may throw into the app:
// every failure is an answer to the client.

const { threadId } = require('node:worker_threads');
const { setTimeout } = require('../clock');
const native = require('../native');
const profiler = require('../capture/profile');
const { renderPprof } = require('../report/pprof');

// How late after the ask the loop may start a profile: past it the client has been told
// (or soon will be) that none came, and a profile nobody waits for would cost the app for nothing.
const START_WITHIN_MS = 5000;

/**
 * The function the server thread calls with `[id, seconds, asked]` (`asked`: its
 * native.monotonicMs()): it answers through `answer(id, status, contentType, body)`.
 * `recordTimeline()`: the monitor's scope timeline (js/monitor.js).
 */
function pullProfiles(answer, recordTimeline) {
  let taking = false;
  const fail = (id, status, why) => answer(id, status, 'text/plain; charset=utf-8', Buffer.from(`rloop: ${why}\n`));
  return ([id, seconds, asked]) => {
    if (native.monotonicMs() - asked > START_WITHIN_MS) return fail(id, '503 Service Unavailable', 'the event loop was blocked: the profile could not start in time');
    if (taking) return fail(id, '409 Conflict', 'a profile is being taken; one at a time');
    taking = true;
    take(seconds, recordTimeline).then(
      (pprof) => answer(id, '200 OK', 'application/octet-stream', pprof),
      (e) => fail(id, '500 Internal Server Error', `no profile: ${e.message}`),
    ).finally(() => { taking = false; });
    return undefined;
  };
}

/** A profile of this thread over `seconds`, as gzipped pprof labelled by scope. */
async function take(seconds, recordTimeline) {
  const takeTimeline = recordTimeline();
  let running;
  try {
    running = await profiler.start({ intervalUs: profiler.DEFAULT_INTERVAL_US });
  } catch (e) {
    takeTimeline();
    throw e;
  }
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000).unref());
  const profile = await running.stop();
  const { scopeTimeline, routes, epochOffsetUs } = profiler.onProfileClock(takeTimeline());
  return renderPprof(profile, { scopeTimeline, routes, thread: threadId, epochOffsetUs, periodUs: profiler.DEFAULT_INTERVAL_US });
}

module.exports = { pullProfiles };

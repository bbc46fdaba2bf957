'use strict';
// Profiles pulled over the metrics endpoint, in Go's convention (GET
// /debug/pprof/profile?seconds=N for CPU, /debug/pprof/heap?seconds=N for allocations: go tool
// pprof, Grafana Alloy's pyroscope.scrape, Parca). The server thread (src/metrics/pull.rs) asks
// this thread for one; it is taken as a capture's is, labelled by scope (a heap profile through
// a CPU profile of the same seconds, js/analyze/heap-profile.js), its frames at their original
// locations where the app has source maps (js/capture/source-maps.js), and handed back as pprof.
// Nothing here may throw into the app: every failure is an answer to the client.

const { threadId } = require('node:worker_threads');
const { setTimeout } = require('../clock');
const native = require('../native');
const profiler = require('../capture/profile');
const heapProfiler = require('../capture/heap-profile');
const { epochMs } = require('../clock');
const { renderPprof, renderHeapPprof } = require('../report/pprof');
const { attempt } = require('../attempt');
const { own } = require('../capture/own-work');
const { withOriginals } = require('../capture/source-maps');

// How late after the ask the loop may start a profile: past it the client has been told
// (or soon will be) that none came, and a profile nobody waits for would cost the app for nothing.
const START_WITHIN_MS = 5000;

/**
 * The function the server thread calls with `[id, kind, seconds, asked]` (`kind` 0 CPU, 1 heap;
 * `asked`: its native.monotonicMs()): it answers through `answer(id, status, contentType, body)`.
 * `recordTimeline()`: the monitor's scope timeline (js/monitor.js), without keys: the endpoint
 * exposes none, so a pulled profile has no `key` label.
 */
function pullProfiles(answer, recordTimeline) {
  let taking = false;
  // An answer that fails (the endpoint closed meanwhile) is dropped, and counted: the client
  // sees its connection close, and no rejection reaches the app.
  const give = (id, status, contentType, body) => {
    attempt(answer, id, status, contentType, body);
  };
  const fail = (id, status, why) => give(id, status, 'text/plain; charset=utf-8', Buffer.from(`rloop: ${why}\n`));
  return ([id, kind, seconds, asked]) => {
    if (native.monotonicMs() - asked > START_WITHIN_MS) return fail(id, '503 Service Unavailable', 'the event loop was blocked: the profile could not start in time');
    if (taking) return fail(id, '409 Conflict', 'a profile is being taken; one at a time');
    if (kind === 1 && heapProfiler.running()) return fail(id, '409 Conflict', "a capture's heap profile is being taken; V8 takes one at a time");
    taking = true;
    take(kind === 1, seconds, recordTimeline).then(
      (pprof) => give(id, '200 OK', 'application/octet-stream', pprof),
      (e) => fail(id, '500 Internal Server Error', `no profile: ${e.message}`),
    ).finally(() => { taking = false; });
    return undefined;
  };
}

/** A CPU profile (or with `heap`, a heap profile) of this thread over `seconds`, as gzipped pprof labelled by scope. */
async function take(heap, seconds, recordTimeline) {
  const startMs = epochMs();
  const takeTimeline = recordTimeline();
  let running;
  let heapRunning = null;
  try {
    if (heap) heapRunning = heapProfiler.start({});
    running = await profiler.start({ intervalUs: profiler.DEFAULT_INTERVAL_US });
  } catch (e) {
    heapRunning?.stopSync();
    takeTimeline();
    throw e;
  }
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000).unref());
  const heapProfile = heapRunning?.stopSync();
  const profile = await running.stop();
  return own(() => {
    const located = attempt(withOriginals, { profile, heapProfile }) ?? { profile, heapProfile };
    const { scopeTimeline, routes, epochOffsetUs } = profiler.onProfileClock(takeTimeline());
    if (!heap) return renderPprof(located.profile, { scopeTimeline, routes, thread: threadId, epochOffsetUs, periodUs: profiler.DEFAULT_INTERVAL_US });
    const span = { startMs, endMs: epochMs() };
    const cpu = { profile: located.profile, scopeTimeline };
    return renderHeapPprof(located.heapProfile, { cpu, routes, thread: threadId, samplingIntervalBytes: heapProfiler.DEFAULT_INTERVAL_BYTES, ...span });
  });
}

module.exports = { pullProfiles };

'use strict';
// The report object, schema rloop-report/1 (docs/report-schema.md): a pure function of what a
// capture collected. Renderers (json.js, html.js) are pure functions of the report.

const { redactStall } = require('../redact');

const { SCHEMA } = require('../schema');

function byBusy(a, b) {
  return b.busyMs - a.busyMs || (a.name < b.name ? -1 : 1);
}

/** Busy time per scope between two `Monitor.totals()` readings, as shares of `durationMs`. */
function eluBetween(before, after, durationMs) {
  const elu = (busyMs) => (durationMs > 0 ? Math.min(1, busyMs / durationMs) : 0);
  const was = new Map(before.scopes.map((s) => [s.name, s]));
  const scopes = [];
  for (const s of after.scopes) {
    const b = was.get(s.name);
    // Never below zero: a key moved to another scope (a request routed) takes its current
    // window's time and calls with it, so a scope's total may fall between two readings.
    const busyMs = Math.max(0, s.busyMs - (b ? b.busyMs : 0));
    const calls = Math.max(0, s.calls - (b ? b.calls : 0));
    if (busyMs > 0 || calls > 0) scopes.push({ name: s.name, busyMs, elu: elu(busyMs), calls });
  }
  const unattributedMs = after.unattributed.busyMs - before.unattributed.busyMs;
  const threadMs = after.thread.busyMs - before.thread.busyMs;
  // rloop's own work, apart from the app's busy time in the totals as in the windows.
  const rloopMs = (after.thread.rloopMs ?? 0) - (before.thread.rloopMs ?? 0);
  return {
    thread: { busyMs: threadMs, elu: elu(threadMs), ...(rloopMs > 0 && { rloopMs }) },
    unattributed: { busyMs: unattributedMs, elu: elu(unattributedMs), calls: after.unattributed.calls - before.unattributed.calls },
    scopes: scopes.sort(byBusy),
  };
}

/**
 * Lag over the capture from its windows: p99 and max are the worst window's. A histogram's p99
 * is the top of its bucket (1 % precision) and may read above the largest value recorded: it is
 * capped there.
 */
function lagSummary(windows) {
  const lags = windows.map((w) => w.lag).filter(Boolean);
  const maxMs = Math.max(0, ...lags.map((l) => l.maxMs));
  return {
    stalls: lags.reduce((n, l) => n + l.stalls, 0),
    stretches: lags.reduce((n, l) => n + l.stretches, 0),
    p99Ms: Math.min(maxMs, Math.max(0, ...lags.map((l) => Math.min(l.p99Ms, l.maxMs)))),
    maxMs,
  };
}

/**
 * @param c what a capture collected: { meta, windowMs, totalsBefore, totalsAfter, windows
 *   (rloop's own work apart in them and in the totals: `thread.rloopMs`), lag: { enabled, thresholdMs, events, dropped }, io: { enabled, thresholdMs, events, dropped,
 *   aggregates }, heap: { start, end, timeline, dropped, snapshot, startUp, afterGc }, profile, heapProfile }
 */
function buildReport(c) {
  const durationMs = c.meta.end - c.meta.start;
  const windows = c.windows;
  return {
    schema: SCHEMA,
    meta: { ...c.meta, durationMs },
    elu: { windowMs: c.windowMs, ...eluBetween(c.totalsBefore, c.totalsAfter, durationMs), windows },
    // Stall stacks come from the stack sampler as V8 gave them: their URLs may hold a query.
    lag: { ...c.lag, events: c.lag.events.map(redactStall), summary: lagSummary(windows) },
    io: c.io,
    heap: c.heap,
    profile: c.profile,
    heapProfile: c.heapProfile ?? null,
  };
}

/**
 * What the addon needs to finish a capture's report if the thread's JS cannot
 * (src/capture/report.rs: a signal while the loop is blocked, a worker terminated): the report as
 * known at the start, the totals it starts from, where to write the JSON, what it will lack (what
 * only JS holds) and whether a failure to write it is said on stderr.
 * @param c as for buildReport, without what is collected: { meta, windowMs, totalsBefore,
 *   lag: { enabled, thresholdMs }, io: { enabled, thresholdMs }, heapStats, profile, heapProfile }
 */
function reportDraft(c, path, say) {
  // Slow I/O events reach the addon as they come (src/capture/recording.rs); the aggregates do not.
  const missing = [c.io.enabled && 'io.aggregates', c.heapStats && 'heap', c.profile && 'profile', c.heapProfile && 'heapProfile'].filter(Boolean);
  const report = {
    schema: SCHEMA,
    meta: { ...c.meta, durationMs: 0 },
    elu: { windowMs: c.windowMs },
    lag: { ...c.lag, events: [], dropped: 0 },
    io: { ...c.io, events: [], dropped: 0, aggregates: [] },
    heap: null,
    profile: null,
    heapProfile: null,
  };
  return { report, totalsBefore: c.totalsBefore, path, missing, say };
}

module.exports = { SCHEMA, buildReport, reportDraft, eluBetween };

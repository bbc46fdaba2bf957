'use strict';
// The report object, schema rloop-report/1 (docs/report-schema.md): a pure function of what a
// capture collected. Renderers (json.js, html.js) are pure functions of the report.

const { redactStall } = require('../redact');
const { round } = require('../round');

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
  return {
    thread: { busyMs: threadMs, elu: elu(threadMs) },
    unattributed: { busyMs: unattributedMs, elu: elu(unattributedMs), calls: after.unattributed.calls - before.unattributed.calls },
    scopes: scopes.sort(byBusy),
  };
}

/**
 * `part` (`{ thread, unattributed }` of the capture or of a window, over `durationMs` from
 * `from` to `to`) less rloop's own work in it (`own`: [from, to] spans, epoch ms), which ran
 * outside every scope and so is never more than the unattributed time: the app's busy time,
 * with `thread.rloopMs` saying how much was left out.
 */
function withoutOwn(part, own, from, to, durationMs) {
  const overlap = own.reduce((sum, [a, b]) => sum + Math.max(0, Math.min(b, to) - Math.max(a, from)), 0);
  const ms = Math.min(overlap, part.unattributed.busyMs);
  if (!(ms > 0)) return part;
  const less = (b) => ({ ...b, busyMs: b.busyMs - ms, elu: durationMs > 0 ? Math.min(1, (b.busyMs - ms) / durationMs) : 0 });
  const unattributed = less(part.unattributed);
  // A scope entry's CPU time stays within its busy time (the thread's counts time outside callbacks too).
  if (Number.isFinite(unattributed.cpuMs)) unattributed.cpuMs = Math.min(unattributed.cpuMs, unattributed.busyMs);
  return { ...part, thread: { ...less(part.thread), rloopMs: round(ms, 1) }, unattributed };
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
 * @param c what a capture collected: { meta, windowMs, totalsBefore, totalsAfter, windows, own
 *   (the spans of rloop's own work, js/capture/own-work.js),
 *   lag: { enabled, thresholdMs, events, dropped }, io: { enabled, thresholdMs, events, dropped,
 *   aggregates }, heap: { start, end, timeline, dropped, snapshot, startUp }, profile, heapProfile }
 */
function buildReport(c) {
  const durationMs = c.meta.end - c.meta.start;
  const own = c.own ?? [];
  const windows = c.windows.map((w) => withoutOwn(w, own, w.start, w.end, w.durationMs));
  return {
    schema: SCHEMA,
    meta: { ...c.meta, durationMs },
    elu: { windowMs: c.windowMs, ...withoutOwn(eluBetween(c.totalsBefore, c.totalsAfter, durationMs), own, c.meta.start, c.meta.end, durationMs), windows },
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

'use strict';
// The numbers more than one part of the page states, computed once, so the summary cards, the
// diagnosis and each section agree: stalls (count, longest, p99), slow I/O by side, the
// profile's busy time (the basis of every CPU share), the capture's span, how much of a
// slow operation's wait the app's own stalls account for and how long they may have held its
// response, slow operations by target (incoming requests by route), and the heap's growth with
// the part that was the app's start-up.

const { list } = require('./context');
const { groupBy } = require('./aggregate');
const { finite, maxOf, ms } = require('./format');
const { round } = require('../round');

const INCOMING = 'http-in';
// What a stall's `rloopMs` was, in the words every voice uses.
const OWN_WORK = 'starting or stopping a CPU profile';

/**
 * Stalls of the capture: every one recorded (kept and dropped), the longest, p99 never above it.
 * A stall that would not have reached the threshold without rloop's own work in it (a CPU
 * profile starting: `rloopMs`) is rloop's, not the app's: it is in `own`, never in `events`,
 * the count or the longest.
 */
function stalls(report) {
  const lag = report.lag;
  const threshold = lag?.thresholdMs;
  const recorded = list(lag?.events).filter((e) => finite(e.lagMs) && finite(e.at));
  const isOwn = (e) => e.rloopMs > 0 && finite(threshold) && e.lagMs - e.rloopMs < threshold;
  const events = recorded.filter((e) => !isOwn(e));
  const own = recorded.filter(isOwn);
  const dropped = Math.max(0, Number(lag?.dropped) || 0);
  const s = lag?.summary ?? {};
  // The kept events are the stalls of the capture; the windows count only those inside a
  // complete window. A dropped stall may be the longest: the windows saw it (and may have seen
  // rloop's own, so the windows' figure serves only where a stall was dropped).
  let maxMs = maxOf(events, (e) => e.lagMs);
  if (dropped > 0 || recorded.length === 0) maxMs = Math.max(maxMs, finite(s.maxMs) ? s.maxMs : -Infinity);
  if (!finite(maxMs)) maxMs = null;
  // Over the threshold with no stall of the app's, the windows' p99 is rloop's own stall.
  const p99 = finite(s.p99Ms) && !(events.length + dropped === 0 && own.length > 0 && s.p99Ms >= threshold) ? s.p99Ms : null;
  return {
    enabled: Boolean(lag?.enabled),
    thresholdMs: threshold,
    events,
    own,
    recorded, // both: a slow operation's wait is held by any stall of the loop
    count: events.length + dropped,
    dropped,
    maxMs,
    stretches: s.stretches,
    p99Ms: p99 === null ? null : maxMs === null ? p99 : Math.min(p99, maxMs),
  };
}

/** Says the stalls that were rloop's own work, left out of the app's: '' when none. */
function ownStallsText(st) {
  if (st.own.length === 0) return '';
  const longest = st.own.reduce((a, e) => (e.lagMs > a.lagMs ? e : a));
  const one = st.own.length === 1;
  const what = one ? `1 stall of ${ms(longest.lagMs)} was` : `${st.own.length} stalls, the longest ${ms(longest.lagMs)}, were`;
  return `${what} mostly rloop's own work (${ms(longest.rloopMs)} ${OWN_WORK}) and ${one ? 'is' : 'are'} not counted as the app's.`;
}

/** Slow I/O apart by side: the app waiting on others (outgoing) and others waiting on the app (incoming). */
function slowIo(report) {
  const io = report.io;
  const events = list(io?.events).filter((e) => finite(e.durationMs));
  const outgoing = events.filter((e) => e.type !== INCOMING);
  const incoming = events.filter((e) => e.type === INCOMING);
  return {
    enabled: Boolean(io?.enabled),
    thresholdMs: io?.thresholdMs,
    events,
    outgoing,
    incoming,
    dropped: Math.max(0, Number(io?.dropped) || 0),
    maxOutMs: outgoing.length > 0 ? maxOf(outgoing, (e) => e.durationMs) : null,
    maxInMs: incoming.length > 0 ? maxOf(incoming, (e) => e.durationMs) : null,
  };
}

/** What a slow operation is listed under: an incoming request's route where known, else its target. */
function targetOf(e) {
  return e.route ?? e.target;
}

/** Slow operations grouped by type and `targetOf`, `groupBy`'s groups of their durations, the costliest first. */
function byTarget(events) {
  return groupBy(events, (e) => `${e.type}\0${targetOf(e)}`, (e) => e.durationMs);
}

/** The profile's busy (non-idle) time, ms: what every CPU share in the page is a share of. */
function busyMs(analysis) {
  const c = analysis?.categories;
  if (!c || typeof c !== 'object') return 0;
  return Object.entries(c).reduce((sum, [k, v]) => (k === 'idle' || !finite(v) ? sum : sum + v), 0);
}

/** A heavy function's share of busy time, %: its own field, or from its self time in older reports. */
function busyPercent(f, busy) {
  if (finite(f?.busyPercent)) return f.busyPercent;
  return busy > 0 && finite(f?.selfMs) ? round((100 * f.selfMs) / busy, 2) : null;
}

/** The capture's span in seconds from its start: [0, end], from meta.start/meta.end. */
function spanS(report, fallbackS = 0) {
  const m = report.meta ?? {};
  const d = finite(m.end) && finite(m.start) ? (m.end - m.start) / 1000 : Number(m.durationMs) / 1000;
  return finite(d) && d > 0 ? d : Math.max(0.001, fallbackS);
}

const merged = new WeakMap(); // stall events -> their spans merged, in time order

/**
 * The spans of `stallEvents` (from `at` for `lagMs`) in time order, overlapping ones merged
 * (stalls of one loop never overlap, but a hand-made or damaged report may hold any): `starts`,
 * `ends` and how many stalls each span holds.
 */
function spans(stallEvents) {
  let m = merged.get(stallEvents);
  if (m !== undefined) return m;
  const sorted = [...stallEvents].sort((a, b) => a.at - b.at);
  m = { starts: [], ends: [], counts: [] };
  for (const s of sorted) {
    const end = s.at + Math.max(0, s.lagMs);
    const last = m.ends.length - 1;
    if (last >= 0 && s.at < m.ends[last]) {
      m.ends[last] = Math.max(m.ends[last], end);
      m.counts[last]++;
    } else {
      m.starts.push(s.at);
      m.ends.push(end);
      m.counts.push(1);
    }
  }
  merged.set(stallEvents, m);
  return m;
}

/**
 * How long the loop was stalled during `events` (each from `at` for `durationMs`): `ms` summed
 * over the events, `stalls` the distinct stalls that overlapped any, and `events[i]` each one's
 * `{ ms, stalls }`.
 */
function stalledDuring(events, stallEvents) {
  const { starts, ends, counts } = spans(stallEvents);
  const hit = new Set();
  const each = events.map((e) => {
    const start = e.at;
    const end = e.at + e.durationMs;
    if (!finite(start) || !finite(end)) return { ms: 0, stalls: 0 };
    let lo = 0; // the first span that ends after `start`
    let hi = ends.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (ends[mid] <= start) lo = mid + 1;
      else hi = mid;
    }
    let ms = 0;
    let n = 0;
    for (let i = lo; i < starts.length && starts[i] < end; i++) {
      const overlap = Math.min(end, ends[i]) - Math.max(start, starts[i]);
      if (overlap > 0) {
        ms += overlap;
        n += counts[i];
        hit.add(i);
      }
    }
    return { ms, stalls: n };
  });
  let stalls = 0;
  for (const i of hit) stalls += counts[i];
  return { ms: each.reduce((sum, e) => sum + e.ms, 0), stalls, events: each };
}

const WOKE_MS = 5; // a stall that ended this close before the loop woke to read a response ran into that wake

/**
 * How much of each outgoing wait (`events`, each from `at` for `durationMs`, its end read then)
 * the app's own loop may have held its response: one is read at the first poll after it arrives,
 * so only the stall it arrived in delays it, and stalls that ended before it came held nothing.
 * Where the loop woke into the stretch that read it is known (`stretchMs` before the read), that
 * stall is one that ran up to the wake or holds the read; the response came no earlier than its
 * start (or the wait's; without one, the wake), no later than the read. Where the wake is not
 * known (older reports), the last stall begun before the read and ended at most `gapMs` before
 * it (the lag threshold: a stretch that is no stall is shorter). `heldMs` the most they may have
 * held, summed; `stalls` how many stalls may have held one. A pending operation's response was
 * never read: none held.
 */
function heldResponses(events, stallEvents, gapMs) {
  const { starts, ends, counts } = spans(stallEvents);
  const hit = new Set();
  let heldMs = 0;
  for (const e of events) {
    const read = e.at + e.durationMs;
    if (e.state === 'pending' || !finite(read)) continue;
    const woke = finite(e.stretchMs) ? read - Math.max(0, e.stretchMs) : null;
    let lo = 0; // the first span that starts at or after the read
    let hi = starts.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (starts[mid] < read) lo = mid + 1;
      else hi = mid;
    }
    const i = lo - 1;
    const ran = i >= 0 && (woke === null ? read - Math.min(read, ends[i]) <= gapMs : ends[i] >= woke - WOKE_MS);
    const from = ran ? Math.max(e.at, starts[i]) : woke ?? read;
    if (ran && read > from) hit.add(i);
    heldMs += Math.max(0, read - from);
  }
  let stalls = 0;
  for (const i of hit) stalls += counts[i];
  return { heldMs, stalls };
}

/**
 * Heap used's growth over the capture, bytes: `total`, and when the capture held the app's
 * start-up (`heap.startUp`), `startUp` the part up to its end and `after` the rest, the part a
 * leak would be in (else both null); `startUpAt` epoch ms of its end. NaN total without stats.
 * `kept`: what heap used hides under garbage, after start-up, `{ kind, from, to, grew, count }`:
 * after major GCs (`major`: what stayed live; with one such GC, `from` is the lowest heap used
 * before it, garbage included, so `grew` is at least what became live), else after minor GCs
 * (`minor`: what outlived the young generation); null with neither.
 */
function heapGrowth(report) {
  const heap = report.heap;
  const start = heap?.start?.heapUsed;
  const total = heap ? heap.end?.heapUsed - start : NaN;
  const up = heap?.startUp;
  const hasStartUp = finite(total) && finite(up?.heapUsed) && finite(up?.at);
  const kept = heap ? keptAfterGc(heap, hasStartUp ? up.at : -Infinity) : null;
  if (!hasStartUp) return { total, startUp: null, after: null, startUpAt: null, kept };
  return { total, startUp: up.heapUsed - start, after: heap.end.heapUsed - up.heapUsed, startUpAt: up.at, kept };
}

function keptAfterGc(heap, since) {
  const valid = (s) => finite(s?.at) && finite(s?.heapUsed) && s.at >= since;
  const after = (kind) => list(heap.afterGc?.[kind]?.samples).filter(valid);
  const between = (kind, samples) => {
    const from = samples[0];
    const to = samples[samples.length - 1];
    return { kind, from, to, grew: to.heapUsed - from.heapUsed, count: samples.length };
  };
  const major = after('major');
  if (major.length >= 2) return between('major', major);
  if (major.length === 1) {
    // Heap used before it held garbage too: what the GC kept above its lowest is at least that much more live.
    const [to] = major;
    const before = [heap.startUp, heap.start, ...list(heap.timeline)].filter((s) => valid(s) && s.at <= to.at);
    const from = before.reduce((low, s) => (low === null || s.heapUsed < low.heapUsed ? s : low), null);
    if (from !== null && to.heapUsed > from.heapUsed) return { kind: 'major', from, to, grew: to.heapUsed - from.heapUsed, count: 1 };
  }
  const minor = after('minor');
  return minor.length >= 2 ? between('minor', minor) : null;
}

module.exports = { stalls, ownStallsText, OWN_WORK, slowIo, targetOf, byTarget, busyMs, busyPercent, spanS, stalledDuring, heldResponses, heapGrowth, INCOMING };

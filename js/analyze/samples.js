'use strict';
// The pass over a profile's samples: self time per node, GC after user code, busy time per scope
// on the scope timeline; and the checks of what analyze() is given.

const { GC, IDLE } = require('./kinds');

const MAX_GAP = 2; // sampling intervals; see walkSamples
// The row of samples a timeline puts in no scope: the loop between rloop's idle mark and the
// next callback (polling, libuv's and Node's own work before a callback), not busy time.
const OUTSIDE = '(outside callbacks)';

/** Index into `timeline` of the transition in force at `t`, moving forward from `from`. */
function scopeAt(timeline, t, from) {
  let j = from;
  if (j >= 0 && timeline[j][0] > t) {
    // A sample earlier than the previous one (V8 may emit a few out of order): search again.
    let lo = -1;
    let hi = j;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (timeline[mid][0] <= t) lo = mid;
      else hi = mid;
    }
    return lo;
  }
  while (j + 1 < timeline.length && timeline[j + 1][0] <= t) j++;
  return j;
}

function checkTimeline(timeline) {
  if (!Array.isArray(timeline)) throw new TypeError('rloop: scopeTimeline must be an array of [timeUs, scope]');
  let last = -Infinity;
  for (const entry of timeline) {
    const ok = Array.isArray(entry) && Number.isFinite(entry[0]) && (entry[1] === null || entry[1] === false || typeof entry[1] === 'string');
    if (!ok) throw new TypeError('rloop: scopeTimeline entries must be [timeUs, scope name, null or false]');
    if (entry[0] < last) throw new RangeError('rloop: scopeTimeline must be sorted by time');
    last = entry[0];
  }
}

function checkProfile(profile) {
  const ok =
    profile !== null &&
    typeof profile === 'object' &&
    Array.isArray(profile.nodes) &&
    Array.isArray(profile.samples) &&
    Array.isArray(profile.timeDeltas) &&
    profile.samples.length === profile.timeDeltas.length &&
    Number.isFinite(profile.startTime) &&
    Number.isFinite(profile.endTime);
  if (!ok) throw new TypeError('rloop: analyze() needs a V8 CPU profile (nodes, samples, timeDeltas, startTime, endTime)');
}

/** The median gap between samples, from at most ~1000 of them: the profile's sampling interval. */
function typicalInterval(timeDeltas) {
  const step = Math.max(1, Math.floor(timeDeltas.length / 1000));
  const some = [];
  for (let i = 1; i < timeDeltas.length; i += step) some.push(timeDeltas[i]);
  some.sort((a, b) => a - b);
  return some.length > 0 ? some[some.length >> 1] : 0;
}

/**
 * How long each sample is charged, µs: the one gap rule that self time, scopes and long calls
 * (js/analyze/long-calls.js) share, so that their shares of busy time add up. A sample lasts until the
 * next one (as in DevTools), but a gap of more than MAX_GAP intervals (the sampler thread starved,
 * or its signal waited for a syscall) is charged in full only when the samples on both sides are
 * the same kind of work and no scope transition of the timeline falls in it (another callback ran
 * there); otherwise nobody knows what ran in it, and the sample is charged MAX_GAP intervals.
 */
function sampleSpans(profile, nodeIndex, category, timeline, intervalUs) {
  const { samples, timeDeltas, startTime, endTime } = profile;
  const maxGap = MAX_GAP * intervalUs;
  const spans = new Float64Array(samples.length);
  let at = -1;
  let t = startTime + (timeDeltas[0] ?? 0);
  for (let i = 0; i < samples.length; i++) {
    const last = i + 1 === samples.length;
    const next = last ? endTime : t + timeDeltas[i + 1];
    let us = Math.max(0, next - t);
    if (us > maxGap) {
      const otherWork = last || category[nodeIndex.get(samples[i + 1])] !== category[nodeIndex.get(samples[i])];
      if (timeline) at = scopeAt(timeline, t, at);
      if (otherWork || (timeline && scopeAt(timeline, next, at) !== at)) us = maxGap;
    }
    spans[i] = us;
    t = next;
  }
  return spans;
}

/**
 * One pass over the samples, each charged its span (sampleSpans): self time per node, GC
 * episodes per user function that ran just before them (allocations trigger GC), and busy time
 * per scope when a timeline is given.
 */
function walkSamples(profile, nodeIndex, { category, user }, fnOf, timeline, spans) {
  const { samples, timeDeltas, startTime, endTime } = profile;
  const nodeAt = (i) => {
    const node = nodeIndex.get(samples[i]);
    if (node === undefined) throw new RangeError(`rloop: profile sample ${i} names no node (${samples[i]})`);
    return node;
  };
  const self = new Float64Array(profile.nodes.length);
  const gcAfter = new Map(); // function -> GC episodes that started right after it ran
  const scopes = timeline ? new Map() : null; // scope name -> { samples, us, self: Map(node -> µs) }
  let previous = -1; // the previous sample's node
  let node = samples.length > 0 ? nodeAt(0) : -1;
  let at = -1;
  let t = startTime + (timeDeltas[0] ?? 0);
  for (let i = 0; i < samples.length; i++) {
    const last = i + 1 === samples.length;
    const nextNode = last ? -1 : nodeAt(i + 1);
    const next = last ? endTime : t + timeDeltas[i + 1];
    const cat = category[node];
    const us = spans[i];
    self[node] += us;
    if (cat === GC && previous >= 0 && category[previous] !== GC && category[previous] !== IDLE) {
      const fn = fnOf[user[previous] >= 0 ? user[previous] : previous];
      gcAfter.set(fn, (gcAfter.get(fn) ?? 0) + 1);
    }
    if (scopes && cat !== IDLE) {
      at = scopeAt(timeline, t, at);
      const scope = at >= 0 ? timeline[at][1] : null;
      const name = scope === false ? OUTSIDE : scope;
      let s = scopes.get(name);
      if (s === undefined) scopes.set(name, (s = { samples: 0, us: 0, busyUs: 0, self: new Map() }));
      s.samples++;
      s.us += us;
      s.self.set(node, (s.self.get(node) ?? 0) + us);
    }
    previous = node;
    node = nextNode;
    t = next;
  }
  // From the first sample: the profiler's start-up before it, in the scope that started it, has none.
  if (scopes) busyByScope(timeline, startTime + (timeDeltas[0] ?? 0), endTime, scopes);
  return { self, gcAfter, scopes };
}

/**
 * Adds to each scope's entry the busy time the timeline charges it from `startTime` to `endTime`: the
 * same transitions as the monitor's exclusive busy time, so where a scope's samples fall short of
 * it, the profile missed samples (the sampler thread waited for a core, a sample for a system call).
 */
function busyByScope(timeline, startTime, endTime, scopes) {
  const add = (name, us) => {
    let s = scopes.get(name);
    if (s === undefined) scopes.set(name, (s = { samples: 0, us: 0, busyUs: 0, self: new Map() }));
    s.busyUs += us;
  };
  if (timeline.length === 0 || timeline[0][0] > startTime) add(null, Math.max(0, Math.min(endTime, timeline[0]?.[0] ?? endTime) - startTime));
  for (let j = 0; j < timeline.length; j++) {
    const [from, scope] = timeline[j];
    const to = j + 1 < timeline.length ? timeline[j + 1][0] : endTime;
    const us = Math.min(to, endTime) - Math.max(from, startTime);
    if (scope !== false && us > 0) add(scope, us);
  }
}

module.exports = { OUTSIDE, checkTimeline, checkProfile, typicalInterval, scopeAt, sampleSpans, walkSamples };

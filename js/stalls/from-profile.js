'use strict';
// A stall's stack from the capture's CPU profile, when one ran. The profiler's signal stops the
// thread wherever it is — inside JSON.parse, a regex or C++ too — so its samples inside the
// stall's span show the blocker, where the stack sampler's interrupt waits for the next JS
// (src/stalls/blame.rs). Only samples in the scope the stall is charged to count: the stall's other
// scopes are listed in its `scopes`. The same samples, in order, tell what ran just before the
// blocker in the stall (`stackBefore`): how the loop got there, where the blocker's own stack
// names only its callers. Pure: no clock, no I/O.

const { isOwn } = require('../own');

// Samples are weighed by count, not by the time to the next one: a profiler starved of CPU on a
// busy machine samples sparsely, but each sample it takes is where the thread was.
const MIN_SAMPLES = 3; // of the heaviest frame; fewer leave the sampler's answer standing

/** The native work a profile category stands for, in the names src/stalls/blame.rs gives. */
const NATIVE_OF = { json: 'JSON', regex: 'regex', crypto: 'crypto', gc: 'GC' };

/**
 * The lag `events`, each stall with samples of its scope in `profile` given the heaviest of
 * them as `stack` (`stackFrom: 'profile'`), the native work they show as `native`, and the
 * stack of the code that ran in it just before the blocker as `stackBefore` (null: none did).
 * @param measured what js/analyze/index.js measured: `nodes`, `index` (id -> node), `parent`,
 *   `category` and `names`, `user` (nearest user frame per node), `own` (rloop's frames).
 * @param o `{ originMs, offsetUs, scopeTimeline, frameOf }`: epoch ms of performance.now() 0; µs
 *   from performance.now() µs to the profile clock; the sorted `[timeUs, scope]` changes on the
 *   profile clock that js/analyze/index.js takes; its frameOf.
 */
function profileStalls(events, profile, measured, o) {
  const spans = events
    // Samples per node, and the nodes in the order they were sampled (runs of one node as one).
    .map((e, i) => ({ i, e, from: (e.at - o.originMs) * 1000 + o.offsetUs, counts: new Map(), order: [] }))
    .filter((s) => Number.isFinite(s.from))
    .sort((a, b) => a.from - b.from);
  if (spans.length === 0) return events;
  collect(spans, profile, measured, o);
  const out = [...events];
  for (const s of spans) {
    const blame = heaviest(s, measured, o);
    if (blame) out[s.i] = { ...s.e, ...blame, stackFrom: 'profile' };
  }
  return out;
}

/** Per span, samples per profile node in the stall's own scope. */
function collect(spans, { samples, timeDeltas, startTime, endTime }, { index, category, names }, { scopeTimeline }) {
  const skip = new Set(['idle', 'program'].map((c) => names.indexOf(c)));
  const gc = names.indexOf('gc');
  let before = -1; // the span's last sample before a GC: the allocating code the GC ran for
  let k = 0;
  let t = startTime + (timeDeltas[0] ?? 0);
  for (let i = 0; i < samples.length && k < spans.length; i++) {
    const next = i + 1 < samples.length ? t + timeDeltas[i + 1] : endTime;
    while (k < spans.length && t >= spans[k].from + spans[k].e.lagMs * 1000) {
      k++;
      before = -1;
    }
    const s = spans[k];
    let node = index.get(samples[i]);
    if (s && t >= s.from && node !== undefined && !skip.has(category[node]) && scopeAt(scopeTimeline, t) === (s.e.scope ?? null)) {
      // A GC sample has no JS stack: it counts for the code that allocated, when the span saw it.
      if (category[node] !== gc) before = node;
      else if (before >= 0) node = before;
      s.counts.set(node, (s.counts.get(node) ?? 0) + 1);
      if (s.order[s.order.length - 1] !== node) s.order.push(node);
    }
    t = next;
  }
}

/** The scope in force at `t`: the last change at or before it (none yet: unattributed). */
function scopeAt(timeline, t) {
  let lo = -1;
  for (let hi = timeline.length; hi - lo > 1;) {
    const mid = (lo + hi) >> 1;
    if (timeline[mid][0] <= t) lo = mid;
    else hi = mid;
  }
  return lo >= 0 ? timeline[lo][1] : null;
}

/** The heaviest user frame's heaviest stack in a span, as `{ stack, native, stackBefore }`; null if too few samples. */
function heaviest({ counts, order }, measured, { frameOf }) {
  const { category, names, user } = measured;
  const byUser = new Map(); // nearest user frame (or the node, without one) -> samples
  for (const [node, n] of counts) {
    const key = user[node] >= 0 ? user[node] : node;
    byUser.set(key, (byUser.get(key) ?? 0) + n);
  }
  let top = -1;
  for (const [key, n] of byUser) if (top < 0 || n > byUser.get(top)) top = key;
  if (top < 0 || byUser.get(top) < MIN_SAMPLES) return null;
  let leaf = -1;
  for (const [node, n] of counts) if ((user[node] >= 0 ? user[node] : node) === top && (leaf < 0 || n > counts.get(leaf))) leaf = node;
  const stack = framesOf(leaf, measured, frameOf);
  const kind = names[category[leaf]];
  const zlib = stack.some((f) => f.url === 'node:zlib');
  const native = NATIVE_OF[kind] ?? (kind === 'sync-io' ? (stack.some((f) => f.url.includes('child_process')) ? 'child_process' : 'fs') : zlib ? 'zlib' : null);
  const before = leadIn(order, top, measured);
  return { stack, native, stackBefore: before < 0 ? null : framesOf(before, measured, frameOf) };
}

/** A node's stack, leaf first: not '(root)'; nor rloop's frames, its markers of builtins included (`native` names their work). */
function framesOf(leaf, { nodes, parent, own }, frameOf) {
  const stack = [];
  for (let j = leaf; j >= 0 && parent[j] >= 0; j = parent[j]) if (!own[j] && !isOwn(nodes[j].callFrame)) stack.push(frameOf(nodes[j].callFrame));
  return stack;
}

/**
 * The node sampled last before the first sample under `top` (the blocker's frame) that is
 * neither under it nor one of its callers, whose frames the blocker's stack already shows, nor
 * rloop's own work (its frames, and what they call before any app frame: the app's code in a
 * scope runs under rloop's wrapper); -1 when there is none: the stall began in the blocker.
 */
function leadIn(order, top, { parent, own, user }) {
  const callers = new Set();
  for (let j = top; j >= 0; j = parent[j]) callers.add(j);
  const under = (node) => {
    for (let j = node; j >= 0; j = parent[j]) if (j === top) return true;
    return false;
  };
  const rloops = (node) => {
    for (let j = node; j >= 0 && user[j] !== j; j = parent[j]) if (own[j] === 1) return true; // not its markers: the app's JSON.parse is the app's
    return false;
  };
  let before = -1;
  for (const node of order) {
    if (under(node)) return before;
    if (!callers.has(node) && !rloops(node)) before = node;
  }
  return -1;
}

module.exports = { profileStalls };

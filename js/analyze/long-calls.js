'use strict';
// Long calls in a CPU profile (for js/analyze/index.js): single calls of user functions that lasted the
// lag threshold or more, the calls that stall the loop whatever their share of the busy time.

const MISSED_SAMPLES = 1; // samples in a row without a call's frame that do not end it; see longCalls

/**
 * Single calls of user functions that lasted `thresholdUs` or more. A call is a run of samples
 * with the same call (profile node) of the function on the stack. GC inside it does not end it,
 * nor does one sample without its frame (V8 loses an inlined frame at some instructions: 1
 * sample in 20–50 of a busy loop); two do (a callee called again and again looks the same to a
 * sampler as one long call of it), and so does an idle sample: the loop polled. When a long call
 * holds a long call of a callee, the callee is the one that blocked: each long span is charged
 * to the innermost user function whose single call covers it.
 *
 * `classes`: per node its `category` and nearest `user` frame, `parent`, and `nodeIndex` (id ->
 * node); `gc` and `idle` the categories of those samples; `spans`, how long each sample is
 * charged (js/analyze/samples.js sampleSpans: the gap rule self time and scopes share).
 * @returns per node `{ calls, us, maxUs }`: `maxUs` the longest call, from its first sample to
 *   the end of its last; `us` the time charged to the samples of its long calls (so that shares
 *   of busy time stay shares).
 */
function longCalls(profile, { nodeIndex, category, user, parent, gc, idle }, thresholdUs, spans) {
  const { samples, timeDeltas, startTime, endTime } = profile;
  const userParent = (u) => (parent[u] >= 0 ? user[parent[u]] : -1);
  // User nodes on the stack, outermost first: { node, start, seen (end of its last sample),
  // charged (µs of its samples), missed (samples in a row without it), covered }.
  const open = [];
  const byNode = new Map();
  const chain = [];
  const close = (depth) => {
    while (open.length > depth) {
      const o = open.pop();
      const us = o.seen - o.start;
      const long = us >= thresholdUs;
      if (long && !o.covered) {
        const c = byNode.get(o.node) ?? { calls: 0, us: 0, maxUs: 0 };
        c.calls++;
        c.us += o.charged;
        c.maxUs = Math.max(c.maxUs, us);
        byNode.set(o.node, c);
      }
      if ((long || o.covered) && open.length > 0) open[open.length - 1].covered = true;
    }
  };
  let t = startTime + (timeDeltas[0] ?? 0);
  for (let i = 0; i < samples.length; i++) {
    const last = i + 1 === samples.length;
    const next = last ? endTime : t + timeDeltas[i + 1];
    const node = nodeIndex.get(samples[i]);
    const cat = category[node];
    const end = t + spans[i];
    if (cat === gc) {
      for (const o of open) o.seen = end;
      for (const o of open) o.charged += end - t;
    } else {
      chain.length = 0;
      for (let u = user[node]; u >= 0; u = userParent(u)) chain.push(u); // innermost first
      let k = 0;
      while (k < open.length && k < chain.length && open[k].node === chain[chain.length - 1 - k]) k++;
      if (k < chain.length || cat === idle) close(k); // another call below the common part, or the loop polled
      else {
        let keep = k; // frames missing from a sample or two are still running
        while (keep < open.length && open[keep].missed < MISSED_SAMPLES) keep++;
        close(keep);
        for (let j = k; j < open.length; j++) open[j].missed++;
      }
      for (let j = chain.length - 1 - k; j >= 0; j--) open.push({ node: chain[j], start: t, seen: end, charged: 0, missed: 0, covered: false });
      for (let j = 0; j < chain.length; j++) {
        open[j].seen = end;
        open[j].missed = 0;
      }
      for (const o of open) o.charged += end - t;
    }
    t = next;
  }
  close(0);
  return byNode;
}

/** Long calls merged by function, the costliest first. */
function longCallsByFunction(byNode, fnOf) {
  const byFn = new Map();
  for (const [node, c] of byNode) {
    const fn = fnOf[node];
    const f = byFn.get(fn);
    if (f === undefined) byFn.set(fn, { fn, ...c });
    else {
      f.calls += c.calls;
      f.us += c.us;
      f.maxUs = Math.max(f.maxUs, c.maxUs);
    }
  }
  return [...byFn.values()].sort((a, b) => b.us - a.us || b.maxUs - a.maxUs);
}

module.exports = { longCalls, longCallsByFunction };

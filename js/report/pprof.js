'use strict';
// CPU and sampling heap profiles as pprof (gzipped profile.proto, github.com/google/pprof), the
// format of `go tool pprof`, Pyroscope, Parca and speedscope, with what only rloop knows on each
// sample: the scope it ran in (label `scope`), the route when the scope is one of an HTTP
// server's (`route`), and the thread (`thread`: 0 the main thread, else the worker's threadId).
//
// CPU samples carry the time the report's analysis charges them (js/analyze/samples.js
// sampleSpans), so the pprof's totals by scope are the report's; the loop's idle samples are
// left out, as every CPU pprof does. Frames are named as the report names them (redacted URLs,
// builtins as '(builtin)'), rloop's own wrapper frames left out.

const zlib = require('node:zlib');
const { Profile, Sample, Location, Line, Function: PprofFunction, ValueType, Label, StringTable } = require('pprof-format');
const { frameOf, indexNodes, classify, IDLE } = require('../analyze/kinds');
const { heapScopes, sampleCounts, SEVERAL } = require('../analyze/heap-profile');
const { checkProfile, checkTimeline, typicalInterval, sampleSpans, scopeAt, OUTSIDE } = require('../analyze/samples');
const { OWN_SCHEME } = require('../own');

/** The string table, functions and locations of one pprof, and its encoding. */
class Builder {
  #strings = new StringTable();
  #functions = new Map(); // 'name\0file\0line' -> Function
  #locations = [];

  s(text) {
    return this.#strings.dedup(text);
  }

  /** A new location for `frame` (frameOf()'s shape), its function shared with every frame like it. */
  location({ functionName, url, line }) {
    const file = url.startsWith(OWN_SCHEME) ? '(builtin)' : url;
    const key = `${functionName}\0${file}\0${line}`;
    let f = this.#functions.get(key);
    if (f === undefined) {
      f = new PprofFunction({ id: this.#functions.size + 1, name: this.s(functionName), systemName: this.s(functionName), filename: this.s(file), startLine: line ?? 0 });
      this.#functions.set(key, f);
    }
    const loc = new Location({ id: this.#locations.length + 1, line: [new Line({ functionId: f.id, line: line ?? 0 })] });
    this.#locations.push(loc);
    return loc;
  }

  /** Labels for a sample: the thread's, and the scope's and route's when there is a scope. */
  labeller(thread, routes) {
    const threadLabel = new Label({ key: this.s('thread'), str: this.s(String(thread)) });
    const made = new Map(); // scope (name, null or false) -> Label[]
    return (scope) => {
      let l = made.get(scope);
      if (l === undefined) {
        l = [threadLabel];
        const name = scope === false ? OUTSIDE : scope;
        if (typeof name === 'string') l.push(new Label({ key: this.s('scope'), str: this.s(name) }));
        if (routes.has(name)) l.push(new Label({ key: this.s('route'), str: this.s(name) }));
        made.set(scope, l);
      }
      return l;
    };
  }

  /** The gzipped profile.proto of these samples; `types`: [type, unit] of each value. */
  encode({ types, period, samples, timeNanos, durationNanos }) {
    const valueType = ([type, unit]) => new ValueType({ type: this.s(type), unit: this.s(unit) });
    const pprof = new Profile({
      sampleType: types.map(valueType),
      sample: samples,
      location: this.#locations,
      function: [...this.#functions.values()],
      stringTable: this.#strings,
      timeNanos,
      durationNanos,
      periodType: valueType(period.type),
      period: period.value,
    });
    return zlib.gzipSync(pprof.encode());
  }
}

/**
 * The gzipped pprof of `profile` (V8's, as a .cpuprofile holds it). `scopeTimeline`: as
 * analyze() takes it; `routes`: the scope names that are HTTP routes; `thread`: threadId;
 * `epochOffsetUs`: epoch µs minus the profile's clock, for the profile's start time;
 * `periodUs`: the sampling interval asked for (default: the profile's median interval).
 */
function renderPprof(profile, { scopeTimeline = [], routes = new Set(), thread = 0, epochOffsetUs = 0, periodUs } = {}) {
  checkProfile(profile);
  checkTimeline(scopeTimeline);
  const { nodes, samples, timeDeltas, startTime, endTime } = profile;
  const tree = indexNodes(nodes);
  const cls = classify(nodes, tree);
  const intervalUs = typicalInterval(timeDeltas) || 1;
  const spans = sampleSpans(profile, tree.index, cls.category, scopeTimeline.length > 0 ? scopeTimeline : undefined, intervalUs);
  const b = new Builder();
  const labels = b.labeller(thread, routes);
  const locations = new Map(); // node index -> its Location, or null for a frame left out
  const locationOf = (j) => {
    if (!locations.has(j)) locations.set(j, cls.own[j] || tree.parent[j] < 0 ? null : b.location(frameOf(nodes[j].callFrame)));
    return locations.get(j);
  };
  const out = [];
  let at = -1;
  let t = startTime + (timeDeltas[0] ?? 0);
  for (let i = 0; i < samples.length; i++) {
    const node = tree.index.get(samples[i]);
    if (node === undefined) throw new RangeError(`rloop: profile sample ${i} names no node (${samples[i]})`);
    if (cls.category[node] !== IDLE) {
      if (scopeTimeline.length > 0) at = scopeAt(scopeTimeline, t, at);
      const stack = [];
      for (let j = node; j >= 0; j = tree.parent[j]) {
        const loc = locationOf(j);
        if (loc !== null) stack.push(loc.id);
      }
      out.push(new Sample({ locationId: stack, value: [1, Math.round(spans[i] * 1000)], label: labels(at >= 0 ? scopeTimeline[at][1] : null) }));
    }
    if (i + 1 < samples.length) t += timeDeltas[i + 1];
  }
  return b.encode({
    types: [['samples', 'count'], ['cpu', 'nanoseconds']],
    period: { type: ['cpu', 'nanoseconds'], value: (periodUs ?? intervalUs) * 1000 },
    samples: out,
    timeNanos: BigInt(Math.round(startTime + epochOffsetUs)) * 1000n,
    durationNanos: Math.round(Math.max(0, endTime - startTime) * 1000),
  });
}

/**
 * The gzipped pprof of a sampling heap profile (js/capture/heap-profile.js): bytes allocated and
 * samples per stack, labelled by scope where the CPU profile of the same span tells it
 * (js/analyze/heap-profile.js). `cpu`: `{ profile, scopeTimeline }` or null; `startMs`/`endMs`:
 * the span, epoch ms; the rest as renderPprof's.
 */
function renderHeapPprof(heapProfile, { cpu = null, routes = new Set(), thread = 0, samplingIntervalBytes, startMs, endMs }) {
  const b = new Builder();
  const labels = b.labeller(thread, routes);
  const counts = sampleCounts(heapProfile);
  const out = [];
  for (const { node, stack, scope } of heapScopes(heapProfile, cpu)) {
    if (!(node.selfSize > 0)) continue;
    const known = scope === undefined || scope === SEVERAL ? null : scope; // no scope label where none is known
    out.push(new Sample({ locationId: stack.map((f) => b.location(f).id), value: [counts.get(node.id) ?? 0, Math.round(node.selfSize)], label: labels(known) }));
  }
  return b.encode({
    types: [['alloc_objects', 'count'], ['alloc_space', 'bytes']],
    period: { type: ['space', 'bytes'], value: samplingIntervalBytes },
    samples: out,
    timeNanos: BigInt(Math.round(startMs)) * 1000000n,
    durationNanos: Math.round(Math.max(0, endMs - startMs) * 1e6),
  });
}

module.exports = { renderPprof, renderHeapPprof };

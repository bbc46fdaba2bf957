'use strict';
// CPU and sampling heap profiles as pprof (gzipped profile.proto, github.com/google/pprof), the
// format of `go tool pprof`, Pyroscope, Parca and speedscope, with what only rloop knows on each
// sample: the scope it ran in (label `scope`), the route when the scope is one of an HTTP
// server's (`route`), the key when it ran in a keyed context and the timeline has it (`key`:
// a capture's has, a pulled profile's never), and the thread (`thread`: 0 the main thread, else
// the worker's threadId).
//
// CPU samples carry the time the report's analysis charges them (js/analyze/samples.js
// sampleSpans), so the pprof's totals by scope are the report's; the loop's idle samples are
// left out, as every CPU pprof does. Frames are named as the report names them (redacted URLs,
// builtins as '(builtin)', the original location where the app has source maps), rloop's own
// wrapper frames left out; a file: URL as its path, the source file `go tool pprof -list` reads.
// pprof has no place for a frame's generated location (a second Line is an inlined call): the
// JSON report keeps it.

const zlib = require('node:zlib');
const { fileURLToPath } = require('node:url');
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
    const file = url.startsWith(OWN_SCHEME) ? '(builtin)' : sourceFile(url);
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

  /** Labels for a sample: the thread's, the scope's and route's when there is a scope, and the key's when there is one. */
  labeller(thread, routes) {
    const threadLabel = new Label({ key: this.s('thread'), str: this.s(String(thread)) });
    const made = new Map(); // scope (name, null or false) -> Label[]
    const keyed = new Map(); // scope -> key -> Label[]
    const ofScope = (scope) => {
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
    return (scope, key) => {
      if (key === undefined) return ofScope(scope);
      if (!keyed.has(scope)) keyed.set(scope, new Map());
      const byKey = keyed.get(scope);
      let l = byKey.get(key);
      if (l === undefined) byKey.set(key, (l = [...ofScope(scope), new Label({ key: this.s('key'), str: this.s(key) })]));
      return l;
    };
  }

  /**
   * The gzipped profile.proto of these samples; `types`: [type, unit] of each value; `comments`:
   * lines `go tool pprof -comments` shows.
   */
  encode({ types, period, samples, timeNanos, durationNanos, comments = [] }) {
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
      comment: comments.map((c) => this.s(c)),
    });
    return zlib.gzipSync(pprof.encode());
  }
}

/** A frame's URL as pprof's file name: a file: URL's path, any other URL as it is (node:fs). */
function sourceFile(url) {
  try {
    return url.startsWith('file:') ? fileURLToPath(url) : url;
  } catch {
    return url;
  }
}

/** What the file says of keys the timeline dropped (js/attribution/timeline.js): their samples have a scope but no `key`. */
function keyComments(keysDropped) {
  return keysDropped > 0 ? [`rloop: ${keysDropped} changes of scope past the distinct keys kept have no key label`] : [];
}

/**
 * The gzipped pprof of `profile` (V8's, as a .cpuprofile holds it). `scopeTimeline`: as
 * analyze() takes it, an entry's third element the key of a keyed context; `routes`: the scope
 * names that are HTTP routes; `keysDropped`: the timeline's; `thread`: threadId;
 * `epochOffsetUs`: epoch µs minus the profile's clock, for the profile's start time;
 * `periodUs`: the sampling interval asked for (default: the profile's median interval).
 */
function renderPprof(profile, { scopeTimeline = [], routes = new Set(), keysDropped = 0, thread = 0, epochOffsetUs = 0, periodUs } = {}) {
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
      const label = at >= 0 ? labels(scopeTimeline[at][1], scopeTimeline[at][2]) : labels(null);
      out.push(new Sample({ locationId: stack, value: [1, Math.round(spans[i] * 1000)], label }));
    }
    if (i + 1 < samples.length) t += timeDeltas[i + 1];
  }
  return b.encode({
    types: [['samples', 'count'], ['cpu', 'nanoseconds']],
    period: { type: ['cpu', 'nanoseconds'], value: (periodUs ?? intervalUs) * 1000 },
    samples: out,
    timeNanos: BigInt(Math.round(startTime + epochOffsetUs)) * 1000n,
    durationNanos: Math.round(Math.max(0, endTime - startTime) * 1000),
    comments: keyComments(keysDropped),
  });
}

/**
 * The timeline with each entry's scope and key as one value, the same object for the same pair,
 * for heapScopes() to compare: the pair it gives a stack is the one its CPU samples all ran in.
 * Null where no entry has a key.
 */
function keyedTimeline(scopeTimeline) {
  if (!scopeTimeline.some((e) => e[2] !== undefined)) return null;
  const pairs = new Map(); // scope -> key -> { scope, key }
  return scopeTimeline.map(([t, scope, key]) => {
    if (!pairs.has(scope)) pairs.set(scope, new Map());
    const byKey = pairs.get(scope);
    if (!byKey.has(key)) byKey.set(key, { scope, key });
    return [t, byKey.get(key)];
  });
}

/**
 * The gzipped pprof of a sampling heap profile (js/capture/heap-profile.js): bytes allocated and
 * samples per stack, labelled by scope, and key, where the CPU profile of the same span tells
 * it (js/analyze/heap-profile.js). `cpu`: `{ profile, scopeTimeline }` or null; `startMs`/`endMs`:
 * the span, epoch ms; the rest as renderPprof's.
 */
function renderHeapPprof(heapProfile, { cpu = null, routes = new Set(), keysDropped = 0, thread = 0, samplingIntervalBytes, startMs, endMs }) {
  const b = new Builder();
  const labels = b.labeller(thread, routes);
  const counts = sampleCounts(heapProfile);
  const byKey = cpu === null ? null : keyedTimeline(cpu.scopeTimeline);
  // The same nodes in the same order: a node's key is known where its one (scope, key) pair is.
  const pairs = byKey === null ? null : heapScopes(heapProfile, { profile: cpu.profile, scopeTimeline: byKey });
  const out = [];
  heapScopes(heapProfile, cpu).forEach(({ node, stack, scope }, i) => {
    if (!(node.selfSize > 0)) return;
    const known = scope === undefined || scope === SEVERAL ? null : scope; // no scope label where none is known
    const pair = pairs?.[i].scope;
    const key = known !== null && typeof pair === 'object' && pair !== null ? pair.key : undefined;
    out.push(new Sample({ locationId: stack.map((f) => b.location(f).id), value: [counts.get(node.id) ?? 0, Math.round(node.selfSize)], label: labels(known, key) }));
  });
  return b.encode({
    types: [['alloc_objects', 'count'], ['alloc_space', 'bytes']],
    period: { type: ['space', 'bytes'], value: samplingIntervalBytes },
    samples: out,
    timeNanos: BigInt(Math.round(startMs)) * 1000000n,
    durationNanos: Math.round(Math.max(0, endMs - startMs) * 1e6),
    comments: keyComments(keysDropped),
  });
}

module.exports = { renderPprof, renderHeapPprof };

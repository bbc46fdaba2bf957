'use strict';
// A CPU profile as pprof (gzipped profile.proto, github.com/google/pprof), the format of
// `go tool pprof`, Pyroscope, Parca and speedscope, with what only rloop knows on each sample:
// the scope it ran in (label `scope`), the route when the scope is one of an HTTP server's
// (`route`), and the thread (`thread`: 0 the main thread, else the worker's threadId).
//
// Samples carry the time the report's analysis charges them (js/analyze/samples.js sampleSpans),
// so the pprof's totals by scope are the report's. The loop's idle samples are left out, as
// every CPU pprof does; frames are named as the report names them (redacted URLs, builtins as
// '(builtin)') and rloop's own wrapper frames left out.

const zlib = require('node:zlib');
const { Profile, Sample, Location, Line, Function: PprofFunction, ValueType, Label, StringTable } = require('pprof-format');
const { frameOf, indexNodes, classify, IDLE } = require('../analyze/kinds');
const { checkProfile, checkTimeline, typicalInterval, sampleSpans, scopeAt, OUTSIDE } = require('../analyze/samples');
const { OWN_SCHEME } = require('../own');

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

  const strings = new StringTable();
  const s = (text) => strings.dedup(text);
  const functions = new Map(); // 'name\0file\0line' -> Function
  const locations = new Map(); // node index -> Location, or null for a frame left out

  const functionOf = ({ functionName, url, line }) => {
    const file = url.startsWith(OWN_SCHEME) ? '(builtin)' : url;
    const key = `${functionName}\0${file}\0${line}`;
    let f = functions.get(key);
    if (f === undefined) {
      f = new PprofFunction({ id: functions.size + 1, name: s(functionName), systemName: s(functionName), filename: s(file), startLine: line ?? 0 });
      functions.set(key, f);
    }
    return f;
  };
  const locationOf = (j) => {
    let loc = locations.get(j);
    if (loc === undefined) {
      const frame = frameOf(nodes[j].callFrame);
      loc = cls.own[j] || tree.parent[j] < 0 ? null : new Location({ id: locations.size + 1, line: [new Line({ functionId: functionOf(frame).id, line: frame.line ?? 0 })] });
      locations.set(j, loc);
    }
    return loc;
  };

  const labelsOf = new Map(); // scope (name, null or false) -> Label[]
  const threadLabel = new Label({ key: s('thread'), str: s(String(thread)) });
  const labels = (scope) => {
    let l = labelsOf.get(scope);
    if (l === undefined) {
      l = [threadLabel];
      const name = scope === false ? OUTSIDE : scope;
      if (typeof name === 'string') l.push(new Label({ key: s('scope'), str: s(name) }));
      if (routes.has(name)) l.push(new Label({ key: s('route'), str: s(name) }));
      labelsOf.set(scope, l);
    }
    return l;
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

  const pprof = new Profile({
    sampleType: [new ValueType({ type: s('samples'), unit: s('count') }), new ValueType({ type: s('cpu'), unit: s('nanoseconds') })],
    sample: out,
    location: [...locations.values()].filter((l) => l !== null),
    function: [...functions.values()],
    stringTable: strings,
    timeNanos: BigInt(Math.round(startTime + epochOffsetUs)) * 1000n,
    durationNanos: Math.round(Math.max(0, endTime - startTime) * 1000),
    periodType: new ValueType({ type: s('cpu'), unit: s('nanoseconds') }),
    period: (periodUs ?? intervalUs) * 1000,
  });
  return zlib.gzipSync(pprof.encode());
}

module.exports = { renderPprof };

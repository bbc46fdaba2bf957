'use strict';
// Analysis of a sampling heap profile (js/capture/heap-profile.js): bytes allocated by function
// and, given a CPU profile of the same span with its scope timeline, by scope.
//
// V8 records no time with an allocation sample, so its scope comes from the CPU profile: the
// scopes of the CPU samples taken in the same call stack (the same chain of frames from the
// root) or below it; where the CPU profile never sampled that stack, those of its longest
// prefix it did sample (the callers it ran under). One scope there: the allocation is that
// scope's. Several: they shared the code, and it is not split by a guess. None (no prefix
// known, not even the root): the scope is not known. Each is said as such.

const path = require('node:path');
const { pathToFileURL } = require('node:url');
const { frameOf, indexNodes } = require('./kinds');
const { scopeAt, OUTSIDE } = require('./samples');
const { packageOfFrame } = require('./packages');
const { percent: share } = require('./units');
const { isOwn, isLibrary, JSON_MARKER_URL, REGEX_MARKER_URL } = require('../own');

const FUNCTIONS = 20;
const SEVERAL = Symbol('several scopes');

/** rloop's markers of the builtins (JSON.parse, the RegExp methods): whoever calls them allocates. */
const isMarker = (frame) => frame.url === JSON_MARKER_URL || frame.url === REGEX_MARKER_URL;

/** `functionName url line column`: a frame as both profiles name it. */
const frameKey = ({ functionName, url, lineNumber, columnNumber }) => `${functionName}\u0000${url}\u0000${lineNumber}\u0000${columnNumber}`;

/**
 * Interns call chains of the app's frames: the id of a frame under the chain `parent` (-1: the
 * root's). Node's, libraries' and rloop's frames add nothing to a chain: V8 inlines some of
 * them in one profile and not the other, and a scope is told by the app's code that ran.
 */
class Chains {
  #ids = new Map();
  id(parent, frame, add) {
    if (parent === null || isOwn(frame) || isLibrary(frame)) return parent;
    const k = `${parent}\u0000${frameKey(frame)}`;
    let id = this.#ids.get(k);
    if (id === undefined && add) this.#ids.set(k, (id = this.#ids.size));
    return id ?? null;
  }
}

/**
 * The scope of the CPU samples at or below each call chain of `profile`: chain id → a scope
 * name, null (unattributed), false (the loop outside callbacks) or SEVERAL; chains never
 * sampled are absent.
 */
function scopesByChain(profile, scopeTimeline, chains) {
  const { nodes, samples, timeDeltas } = profile;
  const tree = indexNodes(nodes);
  const chainOf = new Int32Array(nodes.length);
  for (const i of tree.order) chainOf[i] = chains.id(tree.parent[i] < 0 ? -1 : chainOf[tree.parent[i]], nodes[i].callFrame, true);
  const at = new Map(); // node index -> scope of its own samples
  const merge = (map, key, scope) => {
    const had = map.get(key);
    map.set(key, had === undefined || had === scope ? scope : SEVERAL);
  };
  let j = -1;
  let t = profile.startTime + (timeDeltas[0] ?? 0);
  for (let i = 0; i < samples.length; i++) {
    const node = tree.index.get(samples[i]);
    j = scopeAt(scopeTimeline, t, j);
    const scope = j >= 0 ? scopeTimeline[j][1] : null;
    if (node !== undefined) merge(at, node, scope);
    if (i + 1 < samples.length) t += timeDeltas[i + 1];
  }
  const byChain = new Map();
  for (let k = tree.order.length - 1; k >= 0; k--) { // children before parents
    const i = tree.order[k];
    const scope = at.get(i);
    if (scope === undefined) continue;
    merge(byChain, chainOf[i], scope);
    if (tree.parent[i] >= 0) merge(at, tree.parent[i], scope);
  }
  return byChain;
}

/**
 * Every node of a heap profile's tree, parents first: `{ node, parent, frame, stack, chain, own }`,
 * `frame` its call frame as the CPU profile names it (a file URL where the heap profile gives a
 * CommonJS module's path), `stack` the frames from it to the root (frameOf()'s shape, rloop's
 * wrappers and the root left out), `chain` its chain id or null, `own` whether it allocates for
 * rloop: the innermost frame on its stack that is not Node's is rloop's own (Node's inspector
 * answering rloop's profiler, say; not the app's code that rloop's scope() runs).
 */
function heapNodes(head, chains) {
  const out = [];
  const stack = [[head, null, -1, false, []]];
  while (stack.length > 0) {
    const [node, parent, parentChain, parentOwn, above] = stack.pop();
    const { url } = node.callFrame;
    const frame = path.isAbsolute(url) ? { ...node.callFrame, url: pathToFileURL(url).href } : node.callFrame;
    const chain = parentChain === null ? null : chains.id(parentChain, frame, false);
    const own = isLibrary(frame) || isMarker(frame) ? parentOwn : isOwn(frame);
    const root = node === head;
    const frames = root || (isOwn(frame) && !isMarker(frame)) ? above : [frameOf(frame), ...above];
    out.push({ node, parent, frame, stack: frames, chain, own });
    for (const child of node.children ?? []) stack.push([child, node, chain, own, frames]);
  }
  return out;
}

/**
 * Each node of a heap profile with its scope: `{ node, frame, stack, own, scope, … }`, `scope`
 * a name, null (unattributed), false (outside callbacks), SEVERAL, or undefined (the CPU profile
 * sampled no prefix of its stack, or there is none: `cpu` null).
 */
function heapScopes(heapProfile, cpu) {
  if (heapProfile === null || typeof heapProfile !== 'object' || typeof heapProfile.head !== 'object' || !Array.isArray(heapProfile.samples)) {
    throw new TypeError('rloop: a sampling heap profile has { head, samples }');
  }
  const chains = new Chains();
  const byChain = cpu ? scopesByChain(cpu.profile, cpu.scopeTimeline, chains) : new Map();
  const scopeOf = new Map(); // heap node -> its scope, parents first
  return heapNodes(heapProfile.head, chains).map((n) => {
    const own = n.chain === null ? undefined : byChain.get(n.chain);
    const scope = own !== undefined ? own : scopeOf.get(n.parent);
    scopeOf.set(n.node, scope);
    return { ...n, scope };
  });
}

/**
 * `{ bytes, samples, rloopBytes, functions, scopes }` of a sampling heap profile (`rloopBytes`:
 * allocated for rloop, in no function's or scope's row); `scopes` null without `cpu` (`{
 * profile, scopeTimeline }`, the CPU profile of the same span on its clock), else `{ byScope:
 * [{ scope, bytes, percent }], several, unsampled }` (bytes the CPU profile puts in several
 * scopes, and in none).
 */
function analyzeHeapProfile(heapProfile, { cpu = null } = {}) {
  const nodes = heapScopes(heapProfile, cpu);
  const samplesOf = sampleCounts(heapProfile);
  let bytes = 0;
  const fns = new Map(); // frame key -> { frame, bytes, samples }
  const scopes = new Map();
  let several = 0;
  let unsampled = 0;
  let rloopBytes = 0;
  for (const { node, frame, own, scope } of nodes) {
    const size = node.selfSize ?? 0;
    if (size <= 0) continue;
    bytes += size;
    if (own) {
      rloopBytes += size;
      continue;
    }
    const k = frameKey(frame);
    let f = fns.get(k);
    if (f === undefined) fns.set(k, (f = { frame, bytes: 0, samples: 0 }));
    f.bytes += size;
    f.samples += samplesOf.get(node.id) ?? 0;
    if (scope === undefined) unsampled += size;
    else if (scope === SEVERAL) several += size;
    else scopes.set(scope, (scopes.get(scope) ?? 0) + size);
  }
  const percent = (b) => share(b, bytes);
  const functions = [...fns.values()].sort((a, b) => b.bytes - a.bytes).slice(0, FUNCTIONS).map(({ frame, bytes: b, samples }) => {
    const pkg = packageOfFrame(frame);
    return { ...frameOf(frame), bytes: Math.round(b), percent: percent(b), samples, ...(pkg === null ? {} : { package: pkg }) };
  });
  return {
    bytes: Math.round(bytes),
    samples: heapProfile.samples.length,
    rloopBytes: Math.round(rloopBytes),
    functions,
    scopes: cpu === null ? null : {
      byScope: [...scopes].sort((a, b) => b[1] - a[1]).map(([scope, b]) => ({ scope: scope === false ? OUTSIDE : scope, bytes: Math.round(b), percent: percent(b) })),
      several: Math.round(several),
      unsampled: Math.round(unsampled),
    },
  };
}

/** Samples per node id. */
function sampleCounts(heapProfile) {
  const counts = new Map();
  for (const s of heapProfile.samples) counts.set(s.nodeId, (counts.get(s.nodeId) ?? 0) + 1);
  return counts;
}

module.exports = { analyzeHeapProfile, heapScopes, sampleCounts, SEVERAL };

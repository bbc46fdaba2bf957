'use strict';
// Analysis of a sampling heap profile (js/capture/heap-profile.js): bytes allocated by function
// and, given a CPU profile of the same span with its scope timeline, by scope.
//
// V8 records no time with an allocation sample, so its scope comes from the CPU profile: the
// scopes of the CPU samples taken in the same call stack of the app's code or below it. The two
// profiles see stacks differently: the CPU profiler shows functions V8 inlined, the heap
// sampler only the frames on the machine stack; and Node's, libraries' and rloop's frames come
// and go with inlining in both. So stacks are compared by the app's frames only, and a heap
// stack matches every CPU stack that ends in the same function and holds its frames in order
// (the inlined ones between them). Where no CPU stack matches, the longest prefix that does
// (the callers it ran under) tells. One scope there: the allocation is that scope's. Several:
// they shared the code, and it is not split by a guess. None (no prefix matches, not even the
// root): the scope is not known. Each is said as such.

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

/** A frame left out of stacks compared: Node's, a library's, rloop's. */
const skipped = (frame) => isOwn(frame) || isLibrary(frame);

const merge = (map, key, scope) => {
  const had = map.get(key);
  map.set(key, had === undefined || had === scope ? scope : SEVERAL);
};

/**
 * The CPU profile's stacks of the app's frames, each with the scope of the samples at or below
 * it (a scope name, null unattributed, false the loop outside callbacks, or SEVERAL): `{ root,
 * byLeaf }`, `root` the scope of all samples, `byLeaf` by the key of a stack's innermost frame
 * the stacks `{ keys, scope }` that end in it.
 */
function cpuStacks(profile, scopeTimeline) {
  const { nodes, samples, timeDeltas } = profile;
  const tree = indexNodes(nodes);
  const at = new Map(); // node index -> scope of the samples at or below it
  let j = -1;
  let t = profile.startTime + (timeDeltas[0] ?? 0);
  for (let i = 0; i < samples.length; i++) {
    const node = tree.index.get(samples[i]);
    j = scopeAt(scopeTimeline, t, j);
    if (node !== undefined) merge(at, node, j >= 0 ? scopeTimeline[j][1] : null);
    if (i + 1 < samples.length) t += timeDeltas[i + 1];
  }
  for (let k = tree.order.length - 1; k >= 0; k--) { // children before parents
    const i = tree.order[k];
    if (at.has(i) && tree.parent[i] >= 0) merge(at, tree.parent[i], at.get(i));
  }
  const keysOf = new Array(nodes.length); // the app's frames from the root, as keys
  const byStack = new Map(); // joined keys -> { keys, scope }
  for (const i of tree.order) {
    const above = tree.parent[i] < 0 ? [] : keysOf[tree.parent[i]];
    const frame = nodes[i].callFrame;
    keysOf[i] = skipped(frame) ? above : [...above, frameKey(frame)];
    if (!at.has(i) || keysOf[i].length === 0) continue;
    const id = keysOf[i].join('\u0001');
    const known = byStack.get(id);
    if (known === undefined) byStack.set(id, { keys: keysOf[i], scope: at.get(i) });
    else known.scope = known.scope === at.get(i) ? known.scope : SEVERAL;
  }
  const byLeaf = new Map();
  for (const stack of byStack.values()) {
    const leaf = stack.keys.at(-1);
    if (!byLeaf.has(leaf)) byLeaf.set(leaf, []);
    byLeaf.get(leaf).push(stack);
  }
  const roots = tree.order.filter((i) => tree.parent[i] < 0 && at.has(i));
  const root = roots.reduce((scope, i) => (scope === undefined || scope === at.get(i) ? at.get(i) : SEVERAL), undefined);
  return { root, byLeaf };
}

/** Whether `keys` are in `stack` in order, both ending in the same frame. */
function within(keys, stack) {
  let j = stack.length - 1;
  for (let i = keys.length - 1; i >= 0; i--) {
    while (j >= 0 && stack[j] !== keys[i]) j--;
    if (j < 0) return false;
    j--;
  }
  return true;
}

/** The scope of the CPU stacks a heap stack (the app's frames, as keys) matches, or undefined. */
function scopeOfStack(keys, cpu) {
  if (keys.length === 0) return cpu.root;
  let scope;
  for (const stack of cpu.byLeaf.get(keys.at(-1)) ?? []) {
    if (within(keys, stack.keys)) scope = scope === undefined || scope === stack.scope ? stack.scope : SEVERAL;
  }
  return scope;
}

/**
 * Every node of a heap profile's tree, parents first: `{ node, parent, frame, stack, keys, own }`,
 * `frame` its call frame as the CPU profile names it (a file URL where the heap profile gives a
 * CommonJS module's path), `stack` the frames from it to the root (frameOf()'s shape, rloop's
 * wrappers and the root left out), `keys` the app's frames from the root, `own` whether it allocates for
 * rloop: the innermost frame on its stack that is not Node's is rloop's own (Node's inspector
 * answering rloop's profiler, say; not the app's code that rloop's scope() runs).
 */
function heapNodes(head) {
  const out = [];
  const stack = [[head, null, [], false, []]];
  while (stack.length > 0) {
    const [node, parent, keysAbove, parentOwn, above] = stack.pop();
    const { url } = node.callFrame;
    const frame = path.isAbsolute(url) ? { ...node.callFrame, url: pathToFileURL(url).href } : node.callFrame;
    const keys = skipped(frame) ? keysAbove : [...keysAbove, frameKey(frame)];
    const own = isLibrary(frame) || isMarker(frame) ? parentOwn : isOwn(frame);
    const root = node === head;
    const frames = root || (isOwn(frame) && !isMarker(frame)) ? above : [frameOf(frame), ...above];
    out.push({ node, parent, frame, stack: frames, keys, own });
    for (const child of node.children ?? []) stack.push([child, node, keys, own, frames]);
  }
  return out;
}

/**
 * Each node of a heap profile with its scope: `{ node, frame, stack, own, scope, … }`, `scope`
 * a name, null (unattributed), false (outside callbacks), SEVERAL, or undefined (the CPU profile
 * sampled no prefix of its stack, or there is none: `cpu` null). Scopes are the timeline's
 * values, compared by identity: a caller may put others there (js/report/pprof.js: scope and key).
 */
function heapScopes(heapProfile, cpu) {
  if (heapProfile === null || typeof heapProfile !== 'object' || typeof heapProfile.head !== 'object' || !Array.isArray(heapProfile.samples)) {
    throw new TypeError('rloop: a sampling heap profile has { head, samples }');
  }
  const stacks = cpu ? cpuStacks(cpu.profile, cpu.scopeTimeline) : null;
  const scopeOf = new Map(); // heap node -> its scope, parents first
  return heapNodes(heapProfile.head).map((n) => {
    const own = stacks === null ? undefined : scopeOfStack(n.keys, stacks);
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

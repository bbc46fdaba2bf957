'use strict';
// Analysis of a V8 CPU profile (a .cpuprofile's content): where the time went by function, by
// kind of work, by scope and by package (js/analyze/packages.js), and the patterns worth acting
// on. Pure: no I/O, no clock; one pass over the nodes and one over the samples.
// The kinds of work are in js/analyze/kinds.js, the pass over the samples in
// js/analyze/samples.js, the patterns in js/analyze/patterns.js.

const { plainObject, knownOnly } = require('../validate');
const { flameTree } = require('./flame');
const { longCalls, longCallsByFunction } = require('./long-calls');
const { ms, percent } = require('./units');
const { packageOfFrame, busyByPackage } = require('./packages');
const { CATEGORIES, USER, GC, IDLE, frameOf, indexNodes, indexFunctions, classify } = require('./kinds');
const { OUTSIDE, checkTimeline, checkProfile, typicalInterval, sampleSpans, walkSamples } = require('./samples');
const { findPatterns } = require('./patterns');

const HEAVY_FUNCTIONS = 20;
const CALL_STACK_FUNCTIONS = 5;
const STACKS_PER_FUNCTION = 3;
const STACK_DEPTH = 64; // frames kept per stack, from the leaf
const SCOPE_FUNCTIONS = 5;
const LONG_CALL_MS = 50; // a single call this long stalls the loop (the monitor's default lagThresholdMs)
const LONG_CALL_FUNCTIONS = 5;

/** The heaviest distinct caller chains of a function, given its nodes, leaf first. */
function stacksOf(fnNodes, self, fnUs, nodes, parent, fnOf, own) {
  const merged = new Map(); // chain of functions -> { chain of nodes, us }
  for (const i of fnNodes) {
    if (self[i] === 0) continue;
    const chain = [];
    for (let j = i; parent[j] >= 0 && chain.length < STACK_DEPTH; j = parent[j]) if (!own[j]) chain.push(j); // not '(root)'
    const key = chain.map((j) => fnOf[j]).join(',');
    const entry = merged.get(key);
    if (entry) entry.us += self[i];
    else merged.set(key, { chain, us: self[i] });
  }
  return [...merged.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, STACKS_PER_FUNCTION)
    .map(({ chain, us }) => ({
      frames: chain.map((j) => frameOf(nodes[j].callFrame)),
      ms: ms(us),
      percent: percent(us, fnUs),
    }));
}

/**
 * Self time per category; per function and category (a function's category is its largest);
 * and per (marking frame, user frame calling it) for each kind of marked work.
 */
function totals(nodes, self, fnOf, fnCount, { category, mark, site }) {
  const categoryUs = new Float64Array(CATEGORIES.length);
  const fnCategoryUs = new Float64Array(fnCount * CATEGORIES.length);
  const byApiSite = new Map(); // 'category,api function,site function' -> { category, api, site, us }
  for (let i = 0; i < nodes.length; i++) {
    if (self[i] === 0) continue;
    categoryUs[category[i]] += self[i];
    fnCategoryUs[fnOf[i] * CATEGORIES.length + category[i]] += self[i];
    if (mark[i] >= 0) {
      const key = `${category[i]},${fnOf[mark[i]]},${site[i] >= 0 ? fnOf[site[i]] : -1}`;
      const entry = byApiSite.get(key);
      if (entry) entry.us += self[i];
      else byApiSite.set(key, { category: category[i], api: mark[i], site: site[i], us: self[i] });
    }
  }
  return { categoryUs, fnCategoryUs, byApiSite };
}

/** Functions with self time, heaviest first, each with its category; mostly idle ones left out. */
function rankFunctions(fnCategoryUs, fnCount) {
  const fns = [];
  for (let fn = 0; fn < fnCount; fn++) {
    const base = fn * CATEGORIES.length;
    let us = 0;
    let best = 0;
    for (let c = 0; c < CATEGORIES.length; c++) {
      us += fnCategoryUs[base + c];
      if (fnCategoryUs[base + c] > fnCategoryUs[base + best]) best = c;
    }
    if (us > 0 && best !== IDLE) fns.push({ fn, us, category: best });
  }
  return fns.sort((a, b) => b.us - a.us);
}

/** Per kind of marked work, its heaviest (API frame, calling user frame) pair as frames. */
function locationsOf(byApiSite, nodes) {
  const top = {};
  for (const entry of byApiSite.values()) {
    if (!(top[entry.category]?.us >= entry.us)) top[entry.category] = entry;
  }
  const locations = {};
  for (const [c, { api, site, us }] of Object.entries(top)) {
    locations[c] = { api: frameOf(nodes[api].callFrame), site: site >= 0 ? frameOf(nodes[site].callFrame) : null, us };
  }
  return locations;
}

/**
 * Analyzes a V8 CPU profile. `scopeTimeline`: sorted `[timeUs, scope]` transitions on the
 * profile's clock (see profile.profileClockOffsetUs), scope a name, null (unattributed) or false
 * (the loop idle: from rloop's idle mark to the next callback); each sample takes the scope in
 * force at its time. Idle samples belong to no scope; other samples while the loop is idle go to
 * the row '(outside callbacks)'.
 */
function analyze(profile, options) {
  return study(profile, options).analysis;
}

/** The analysis and the flame tree (js/analyze/flame.js) of a profile, from one pass over it. */
function analyzeWithFlame(profile, options) {
  const { analysis, measured } = study(profile, options);
  return { analysis, flame: flameTree(measured) };
}

/** The analysis, and what was measured on the way: self time and category per node. */
function study(profile, options) {
  const given = knownOnly('analyze()', plainObject('analyze() options', options), ['scopeTimeline', 'lagThresholdMs']);
  const { scopeTimeline, lagThresholdMs = LONG_CALL_MS } = given;
  checkProfile(profile);
  if (!(Number.isFinite(lagThresholdMs) && lagThresholdMs > 0)) throw new RangeError('rloop: lagThresholdMs must be a positive number of ms');
  if (scopeTimeline !== undefined) checkTimeline(scopeTimeline);
  const { nodes } = profile;
  const tree = indexNodes(nodes);
  const { fnOf, first } = indexFunctions(nodes);
  const cls = classify(nodes, tree);
  const intervalUs = typicalInterval(profile.timeDeltas);
  const spans = sampleSpans(profile, tree.index, cls.category, scopeTimeline, intervalUs);
  const { self, gcAfter, scopes } = walkSamples(profile, tree.index, cls, fnOf, scopeTimeline, spans);

  const { categoryUs, fnCategoryUs, byApiSite } = totals(nodes, self, fnOf, first.length, cls);
  const fns = rankFunctions(fnCategoryUs, first.length);

  const durationUs = Math.max(0, profile.endTime - profile.startTime);
  const busyUs = categoryUs.reduce((sum, us) => sum + us, 0) - categoryUs[IDLE];
  const frameOfFn = (fn) => frameOf(nodes[first[fn]].callFrame);

  const heavyFunctions = fns.slice(0, HEAVY_FUNCTIONS).map(({ fn, us, category: c }) => {
    const pkg = packageOfFrame(nodes[first[fn]].callFrame);
    return {
      ...frameOfFn(fn),
      selfMs: ms(us),
      selfPercent: percent(us, durationUs),
      busyPercent: percent(us, busyUs),
      category: CATEGORIES[c],
      ...(pkg === null ? {} : { package: pkg }),
    };
  });

  const top = fns.slice(0, CALL_STACK_FUNCTIONS);
  const nodesOf = new Map(top.map(({ fn }) => [fn, []]));
  for (let i = 0; i < nodes.length; i++) nodesOf.get(fnOf[i])?.push(i);
  const callStacks = top.map(({ fn, us }) => ({
    ...frameOfFn(fn),
    selfMs: ms(us),
    stacks: stacksOf(nodesOf.get(fn), self, us, nodes, tree.parent, fnOf, cls.own),
  }));

  let gcFn = -1;
  for (const [fn, episodes] of gcAfter) if (gcFn < 0 || episodes > gcAfter.get(gcFn)) gcFn = fn;
  const hog = fns.find((f) => f.category === USER);
  const thresholdUs = lagThresholdMs * 1000;
  const long = longCallsByFunction(longCalls(profile, { nodeIndex: tree.index, ...cls, parent: tree.parent, gc: GC, idle: IDLE }, thresholdUs, spans), fnOf)
    .map((c) => ({ ...c, frame: frameOfFn(c.fn) }));

  const patterns = findPatterns({
    busyUs,
    durationUs,
    categoryUs,
    hog: hog && { fn: hog.fn, frame: frameOfFn(hog.fn), us: hog.us },
    locations: locationsOf(byApiSite, nodes),
    gcSite: gcFn >= 0 ? frameOfFn(gcFn) : null,
    long,
    thresholdUs,
  });

  const measured = {
    nodes, index: tree.index, parent: tree.parent, order: tree.order, self, fnOf, category: cls.category, names: CATEGORIES, idle: IDLE,
    own: cls.own, user: cls.user, intervalUs,
  };
  const analysis = {
    durationMs: ms(durationUs),
    samples: profile.samples.length,
    intervalUs,
    heavyFunctions,
    callStacks,
    categories: Object.fromEntries(CATEGORIES.map((name, c) => [name, ms(categoryUs[c])])),
    patterns,
    scopes: scopes ? scopeSummaries(scopes, busyUs, fnOf, frameOfFn) : [],
    packages: busyByPackage(measured, busyUs, frameOfFn),
    longCalls: {
      thresholdMs: lagThresholdMs,
      functions: long.slice(0, LONG_CALL_FUNCTIONS).map((c) => ({
        ...c.frame, calls: c.calls, longestMs: ms(c.maxUs), ms: ms(c.us), percent: percent(c.us, busyUs),
      })),
    },
  };
  return { analysis, measured };
}

function scopeSummaries(scopes, busyUs, fnOf, frameOfFn) {
  return [...scopes]
    .map(([name, s]) => {
      const byFn = new Map();
      for (const [node, us] of s.self) byFn.set(fnOf[node], (byFn.get(fnOf[node]) ?? 0) + us);
      const topFunctions = [...byFn]
        .sort((a, b) => b[1] - a[1])
        .slice(0, SCOPE_FUNCTIONS)
        .map(([fn, us]) => ({ ...frameOfFn(fn), selfMs: ms(us) }));
      // busyMs: none for the loop outside callbacks, which is no busy time.
      const busy = name === OUTSIDE ? {} : { busyMs: ms(s.busyUs) };
      return { name, samples: s.samples, ms: ms(s.us), percent: percent(s.us, busyUs), ...busy, topFunctions };
    })
    .sort((a, b) => b.ms - a.ms);
}

module.exports = { analyze, analyzeWithFlame, study, frameOf, OUTSIDE };

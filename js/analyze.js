'use strict';
// Analysis of a V8 CPU profile (a .cpuprofile's content): where the time went by function, by
// kind of work, by scope and by package (js/packages.js), and the patterns worth acting on. Pure: no I/O, no clock; one pass
// over the nodes and one over the samples.
//
// A frame's kind comes from what the frame is, never from its name alone (a user function named
// parseConfig is user code). Measured on Node 20, 22 and 24:
//   json     the frames js/markers.js puts around JSON.parse/stringify: V8 reports no frame for
//            these C++ builtins, their time otherwise lands on the caller
//   regex    'RegExp: <source>' (script 0): regular expressions compiled to native code while
//            the profile ran; and js/markers.js's frames around RegExp.prototype.test and the
//            Symbol.match/matchAll/replace/search/split methods, which also hold the time V8
//            runs a regex in its interpreter or in code compiled before the profile started
//   sync-io  *Sync functions of node:fs, node:internal/fs/*, node:child_process, and all under them
//   crypto   node:crypto and node:internal/crypto/* functions, and all under them (native hashing)
//   gc, idle, program   V8's '(garbage collector)', '(idle)' and '(program)' entries
//   native   other script-0 frames (C++ bindings); node: other node:* code and rloop's own
//            wrappers (js/hooks.js, js/index.js, js/io.js: its frames are never the app's); user: the rest
// A sample's time goes to the innermost json/regex/sync-io/crypto frame on its stack, else to
// its leaf's kind: native time under readFileSync is sync-io.

const { JSON_MARKER_URL, REGEX_MARKER_URL } = require('./markers');
const { redactLink } = require('./redact');
const { plainObject, knownOnly } = require('./options');
const { flameTree } = require('./flame');
const { isOwn } = require('./report/frames');
const { longCalls, longCallsByFunction } = require('./long-calls');
const { round, ms, percent } = require('./units');
const { packageOfFrame, busyByPackage } = require('./packages');

const CATEGORIES = ['user', 'node', 'native', 'json', 'regex', 'crypto', 'sync-io', 'gc', 'program', 'idle'];
const [USER, NODE, NATIVE, JSON_, REGEX, CRYPTO, SYNC_IO, GC, PROGRAM, IDLE] = CATEGORIES.keys();
const MARKED = new Set([JSON_, REGEX, CRYPTO, SYNC_IO]); // kinds that claim the frames under them

const SYNC_IO_URL = /^node:(fs|internal\/fs\/.*|child_process|internal\/child_process)$/;
const REGEXP_PREFIX = 'RegExp: ';

const HEAVY_FUNCTIONS = 20;
const CALL_STACK_FUNCTIONS = 5;
const STACKS_PER_FUNCTION = 3;
const STACK_DEPTH = 64; // frames kept per stack, from the leaf
const SCOPE_FUNCTIONS = 5;
const MAX_GAP = 2; // sampling intervals; see walkSamples
const MIN_PATTERN_MS = 1; // less than this is noise at any share
const LOW_LOAD = 10; // % of the profile busy below which a share of busy time overstates the cost
const LONG_CALL_MS = 50; // a single call this long stalls the loop (the monitor's default lagThreshold)
const LONG_CALL_FUNCTIONS = 5;
// The row of samples a timeline puts in no scope: the loop between rloop's idle mark and the
// next callback (polling, libuv's and Node's own work before a callback), not busy time.
const OUTSIDE = '(outside callbacks)';

// Thresholds in % of busy (non-idle) time: the pattern fires above `fires`; its severity is
// 'warning' from `warning`, 'critical' from `critical`, 'info' below, and one level lower when
// the thread was busy less than LOW_LOAD % of the profile (a large share of little work).
const THRESHOLDS = {
  'cpu-hog': { fires: 50, warning: 50, critical: 80 },
  'json-heavy': { fires: 10, warning: 20, critical: 40 },
  'regex-heavy': { fires: 10, warning: 20, critical: 40 },
  'crypto-heavy': { fires: 10, warning: 20, critical: 40 },
  'gc-pressure': { fires: 5, warning: 10, critical: 25 },
  'sync-io': { fires: 0, warning: 5, critical: 20 },
};

function kindOf({ functionName, url, scriptId }) {
  if (url === '' && String(scriptId) === '0') {
    switch (functionName) {
      case '(idle)': return IDLE;
      case '(garbage collector)': return GC;
      case '(program)':
      case '(root)': return PROGRAM;
      default: return functionName.startsWith(REGEXP_PREFIX) ? REGEX : NATIVE;
    }
  }
  if (url === JSON_MARKER_URL) return JSON_;
  if (url === REGEX_MARKER_URL) return REGEX;
  if (isOwn({ url })) return NODE;
  if (!url.startsWith('node:')) return USER;
  if (SYNC_IO_URL.test(url) && functionName.endsWith('Sync')) return SYNC_IO;
  if (url === 'node:crypto' || url.startsWith('node:internal/crypto/')) return CRYPTO;
  return NODE;
}

function frameOf({ functionName, url, lineNumber, columnNumber }) {
  return {
    functionName: functionName || '(anonymous)',
    url: redactLink(url), // a script loaded as 'x.mjs?token=…'
    line: lineNumber >= 0 ? lineNumber + 1 : null,
    column: columnNumber >= 0 ? columnNumber + 1 : null,
  };
}

/** The profile's nodes as arrays by index, in an order where parents come before children. */
function indexNodes(nodes) {
  const n = nodes.length;
  const index = new Map();
  nodes.forEach((node, i) => index.set(node.id, i));
  const parent = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    for (const child of nodes[i].children ?? []) parent[index.get(child)] = i;
  }
  const children = nodes.map((node) => (node.children ?? []).map((id) => index.get(id)));
  const order = [];
  for (let i = 0; i < n; i++) {
    if (parent[i] !== -1) continue;
    const stack = [i];
    while (stack.length > 0) {
      const j = stack.pop();
      order.push(j);
      for (const c of children[j]) stack.push(c);
    }
  }
  return { index, parent, order };
}

/** Functions (distinct call frames), each node's function, and each function's first node. */
function indexFunctions(nodes) {
  const byKey = new Map();
  const fnOf = new Int32Array(nodes.length);
  const first = [];
  nodes.forEach(({ callFrame: f }, i) => {
    const key = `${f.scriptId}\0${f.lineNumber}\0${f.columnNumber}\0${f.url}\0${f.functionName}`;
    let fn = byKey.get(key);
    if (fn === undefined) {
      fn = first.length;
      byKey.set(key, fn);
      first.push(i);
    }
    fnOf[i] = fn;
  });
  return { fnOf, first };
}

/**
 * Per node: the category its self time goes to, the marking frame it runs under (-1: none) and
 * the user frame that called that marking frame (-1: none), its nearest user frame, and whether
 * it is rloop's own.
 */
function classify(nodes, { parent, order }) {
  const n = nodes.length;
  const category = new Uint8Array(n);
  const mark = new Int32Array(n).fill(-1);
  const site = new Int32Array(n).fill(-1);
  const user = new Int32Array(n).fill(-1);
  const own = new Uint8Array(n); // rloop's wrappers: left out of stacks and the flame tree
  for (const i of order) {
    const kind = kindOf(nodes[i].callFrame);
    own[i] = kind === NODE && isOwn(nodes[i].callFrame) ? 1 : 0;
    const p = parent[i];
    const inherited = p >= 0 && mark[p] >= 0;
    // The compiled regex under rloop's marker names the pattern; the caller stays the marker's.
    const pattern = kind === REGEX && inherited && category[p] === REGEX && nodes[mark[p]].callFrame.url === REGEX_MARKER_URL;
    if (MARKED.has(kind) && (!(inherited && category[p] === kind) || pattern)) {
      // A new kind of work starts here; nested frames of the same kind (readFileSync → readSync)
      // keep the outer one, the API the caller used.
      category[i] = kind;
      mark[i] = i;
      site[i] = pattern ? site[p] : p >= 0 ? user[p] : -1;
    } else if (inherited) {
      category[i] = category[p];
      mark[i] = mark[p];
      site[i] = site[p];
    } else {
      category[i] = kind;
    }
    user[i] = kind === USER ? i : p >= 0 ? user[p] : -1;
  }
  return { category, mark, site, user, own };
}

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
 * One pass over the samples: self time per node, GC episodes per user function that ran just
 * before them (allocations trigger GC), and busy time per scope when a timeline is given.
 * A sample lasts until the next one (as in DevTools), but a gap of more than MAX_GAP intervals
 * (the sampler thread starved, or its signal waited for a syscall) is charged in full only when
 * the samples on both sides are the same kind of work; otherwise nobody knows what ran in it,
 * and the sample is charged MAX_GAP intervals.
 */
function walkSamples(profile, nodeIndex, { category, user }, fnOf, timeline, intervalUs) {
  const { samples, timeDeltas, startTime, endTime } = profile;
  const nodeAt = (i) => {
    const node = nodeIndex.get(samples[i]);
    if (node === undefined) throw new RangeError(`rloop: profile sample ${i} names no node (${samples[i]})`);
    return node;
  };
  const maxGap = MAX_GAP * intervalUs;
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
    let us = Math.max(0, next - t);
    if (us > maxGap && (last || category[nextNode] !== cat)) us = maxGap;
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

const SEVERITIES = ['info', 'warning', 'critical'];

function severity(id, share, lowLoad) {
  const { warning, critical } = THRESHOLDS[id];
  const level = (share >= warning ? 1 : 0) + (share >= critical ? 1 : 0) - (lowLoad ? 1 : 0);
  return SEVERITIES[Math.max(0, level)];
}

/** Milliseconds as the report shows them: '0.42', '12.5', '1,478', '12.3 s'. */
function msText(us) {
  const x = us / 1000;
  if (x >= 10000) return `${thousands((x / 1000).toFixed(1))} s`;
  return `${thousands(x.toFixed(x < 10 ? 2 : x < 100 ? 1 : 0).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''))} ms`;
}

const thousands = (fixed) => fixed.replace(/^(\d+)/, (int) => int.replace(/\B(?=(\d{3})+$)/g, ','));
const plural = (n, one, many = `${one}s`) => `${thousands(String(n))} ${n === 1 ? one : many}`;

function where({ functionName, url, line, column }) {
  return line === null ? `${functionName} (native)` : `${functionName} (${url}:${line}:${column})`;
}

// Marked work: `label` names the kind, `api(frame)` the marking frame the caller used.
const CATEGORY_PATTERNS = [
  {
    id: 'json-heavy',
    category: JSON_,
    label: 'JSON.parse/stringify',
    api: (frame) => frame.functionName,
    suggestion:
      'Handle less JSON on the loop: smaller payloads (paginate, select fields), a streaming parser for large documents, ' +
      'a schema-based serializer (fast-json-stringify) for hot responses, or a worker thread for big documents.',
  },
  {
    id: 'regex-heavy',
    category: REGEX,
    label: 'Regular expressions',
    // The pattern when it was compiled while the profile ran, else the method rloop marked.
    api: (frame) => (frame.functionName.startsWith(REGEXP_PREFIX) ? `/${frame.functionName.slice(REGEXP_PREFIX.length)}/` : frame.functionName),
    suggestion:
      'Look for catastrophic backtracking (nested or overlapping quantifiers such as (a+)+ or (a|a)*), bound the input ' +
      'length before matching, anchor and simplify the pattern, or use a linear-time engine (re2).',
  },
  {
    id: 'crypto-heavy',
    category: CRYPTO,
    label: 'Crypto',
    api: (frame) => `crypto ${frame.functionName}`,
    suggestion:
      'Use the asynchronous variants (crypto.pbkdf2, crypto.scrypt, crypto.generateKeyPair…), which run on the libuv ' +
      'threadpool; cache derived keys and hashes; hash large data as a stream.',
  },
  {
    id: 'sync-io',
    category: SYNC_IO,
    label: 'Synchronous I/O',
    api: (frame) => frame.functionName,
    suggestion:
      'Use the asynchronous APIs (fs.promises, child_process.spawn/execFile) on request paths; keep *Sync calls to startup ' +
      'and shutdown, or move them to a worker thread.',
  },
];

/** The patterns that fire, most severe first; 'healthy' alone when none does. */
function findPatterns({ busyUs, durationUs, categoryUs, hog, locations, gcSite, long, thresholdUs }) {
  const out = [];
  const lowLoad = busyUs < (LOW_LOAD / 100) * durationUs;
  const add = (id, us, location, message, suggestion) => {
    const share = percent(us, busyUs);
    if (us / 1000 < MIN_PATTERN_MS || !(share > THRESHOLDS[id].fires)) return;
    out.push({ id, severity: severity(id, share, lowLoad), message, location, suggestion, percent: share });
  };
  const of = (us) => `${round(percent(us, busyUs), 1)} % of busy time, ${msText(us)}`;

  const hogLong = hog && long.find((c) => c.fn === hog.fn);
  if (hog) {
    add(
      'cpu-hog',
      hog.us,
      hog.frame,
      `${where(hog.frame)} took ${of(hog.us)}, in its own code`
        + (hogLong ? `; ${plural(hogLong.calls, 'single call')} lasted ${msText(thresholdUs)} or more, the longest ${msText(hogLong.maxUs)}` : ''),
      'Make it do less per call (cache, precompute, better algorithm), split it into chunks that yield to the loop ' +
        '(setImmediate), or move it to a worker thread. Its call stacks show who calls it.',
    );
  }
  for (const { id, category, label, api, suggestion } of CATEGORY_PATTERNS) {
    const top = locations[category];
    if (!top) continue;
    const us = categoryUs[category];
    const mostly = `mostly ${api(top.api)}${top.site ? ` called from ${where(top.site)}` : ''}`;
    add(id, us, top.site ?? top.api, `${label} took ${of(us)}, ${mostly}`, suggestion);
  }
  // A hog's long calls are said in its own pattern.
  const blocking = out.some((p) => p.id === 'cpu-hog') ? long.filter((c) => c !== hogLong) : long;
  if (blocking.length > 0 && blocking[0].us / 1000 >= MIN_PATTERN_MS) {
    const [top, ...others] = blocking;
    const share = percent(top.us, busyUs);
    const level = (top.maxUs >= 1000e3 ? 2 : top.maxUs >= 100e3 || top.calls >= 3 ? 1 : 0) - (lowLoad ? 1 : 0);
    out.push({
      id: 'long-calls',
      severity: SEVERITIES[Math.max(0, level)],
      message: `${plural(top.calls, 'single call')} of ${where(top.frame)} lasted ${msText(thresholdUs)} or more, `
        + `the longest ${msText(top.maxUs)}: they blocked the loop for ${of(top.us)}`
        + (others.length > 0 ? `. ${plural(others.length, 'other function')} also made such calls, the first ${where(others[0].frame)}` : ''),
      location: top.frame,
      suggestion:
        'One call this long delays every other callback, timer and request by as much. Split the work into chunks that yield ' +
        '(setImmediate between batches), bound the input it handles per call, or move it to a worker thread.',
      percent: share,
    });
  }
  add(
    'gc-pressure',
    categoryUs[GC],
    gcSite,
    `Garbage collection took ${of(categoryUs[GC])}${gcSite ? `, most often right after ${where(gcSite)}` : ''}`,
    'Allocate less on hot paths: reuse objects and buffers, avoid temporary arrays, strings and closures in loops. ' +
      'A heap sampling profile shows the allocation sites; a larger young generation (--max-semi-space-size) helps ' +
      'when most garbage is short-lived.',
  );

  if (out.length === 0) {
    const load = percent(busyUs, durationUs);
    return [{
      id: 'healthy',
      severity: 'info',
      message: `No CPU pattern above its threshold; the thread was busy ${load} % of the profile.`,
      location: null,
      suggestion: null,
      percent: load,
    }];
  }
  const rank = (p) => SEVERITIES.indexOf(p.severity);
  return out.sort((a, b) => rank(b) - rank(a) || b.percent - a.percent);
}

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

/** The analysis and the flame tree (js/flame.js) of a profile, from one pass over it. */
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
  const { self, gcAfter, scopes } = walkSamples(profile, tree.index, cls, fnOf, scopeTimeline, intervalUs);

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
  const long = longCallsByFunction(longCalls(profile, { nodeIndex: tree.index, ...cls, parent: tree.parent, gc: GC, idle: IDLE }, thresholdUs, MAX_GAP, intervalUs), fnOf)
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

module.exports = { analyze, analyzeWithFlame, study, frameOf, CATEGORIES, OUTSIDE };

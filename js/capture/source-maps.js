'use strict';
// Original locations, where the app has source maps (TypeScript, bundlers), for the frames of
// what a capture or a pulled profile collected: the CPU profile's call frames (so the analysis,
// the words of its patterns, the flame tree, the stall stacks taken from the profile and the
// pprof name the original), the sampling heap profile's, the stack sampler's stall stacks and
// the slow I/O callers; and for the live 'lag' and 'slowIO' events. A mapped frame keeps its
// generated location as `generated`. Each script's map is looked up once per report, before it
// is built.
//
// Where a map comes from:
// - on disk (js/capture/map-files.js), read here even when Node has source maps enabled: Node
//   decodes a map whole and keeps it for the life of the process, where js/capture/mappings.js
//   answers a report's frames in one pass over the map's text;
// - else Node's own (module.findSourceMap): what a loader that transpiles in memory (tsx,
//   --experimental-transform-types) registered, with no file to read. Node holds it already.
// A map that cannot be read or decoded leaves its script's frames as they are, and the report
// says why (meta.sourceMaps): a script's failure is its reason, never an exception. Maps read are
// kept for the next report, CACHE_CHARS of mappings at most.
//
// A live event is mapped as it is emitted, on the loop: only with maps of at most LIVE_MAP_BYTES,
// read then if not cached (once per script and build) or from the cache; a larger map's frames
// stay generated in live events (a report maps them), so an event never reads or decodes more.

const fs = require('node:fs');
const path = require('node:path');
const { findSourceMap } = require('node:module');
const { fileURLToPath, pathToFileURL } = require('node:url');
const { redactLink } = require('../redact');
const { isOwn } = require('../own');
const { originals } = require('./mappings');
const { readMap, MAX_MAP_BYTES } = require('./map-files');

const LIVE_MAP_BYTES = 256 * 1024; // a compiler's per-file map, not a bundle's
const MAX_SCRIPTS = 1000; // looked up per report; frames of others stay generated
const MAX_SKIPPED = 20; // listed per report; the rest counted
const CACHE_CHARS = 16 * 1024 * 1024; // of mappings kept across reports: a large bundle's
const CACHE_SCRIPTS = 2000;
const NOT_VLQ = 'its mappings are not base64 VLQ';

const STALL_STACKS = ['stack', 'stackSeen']; // the stack sampler's (a profile's come mapped with it)
const IO_STACKS = ['stack'];

// script file -> { stamp, parts (null: no map), reason, chars, limit? }, oldest first; `limit`:
// a live event's read found the map larger than that, and left it unread
const cache = new Map();
let cachedChars = 0;

/**
 * What a capture collected, with original locations: `{ profile, heapProfile, stalls, io,
 * sourceMaps }`. The profiles are copies with mapped call frames (V8's own stay as they were, for
 * the .cpuprofile file and the 'profile' event); `sourceMaps` is `{ scripts, skipped, dropped }`
 * (scripts whose frames were mapped, maps left aside and why), null when no script had one.
 */
function withOriginals({ profile = null, heapProfile = null, stalls = [], io = [] }) {
  const asks = new Asks();
  const nodes = profile?.nodes ?? [];
  const nodeAsks = nodes.map(({ callFrame: f }) => asks.add(f.url, f.lineNumber, f.columnNumber));
  const heapNodes = heapProfile ? treeCopy(heapProfile.head) : [];
  const heapAsks = heapNodes.map(({ callFrame: f }) => asks.add(f.url, f.lineNumber, f.columnNumber));
  const stallAsks = stalls.map((e) => stackAsks(asks, e, STALL_STACKS));
  const ioAsks = io.map((e) => stackAsks(asks, e, IO_STACKS));
  const { found, sourceMaps } = asks.answer(MAX_MAP_BYTES);
  heapNodes.forEach((node, i) => {
    if (found[heapAsks[i]]) node.callFrame = mappedCallFrame(node.callFrame, found[heapAsks[i]]);
  });
  return {
    profile: profile && {
      ...profile,
      nodes: nodes.map((node, i) => (found[nodeAsks[i]] ? { ...node, callFrame: mappedCallFrame(node.callFrame, found[nodeAsks[i]]) } : node)),
    },
    heapProfile: heapProfile && { ...heapProfile, head: heapNodes[0] },
    stalls: stalls.map((e, i) => mappedStacks(e, STALL_STACKS, stallAsks[i], found)),
    io: io.map((e, i) => mappedStacks(e, IO_STACKS, ioAsks[i], found)),
    sourceMaps,
  };
}

/**
 * A live 'lag' or 'slowIO' event with its stacks at their original location where a map of at
 * most LIVE_MAP_BYTES says (the event itself where none does); maps left aside go unsaid.
 */
function liveOriginals(event) {
  const asks = new Asks();
  const at = stackAsks(asks, event, STALL_STACKS);
  if (at.every((a) => a === null || a.every((i) => i < 0))) return event;
  return mappedStacks(event, STALL_STACKS, at, asks.answer(LIVE_MAP_BYTES).found);
}

/**
 * The asks of an event's stacks (`[{ functionName, url, line, column }]`, 1-based, under its
 * `keys`): per key, the ask of each frame, or null where the key holds no stack.
 */
function stackAsks(asks, e, keys) {
  return keys.map((key) => (Array.isArray(e[key]) ? e[key].map((f) => asks.add(f?.url, f?.line - 1, (f?.column ?? 1) - 1)) : null));
}

/** The event with the frames of its stacks that were found at their original location. */
function mappedStacks(e, keys, at, found) {
  const out = { ...e };
  keys.forEach((key, k) => {
    if (at[k] !== null) out[key] = e[key].map((f, j) => (found[at[k][j]] ? { ...f, ...found[at[k][j]], generated: { url: redactLink(f.url), line: f.line, column: f.column } } : f));
  });
  return out;
}

/** A heap profile's tree copied, every node a new object (children included), the root first. */
function treeCopy(head) {
  const all = [{ ...head }];
  for (let k = 0; k < all.length; k++) {
    all[k].children = (all[k].children ?? []).map((c) => {
      const copy = { ...c };
      all.push(copy);
      return copy;
    });
  }
  return all;
}

/**
 * A profile call frame at its original location (0-based, as V8's), its generated one kept
 * (1-based, as a frame's; a file URL where the heap profile gives a CommonJS module's path).
 */
function mappedCallFrame(f, { url, line, column }) {
  const generated = { url: redactLink(path.isAbsolute(f.url) ? pathToFileURL(f.url).href : f.url), line: f.lineNumber + 1, column: f.columnNumber + 1 };
  return { ...f, url, lineNumber: line - 1, columnNumber: column - 1, generated };
}

/** Generated positions by script, answered together: one look at each script's map. */
class Asks {
  #byScript = new Map(); // script URL -> { positions: [[line, column]], at: [ask] }; null: none to ask
  #count = 0;
  #scripts = 0;

  /** An ask for 0-based `line`, `column` of `url`; -1 when no map could say (not a file, native, rloop's). */
  add(url, line, column) {
    if (typeof url !== 'string' || !Number.isInteger(line) || line < 0) return -1;
    let script = this.#byScript.get(url);
    if (script === undefined) {
      const asked = this.#scripts < MAX_SCRIPTS && !isOwn({ url }) && fileOf(url) !== null;
      script = asked ? { positions: [], at: [] } : null;
      if (asked) this.#scripts++;
      this.#byScript.set(url, script);
    }
    if (script === null) return -1;
    script.positions.push([line, Number.isInteger(column) && column > 0 ? column : 0]);
    script.at.push(this.#count);
    return this.#count++;
  }

  /**
   * `found`: per ask, `{ url, line, column }` (1-based, redacted) or null, from maps of at most
   * `maxBytes`; and the report's `sourceMaps`.
   */
  answer(maxBytes) {
    const found = new Array(this.#count).fill(null);
    const sourceMaps = { scripts: 0, skipped: [], dropped: 0 };
    for (const [url, script] of this.#byScript) {
      if (script === null) continue;
      const { positions, at } = script;
      const { answers, reason } = originalsOf(url, positions, maxBytes);
      if (reason !== null) {
        if (sourceMaps.skipped.length < MAX_SKIPPED) sourceMaps.skipped.push({ url: redactLink(url), reason });
        else sourceMaps.dropped++;
      }
      let mapped = false;
      answers?.forEach((o, j) => {
        if (o === null) return;
        found[at[j]] = { url: redactLink(o.url), line: o.line + 1, column: o.column + 1 };
        mapped = true;
      });
      if (mapped) sourceMaps.scripts++;
    }
    return { found, sourceMaps: sourceMaps.scripts > 0 || sourceMaps.skipped.length > 0 ? sourceMaps : null };
  }
}

/**
 * For each 0-based position of `url`, its original (0-based) or null, from a map of at most
 * `maxBytes`; `answers` null without one, `reason` why a map was left aside.
 */
function originalsOf(url, positions, maxBytes) {
  const file = fileOf(url);
  const entry = mapOnDisk(file, maxBytes);
  // Node's map of a script too is that large: not decoded for a live event either.
  if (entry.limit !== undefined || entry.chars > maxBytes) return { answers: null, reason: null };
  if (entry.parts === null && entry.reason === null) return { answers: nodesOriginals(url, positions), reason: null };
  if (entry.parts === null) return { answers: null, reason: entry.reason };
  try {
    return { answers: originals(entry.parts, positions), reason: null };
  } catch {
    forget(file);
    cache.set(file, { ...entry, parts: null, reason: NOT_VLQ, chars: 0 });
    return { answers: null, reason: NOT_VLQ };
  }
}

/** Node's own map of a script, where it holds one; null otherwise. */
function nodesOriginals(url, positions) {
  let map;
  try {
    map = findSourceMap(url);
  } catch {
    return null;
  }
  if (!map) return null;
  return positions.map(([line, column]) => {
    try {
      const e = map.findEntry(line, column);
      // Node's answer may be a segment of an earlier line: not the frame's code.
      return e.generatedLine === line && typeof e.originalSource === 'string' ? { url: e.originalSource, line: e.originalLine, column: e.originalColumn } : null;
    } catch {
      return null;
    }
  });
}

/**
 * The cached map of a script file, read anew when the file changed or was read with a smaller
 * `maxBytes`: `{ parts, reason, chars, limit? }`, parts null without one (`limit`: larger than that).
 */
function mapOnDisk(file, maxBytes) {
  let stat;
  try {
    stat = fs.statSync(file, { throwIfNoEntry: false });
  } catch {
    stat = undefined;
  }
  if (!stat?.isFile()) return { parts: null, reason: null };
  const stamp = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  const known = cache.get(file);
  if (known?.stamp === stamp && !(known.limit < maxBytes)) {
    cache.delete(file); // and set again: the most recently used last
    cache.set(file, known);
    return known;
  }
  forget(file);
  let entry;
  try {
    const parts = readMap(file, stat.size, maxBytes);
    entry = { stamp, parts, reason: null, chars: parts === null ? 0 : parts.reduce((n, p) => n + p.mappings.length, 0) };
  } catch (e) {
    entry = e.limit < MAX_MAP_BYTES ? { stamp, parts: null, reason: null, chars: 0, limit: e.limit } : { stamp, parts: null, reason: e.message, chars: 0 };
  }
  if (entry.chars <= CACHE_CHARS) remember(file, entry);
  return entry;
}

function forget(file) {
  const known = cache.get(file);
  if (known === undefined) return;
  cache.delete(file);
  cachedChars -= known.chars;
}

function remember(file, entry) {
  for (const [old, e] of cache) {
    if (cachedChars + entry.chars <= CACHE_CHARS && cache.size < CACHE_SCRIPTS) break;
    cache.delete(old);
    cachedChars -= e.chars;
  }
  cache.set(file, entry);
  cachedChars += entry.chars;
}

/** The path of a frame's script: a file: URL's, an absolute path; null for anything else (node:, eval, a network URL). */
function fileOf(url) {
  try {
    if (url.startsWith('file:')) return fileURLToPath(url);
  } catch {
    return null;
  }
  return path.isAbsolute(url) ? url : null;
}

module.exports = { withOriginals, liveOriginals };

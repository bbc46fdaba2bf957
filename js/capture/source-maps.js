'use strict';
// Original locations, where the app has source maps (TypeScript, bundlers), for the frames of
// what a capture collected: the CPU profile's call frames (so the analysis, the words of its
// patterns, the flame tree and the stall stacks taken from the profile name the original), the
// stack sampler's stall stacks and the slow I/O callers. A mapped frame keeps its generated
// location as `generated`. Each script's map is looked up once per report, before it is built.
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

const fs = require('node:fs');
const path = require('node:path');
const { findSourceMap } = require('node:module');
const { fileURLToPath } = require('node:url');
const { redactLink } = require('../redact');
const { isOwn } = require('../own');
const { originals } = require('./mappings');
const { readMap } = require('./map-files');

const MAX_SCRIPTS = 1000; // looked up per report; frames of others stay generated
const MAX_SKIPPED = 20; // listed per report; the rest counted
const CACHE_CHARS = 16 * 1024 * 1024; // of mappings kept across reports: a large bundle's
const CACHE_SCRIPTS = 2000;
const NOT_VLQ = 'its mappings are not base64 VLQ';

const STALL_STACKS = ['stack', 'stackSeen']; // the stack sampler's (a profile's come mapped with it)
const IO_STACKS = ['stack'];

const cache = new Map(); // script file -> { stamp, parts (null: no map), reason, chars }, oldest first
let cachedChars = 0;

/**
 * What a capture collected, with original locations: `{ profile, stalls, io, sourceMaps }`. The
 * profile is a copy with mapped call frames (V8's own stays as it was, for the .cpuprofile and
 * pprof files); `sourceMaps` is `{ scripts, skipped, dropped }` (scripts whose frames were
 * mapped, maps left aside and why), null when no script had one.
 */
function withOriginals({ profile, stalls, io }) {
  const asks = new Asks();
  const nodes = profile?.nodes ?? [];
  const nodeAsks = nodes.map(({ callFrame: f }) => asks.add(f.url, f.lineNumber, f.columnNumber));
  // Stacks are `[{ functionName, url, line, column }]`, 1-based; the events' keys that hold them.
  const asked = (e, keys) => keys.map((key) => (Array.isArray(e[key]) ? e[key].map((f) => asks.add(f?.url, f?.line - 1, (f?.column ?? 1) - 1)) : null));
  const stallAsks = stalls.map((e) => asked(e, STALL_STACKS));
  const ioAsks = io.map((e) => asked(e, IO_STACKS));
  const { found, sourceMaps } = asks.answer();
  const frame = (f, i) => (i >= 0 && found[i] !== null ? { ...f, ...found[i], generated: { url: f.url, line: f.line, column: f.column } } : f);
  const mapped = (e, keys, at) => {
    const out = { ...e };
    keys.forEach((key, k) => {
      if (at[k] !== null) out[key] = e[key].map((f, j) => frame(f, at[k][j]));
    });
    return out;
  };
  return {
    profile: profile && {
      ...profile,
      nodes: nodes.map((node, i) => (found[nodeAsks[i]] ? { ...node, callFrame: mappedCallFrame(node.callFrame, found[nodeAsks[i]]) } : node)),
    },
    stalls: stalls.map((e, i) => mapped(e, STALL_STACKS, stallAsks[i])),
    io: io.map((e, i) => mapped(e, IO_STACKS, ioAsks[i])),
    sourceMaps,
  };
}

/** A profile call frame at its original location (0-based, as V8's), its generated one kept (1-based, as a frame's). */
function mappedCallFrame(f, { url, line, column }) {
  const generated = { url: redactLink(f.url), line: f.lineNumber + 1, column: f.columnNumber + 1 };
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

  /** `found`: per ask, `{ url, line, column }` (1-based, redacted) or null; and the report's `sourceMaps`. */
  answer() {
    const found = new Array(this.#count).fill(null);
    const sourceMaps = { scripts: 0, skipped: [], dropped: 0 };
    for (const [url, script] of this.#byScript) {
      if (script === null) continue;
      const { positions, at } = script;
      const { answers, reason } = originalsOf(url, positions);
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

/** For each 0-based position of `url`, its original (0-based) or null; `answers` null without a map, `reason` why one was left aside. */
function originalsOf(url, positions) {
  const file = fileOf(url);
  const entry = mapOnDisk(file);
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

/** The cached map of a script file, read anew when the file changed: `{ parts, reason }`, parts null without one. */
function mapOnDisk(file) {
  let stat;
  try {
    stat = fs.statSync(file, { throwIfNoEntry: false });
  } catch {
    stat = undefined;
  }
  if (!stat?.isFile()) return { parts: null, reason: null };
  const stamp = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}`;
  const known = cache.get(file);
  if (known?.stamp === stamp) {
    cache.delete(file); // and set again: the most recently used last
    cache.set(file, known);
    return known;
  }
  forget(file);
  let entry;
  try {
    const parts = readMap(file, stat.size);
    entry = { stamp, parts, reason: null, chars: parts === null ? 0 : parts.reduce((n, p) => n + p.mappings.length, 0) };
  } catch (e) {
    entry = { stamp, parts: null, reason: e.message, chars: 0 };
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

module.exports = { withOriginals };

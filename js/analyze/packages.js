'use strict';
// Busy time by whose code ran: each npm package, Node's own code, the app's, and V8's entries,
// from the profile's frames (js/analyze/index.js measures the self time; this sums it by owner).
//
// A frame's owner comes from its file: under node_modules the innermost package there (nested
// node_modules, pnpm's .pnpm/<name>@<version>/node_modules/<name>, Yarn's zip caches all end in
// node_modules/<name>), scoped names whole (@org/name); node: URLs are Node's; any other file
// is the app's. A frame with no file of its own (native code such as a C++ binding or a
// compiled regex, code compiled by eval or new Function, WebAssembly) and rloop's own wrappers
// belong to their caller: V8's builtins have no frame at all and land on their caller anyway,
// and a package's regex or JSON.parse is that package's work. What no caller claims is native;
// GC and (program) are their own; idle is no busy time and belongs to none.

const { isOwn } = require('../own');
const { ms, percent } = require('./units');

const PACKAGES = 30; // packages listed; the rest are summed in one entry
const TOP_FUNCTIONS = 3;
const LABELS = { node: '(node core)', app: '(app)', native: '(native)', gc: '(garbage collector)', program: '(program)' };
const OTHER_PACKAGES = '(other packages)';
const SEPARATOR = /[/\\]/;
const NO_FILE = /^(wasm:\/\/|$)/;

/** The npm package a frame's URL or path is in ('@org/name'), else null. */
function packageOf(url) {
  if (typeof url !== 'string') return null;
  const parts = url.split(SEPARATOR);
  const at = parts.lastIndexOf('node_modules');
  if (at < 0) return null;
  const segment = url.startsWith('file:') ? (k) => decoded(parts[k]) : (k) => parts[k];
  const scoped = segment(at + 1)?.startsWith('@');
  const end = at + (scoped ? 3 : 2); // the name's segments, then at least the file
  if (end >= parts.length || parts[end - 1] === '') return null;
  return scoped ? `${segment(at + 1)}/${segment(at + 2)}` : segment(at + 1);
}

/** A file URL's path segment as a name ('%40scope' is '@scope'). */
function decoded(segment) {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment; // not percent-encoding after all
  }
}

/** The owner of a frame with a file: `[kind, package name]`; null when it belongs to its caller. */
function ownerOf(frame) {
  const { url } = frame;
  if (NO_FILE.test(url) || isOwn(frame)) return null;
  if (url.startsWith('node:')) return ['node', null];
  // At its original location (js/capture/source-maps.js): the package it ran in, else the one its
  // source is in (a library bundled into the app's file).
  const name = packageOf(frame.generated?.url) ?? packageOf(url);
  return name === null ? ['app', null] : ['package', name];
}

/** The npm package whose file a profile call frame is in, else null (rloop's own is none). */
function packageOfFrame(frame) {
  const owner = ownerOf(frame);
  return owner?.[0] === 'package' ? owner[1] : null;
}

/**
 * Self time by owner, heaviest first, from what js/analyze/index.js measured (`nodes`, `parent`,
 * `order` parents first, `self` µs, `fnOf`, `category` and its `names`). Each entry:
 * `{ name, kind, selfMs, busyPercent, topFunctions }`, `busyPercent` of `busyUs`, the profile's
 * busy time; together they are all of it.
 */
function busyByPackage({ nodes, parent, order, self, fnOf, category, names }, busyUs, frameOfFn) {
  const pseudo = new Map([['gc', 'gc'], ['program', 'program'], ['idle', null]].map(([c, kind]) => [names.indexOf(c), kind]));
  const buckets = [];
  const byKey = new Map();
  const bucket = (kind, name) => {
    const key = kind === 'package' ? `package:${name}` : kind;
    let b = byKey.get(key);
    if (b === undefined) {
      b = buckets.length;
      byKey.set(key, b);
      buckets.push({ kind, name: name ?? LABELS[kind], us: 0, byFn: new Map() });
    }
    return b;
  };
  const byUrl = new Map(); // url -> bucket, -1: the caller's
  const charged = new Int32Array(nodes.length).fill(-1); // the bucket of each node's self time; -1: none (idle)
  for (const i of order) {
    const c = category[i];
    if (pseudo.has(c)) {
      // V8's entries: no caller, and callees (if any) are no work of theirs.
      const kind = pseudo.get(c);
      if (kind !== null) charged[i] = bucket(kind);
      continue;
    }
    const frame = nodes[i].callFrame;
    let b = byUrl.get(frame.url);
    if (b === undefined) {
      const owner = ownerOf(frame);
      b = owner === null ? -1 : bucket(...owner);
      byUrl.set(frame.url, b);
    }
    const p = parent[i];
    charged[i] = b >= 0 ? b : p >= 0 && charged[p] >= 0 && !pseudo.has(category[p]) ? charged[p] : bucket('native');
  }
  for (let i = 0; i < nodes.length; i++) {
    const b = charged[i];
    if (b < 0 || self[i] === 0) continue;
    buckets[b].us += self[i];
    buckets[b].byFn.set(fnOf[i], (buckets[b].byFn.get(fnOf[i]) ?? 0) + self[i]);
  }
  const used = buckets.filter((b) => b.us > 0).sort((a, b) => b.us - a.us);
  const packages = used.filter((b) => b.kind === 'package');
  const listed = new Set(packages.slice(0, PACKAGES));
  const rest = packages.slice(PACKAGES);
  const entry = ({ name, kind, us, byFn }) => ({
    name,
    kind,
    selfMs: ms(us),
    busyPercent: percent(us, busyUs),
    topFunctions: [...byFn].sort((a, b) => b[1] - a[1]).slice(0, TOP_FUNCTIONS).map(([fn, fnUs]) => ({ ...frameOfFn(fn), selfMs: ms(fnUs) })),
  });
  const out = used.filter((b) => b.kind !== 'package' || listed.has(b)).map(entry);
  if (rest.length > 0) {
    const us = rest.reduce((sum, b) => sum + b.us, 0);
    out.push({ name: OTHER_PACKAGES, kind: 'package', selfMs: ms(us), busyPercent: percent(us, busyUs), topFunctions: [], packages: rest.length });
  }
  return out;
}

module.exports = { packageOf, packageOfFrame, busyByPackage };

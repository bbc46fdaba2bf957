'use strict';
// Timers by where they were created: a setTimeout/setInterval created outside any scope is
// charged to `setInterval at app.js:19`, the first frame of the app's own code in a stack taken
// as the timer is created (not Node's, not rloop's, not node_modules unless nothing else; the
// path relative to the working directory). Naming is paid once per call site; the stack, once
// per timer created outside a scope. A timer's fires cost nothing more: the scope is its tag.

const path = require('node:path');
const { fileURLToPath } = require('node:url');
const hooks = require('../hooks');

const MAX_SITES = 1000; // distinct call sites named; timers from more are unattributed, and counted
const FRAMES = 24; // Node's own frames between the hook and the caller are ≈ 6
const PACKAGE = path.join(__dirname, '..', '..');
const RLOOP_DIRS = ['js', 'register', 'node-red', 'cli'].map((d) => path.join(PACKAGE, d) + path.sep); // rloop's own code
const NODE_MODULES = `${path.sep}node_modules${path.sep}`;

const callSites = (_, sites) => sites;

/** The call sites of the stack here: V8's structured frames, whatever the app set for its own stacks. */
function stackHere() {
  const { prepareStackTrace, stackTraceLimit } = Error;
  const holder = {};
  try {
    Error.prepareStackTrace = callSites;
    Error.stackTraceLimit = FRAMES;
    Error.captureStackTrace(holder);
    return holder.stack;
  } finally {
    Error.prepareStackTrace = prepareStackTrace;
    Error.stackTraceLimit = stackTraceLimit;
  }
}

/** The frame to name a timer after: the app's first, else a package's first; undefined if only Node's. */
function creator(sites) {
  let fallback;
  for (const site of sites) {
    const file = site.getFileName();
    if (!file || file.startsWith('node:') || RLOOP_DIRS.some((d) => file.startsWith(d))) continue;
    if (!file.includes(NODE_MODULES)) return site;
    fallback ??= site;
  }
  return fallback;
}

function shown(file, cwd) {
  const local = file.startsWith('file:') ? fileURLToPath(file) : file;
  if (!path.isAbsolute(local)) return local;
  const rel = path.relative(cwd, local);
  return rel.startsWith(`..${path.sep}`) ? local : rel;
}

/** Starts naming timers for `monitor`; returns `{ stop(), stats() }`. */
function start(monitor) {
  const cwd = process.cwd();
  const sites = new Map(); // 'file:line:column kind' -> context
  let overflowed = 0;

  // Called inside the init hook: it must never throw (an exception there ends the process).
  function contextOf(timeout) {
    try {
      return named(timeout);
    } catch {
      return hooks.ROOT;
    }
  }

  function named(timeout) {
    const stack = stackHere();
    const site = Array.isArray(stack) ? creator(stack) : undefined;
    if (site === undefined) return hooks.ROOT;
    const kind = timeout._repeat === null ? 'setTimeout' : 'setInterval';
    const id = `${site.getFileName()}:${site.getLineNumber()}:${site.getColumnNumber()} ${kind}`;
    let ctx = sites.get(id);
    if (ctx === undefined) {
      if (sites.size >= MAX_SITES) {
        overflowed++;
        return hooks.ROOT;
      }
      ctx = monitor.context(`${kind} at ${shown(site.getFileName(), cwd)}:${site.getLineNumber()}`.slice(0, 256));
      sites.set(id, ctx);
    }
    return ctx;
  }

  hooks.scopeTimers(contextOf);
  return {
    stop() {
      hooks.scopeTimers(null);
    },
    stats: () => ({ sites: sites.size, overflowed }),
  };
}

module.exports = { start, creator };

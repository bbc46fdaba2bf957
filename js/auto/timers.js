'use strict';
// Timers by where they were created: a setTimeout/setInterval created outside any scope is
// charged to `setInterval at app.js:19`, the first frame of the app's own code in a stack taken
// as the timer is created (not Node's, not rloop's, not node_modules unless nothing else; the
// path relative to the working directory). A stack costs microseconds: it is taken once per
// callback function (a chain of `setTimeout(tick)` pays once) and the name once per call site.
// A timer's fires cost nothing more: the scope is its tag.

const path = require('node:path');
const { fileURLToPath } = require('node:url');
const hooks = require('../attribution');
const { isOwnFile } = require('../own');
const { attempt } = require('../attempt');

const MAX_SITES = 1000; // distinct call sites named; timers from more are unattributed, and counted
const FRAMES = 18; // rloop's own frames in the hook are 6, Node's between the hook and the caller ≈ 6
const HOOK_FILES = [require.resolve('../attribution/by-tag'), require.resolve('../attribution/by-context-frame'), require.resolve('../attempt'), __dirname + path.sep]; // the init hooks that call contextOf(), and it
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

/**
 * The frame to name a timer after: the app's first, else a package's first; undefined if only
 * Node's, or if rloop's own code made it (its timers are unattributed, as all its work).
 */
function creator(sites) {
  let fallback;
  for (const site of sites) {
    const file = site.getFileName();
    if (!file || file.startsWith('node:') || HOOK_FILES.some((f) => file.startsWith(f))) continue;
    if (isOwnFile(file)) {
      if (fallback === undefined) return undefined;
      continue;
    }
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

/** Timer names for `monitor`, off until naming(true); returns `{ naming(on), stop(), stats() }`. */
function start(monitor) {
  const cwd = process.cwd();
  const sites = new Map(); // 'file:line:column kind' -> context
  const byCallback = new WeakMap(); // a timer's callback -> the context of the timer it first came with
  let overflowed = 0;

  // Called inside the init hook: it must never throw (an exception there ends the process).
  function contextOf(timeout) {
    return attempt(lookUp, timeout) ?? hooks.UNATTRIBUTED;
  }

  function lookUp(timeout) {
    const fn = timeout._onTimeout;
    let ctx = byCallback.get(fn);
    if (ctx === undefined) {
      ctx = named(timeout);
      if (typeof fn === 'function') byCallback.set(fn, ctx);
    }
    return ctx;
  }

  function named(timeout) {
    const stack = stackHere();
    const site = Array.isArray(stack) ? creator(stack) : undefined;
    if (site === undefined) return hooks.UNATTRIBUTED;
    const kind = timeout._repeat === null ? 'setTimeout' : 'setInterval';
    const id = `${site.getFileName()}:${site.getLineNumber()}:${site.getColumnNumber()} ${kind}`;
    let ctx = sites.get(id);
    if (ctx === undefined) {
      if (sites.size >= MAX_SITES) {
        overflowed++;
        return hooks.UNATTRIBUTED;
      }
      ctx = monitor.context(`${kind} at ${shown(site.getFileName(), cwd)}:${site.getLineNumber()}`.slice(0, 256), undefined, 'timer');
      sites.set(id, ctx);
    }
    return ctx;
  }

  return {
    /** Names timers from now on (true) or no more (false): a stack is too dear to take always. */
    naming(on) {
      hooks.scopeTimers(on ? contextOf : null);
    },
    stop() {
      hooks.scopeTimers(null);
    },
    stats: () => ({ sites: sites.size, overflowed }),
  };
}

module.exports = { start, creator };

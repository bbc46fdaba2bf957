'use strict';
// rloop's store on AsyncContextFrame (Node ≥ 24), entered without copying a frame where the copy
// would change nothing.
//
// `enterWith()` copies the current frame (a Map of every store) into a new one: an enter() and
// its restore() were two copies, ≈ 0.25 µs each on Node 26, the largest part of what charging a
// Node-RED delivery costs (bench/acf.md). With Node's own AsyncContextFrame class, whose static
// current() and set() read and write the frame V8 carries:
// - a restore() puts back the very frame its enter() replaced, when that frame held the context
//   restored and neither frame changed since (an app's `als.disable()` deletes from the frame);
// - an entry of a scope from a frame that holds nothing but rloop's store, with a scope or no
//   context in it, takes the frame made for that scope from that same frame last time, from the
//   scope's second entry from it on (a scope entered once keeps no frame). Such frames hold no app
//   data and no key's context, so what they keep alive is bounded by maxScopes;
// - a frame it does make (every keyed entry makes one) is built as an empty Map of that class and
//   filled with what enterWith() would put in it (frameOf()), without the garbage of its copy.
// The class is Node's internal: it is learnt as the monitor starts, from the frame AsyncResource's
// constructor reads (stopped at its first store, before it takes an asyncId or tells a hook: see
// learn()), and checked to be what getStore() reads; where it is not found every entry is an
// enterWith().

const { AsyncResource, AsyncLocalStorage } = require('node:async_hooks');

const NEVER = Symbol('rloop.noFrame'); // a context's `enteredFrom` before any frame is cached for it
const PROBE = Symbol('rloop.probe'); // the value learn() enters, and takes back at once

let store = null; // rloop's AsyncLocalStorage
let UNATTRIBUTED = null; // the unattributed context: no store
let ContextFrame = null; // Node's AsyncContextFrame, once learnt
// On each frame rloop makes, the context it holds: read at every callback (context()), where a
// Map lookup is most of what finding the scope costs. New per monitor: a frame of an earlier
// one holds no context of this one.
let CONTEXT = Symbol('rloop.context');
// The last entry: the context it replaced, the frame that context was in, and the frame made.
let last = null;
let before;
let beforeSize = 0;
let made;
let madeSize = 0;

/** Enters contexts in `als` from now on, a store of its own per monitor; `unattributed`: the context outside every scope. */
function use(als, unattributed) {
  als.enterWith(undefined);
  store = als;
  UNATTRIBUTED = unattributed;
  unattributed.enteredFrom = NEVER; // its context frame was made for another store
  unattributed.madeFrame = undefined;
  CONTEXT = Symbol('rloop.context');
  ContextFrame = als instanceof AsyncLocalStorage ? learn() : null;
  if (ContextFrame !== null) ContextFrame.current()[CONTEXT] = unattributed;
  forget();
}

/** The context of the frame in force: the one rloop entered there, or UNATTRIBUTED. */
function context() {
  return ContextFrame === null ? store.getStore() ?? UNATTRIBUTED : contextIn(ContextFrame.current());
}

/** The context `frame` holds, UNATTRIBUTED for none or no frame. */
function contextIn(frame) {
  if (frame === undefined) return UNATTRIBUTED;
  const ctx = frame[CONTEXT];
  return ctx !== undefined ? ctx : frame.get(store) ?? UNATTRIBUTED; // a frame the app made, from one of rloop's
}

function forget() {
  last = before = made = undefined;
}

const valueOf = (ctx) => (ctx === UNATTRIBUTED ? undefined : ctx); // unattributed is no store, as outside every scope()

/** Enters `ctx`, which replaces `prev`; restore(prev) then ends the entry. */
function enter(ctx, prev) {
  if (ContextFrame === null) return store.enterWith(valueOf(ctx));
  const from = ContextFrame.current();
  put(ctx, from);
  if (contextIn(from) === prev) {
    last = prev;
    before = from;
    beforeSize = from?.size ?? 0;
    made = ContextFrame.current();
    madeSize = made.size;
  } else forget();
}

/** Enters `ctx` again, where the last enter() replaced it: that entry ends. */
function restore(ctx) {
  if (ContextFrame === null) return store.enterWith(valueOf(ctx));
  const now = ContextFrame.current();
  const back = ctx === last && now === made && now.size === madeSize && (before?.size ?? 0) === beforeSize ? before : NEVER;
  forget(); // keeps no app data, nor a key's context, past the entry, whichever it ends
  if (back !== NEVER) return ContextFrame.set(back);
  put(ctx, now);
}

/** Enters `ctx` in the current frame, `from`. */
function put(ctx, from = ContextFrame?.current()) {
  if (ContextFrame === null) return store.enterWith(valueOf(ctx));
  if (ctx.enteredFrom === from && ctx.madeFrame !== undefined) return ContextFrame.set(ctx.madeFrame);
  const frame = frameOf(valueOf(ctx), from);
  frame[CONTEXT] = ctx;
  ContextFrame.set(frame);
  if (ctx.key === undefined && plain(from)) {
    if (ctx.enteredFrom === from) ctx.madeFrame = frame;
    else {
      ctx.enteredFrom = from;
      ctx.madeFrame = undefined;
    }
  }
}

/**
 * The frame enterWith(value) would make over `from`: its stores, rloop's holding `value`. Built
 * as an empty Map of Node's class and filled, not by the class's constructor, which copies
 * `from` through its iterator (an array per store and the iterator's results: 40 % of the bytes
 * a keyed entry allocated).
 */
function frameOf(value, from) {
  const frame = Reflect.construct(Map, [], ContextFrame);
  if (from !== undefined) from.forEach(copyTo, frame);
  frame.set(store, value);
  return frame;
}

function copyTo(value, key) {
  this.set(key, value);
}

/** A frame of rloop's store alone, holding a scope's context or none. */
function plain(from) {
  if (from === undefined) return true;
  if (from.size !== 1) return false;
  const v = from.get(store);
  return v === undefined ? from.has(store) : v.key === undefined;
}

const STOP = Symbol('rloop.stop');

// Node's AsyncContextFrame class, or null: the frame in force (rloop's store was just entered) as
// AsyncResource's constructor stores it on the new resource, which a prototype that is a Proxy
// sees. The constructor is stopped at that first store, before it takes an asyncId or calls any
// hook: the app sees nothing (test/attribution/frames.test.js). Kept only if a frame built as
// frameOf() builds one, once set(), is what getStore() reads, and set() puts the frame before back.
function learn() {
  let frame;
  function Probe() {}
  Probe.prototype = new Proxy({}, {
    set(target, key, value) {
      frame = value;
      throw STOP;
    },
  });
  try {
    Reflect.construct(AsyncResource, ['rloop'], Probe);
  } catch (e) {
    if (e !== STOP) return null;
  }
  const C = typeof frame === 'object' && frame !== null ? frame.constructor : undefined;
  if (typeof C?.current !== 'function' || typeof C.set !== 'function' || C.current() !== frame || typeof frame.forEach !== 'function') return null;
  ContextFrame = C;
  C.set(frameOf(PROBE, frame));
  const seen = store.getStore() === PROBE;
  C.set(frame);
  ContextFrame = null;
  return seen && C.current() === frame && store.getStore() !== PROBE ? C : null;
}

module.exports = { NEVER, use, context, contextIn, enter, restore, put };

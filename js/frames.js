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
//   context in it, takes the frame made for that scope from that same frame last time. Such frames
//   hold no app data and no key's context, so what they keep alive is bounded by maxScopes.
// The class is Node's internal: it is learnt from a frame a resource carries (the first callbacks
// of timers and immediates, and entries, look) and checked against what enterWith() does; where it
// is not found every entry is an enterWith(), as before. A resource carries no frame until some
// store was entered, so use() enters rloop's (holding no context, as outside every scope): what
// the app makes from then on carries one, inside scopes or not.

const { executionAsyncResource } = require('node:async_hooks');

// Callbacks, and entries, that look for the class before it is given up. Looking in the first
// 16 384 callbacks put ≈ 350 instructions on each await by bench/instructions.js's slope; entries
// are fewer, and where they run in timers and immediates (Node-RED's deliveries) the first finds it.
const LEARN_CALLBACKS = 1024;
const LEARN_ENTRIES = 65536;
const NEVER = Symbol('rloop.noFrame'); // a context's `from` before any frame is cached for it
const PROBE = Symbol('rloop.probe'); // the value learn() enters, and takes back at once

let store = null; // rloop's AsyncLocalStorage
let ROOT = null; // the unattributed context: no store
let Frames = null; // Node's AsyncContextFrame, once learnt
let tries = 0; // callbacks that looked
let entryTries = 0;
// The last entry: the context it replaced, the frame that context was in, and the frame made.
let last = null;
let before;
let beforeSize = 0;
let made;
let madeSize = 0;

/** Enters contexts in `als` from now on, a store of its own per monitor; `root` is the unattributed context. */
function use(als, root) {
  als.enterWith(undefined);
  store = als;
  ROOT = root;
  root.from = NEVER; // its frame was made for another store
  root.frame = undefined;
  Frames = null;
  tries = entryTries = 0;
  forget();
}

function forget() {
  last = before = made = undefined;
}

const valueOf = (ctx) => (ctx === ROOT ? undefined : ctx); // unattributed is no store, as outside every scope()

/** Enters `ctx`, which replaces `prev`; restore(prev) then ends the entry. */
function enter(ctx, prev) {
  if (Frames === null) {
    if (entryTries++ < LEARN_ENTRIES) look(executionAsyncResource());
    if (Frames === null) return store.enterWith(valueOf(ctx));
  }
  const from = Frames.current();
  put(ctx, from);
  if (from === undefined ? prev === ROOT : from.get(store) === valueOf(prev)) {
    last = prev;
    before = from;
    beforeSize = from?.size ?? 0;
    made = Frames.current();
    madeSize = made.size;
  } else forget();
}

/** Enters `ctx` again, where the last enter() replaced it: that entry ends. */
function restore(ctx) {
  if (Frames === null) return store.enterWith(valueOf(ctx));
  const now = Frames.current();
  const back = ctx === last && now === made && now.size === madeSize && (before?.size ?? 0) === beforeSize ? before : NEVER;
  forget(); // keeps no app data, nor a key's context, past the entry, whichever it ends
  if (back !== NEVER) return Frames.set(back);
  put(ctx, now);
}

/** Enters `ctx` in the current frame, `from`. */
function put(ctx, from = Frames?.current()) {
  if (Frames === null) return store.enterWith(valueOf(ctx));
  if (ctx.from === from) return Frames.set(ctx.frame);
  store.enterWith(valueOf(ctx));
  if (ctx.key === undefined && plain(from)) {
    ctx.from = from;
    ctx.frame = Frames.current();
  }
}

/** A frame of rloop's store alone, holding a scope's context or none. */
function plain(from) {
  if (from === undefined) return true;
  if (from.size !== 1) return false;
  const v = from.get(store);
  return v === undefined ? from.has(store) : v.key === undefined;
}

/** Whether callbacks still look for the class (learn()). */
function learning() {
  return Frames === null && tries < LEARN_CALLBACKS;
}

/** Looks for the class on the resource `r` whose callback begins. */
function learn(r) {
  tries++;
  look(r);
}

// Learns the class from a frame `r` carries (a timer's or an immediate's, as its callback runs),
// if it is one: kept only if enterWith() makes its current() an instance holding the value, and
// its set() puts the frame before back, as found.
function look(r) {
  if (typeof r !== 'object' || r === null || r instanceof Promise) return; // a promise keeps its frame in V8
  for (const s of Object.getOwnPropertySymbols(r)) {
    const f = r[s];
    const C = typeof f === 'object' && f !== null ? f.constructor : undefined;
    if (typeof C?.current !== 'function' || typeof C.set !== 'function') continue;
    const was = C.current();
    store.enterWith(PROBE);
    const mine = C.current();
    const made = mine instanceof C && mine !== was && typeof mine.get === 'function' && mine.get(store) === PROBE;
    C.set(was);
    if (made && C.current() === was && store.getStore() !== PROBE) Frames = C;
    return;
  }
}

module.exports = { NEVER, use, enter, restore, put, learning, learn };

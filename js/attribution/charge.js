// Charging: the slot the ledger charges follows the context running now, switched as callbacks
// begin and end and as code enters and leaves scopes. How the context reaches a callback is one
// of two carriers, js/attribution/by-tag.js or js/attribution/by-context-frame.js
// (js/attribution/hooks.js picks one); both begin and end callbacks here.
//
// Not strict mode on purpose: retag() tags resources, and tagging a frozen one must fail
// silently, never throw into the adapter's hook (an exception there kills the process).
//
// The clock is read only when the charged slot changes, and at depth 0 `after` leaves the
// interval open: the next callback of the same scope continues it, and the addon's prepare
// handle closes it just before the loop waits, so idle time is never charged.

const { now } = require('../clock');
const { attempt } = require('../attempt');
const { Timeline, OUTSIDE_CALLBACKS } = require('./timeline');
const layout = require('./ledger');
const { NEVER } = require('./context-frames');
const { RING, ids: ringIds, contexts: ringCtx } = require('./ring');

const { SINCE, WAKE, WANT, WINDOW, HEADER, SEQ, RLOOP, ORDERED, NO_LEDGER, NO_LEDGER_R, runningView, openSwitch } = layout;

let epoch = 0; // one per monitor: contexts of an earlier monitor name slots of another ledger

/**
 * What resources are tagged with: the slot charged, the scope's own context, and its name and
 * key. A key's slot is charged while `gen` is the slot's generation: once the slot is taken by
 * a newer key, the key's late work goes to its scope, and nothing of rloop's holds the context.
 */
class Context {
  constructor(slot, scope, name, key, gen) {
    this.slot = slot;
    this.scope = scope;
    this.name = name;
    this.key = key;
    this.gen = gen;
    this.epoch = epoch;
    this.automatic = false; // or what an automatic-scope adapter (js/auto/) gave: 'route', 'timer'; any scope of the app's wins
    // The context frame this context was last entered from, and the one made then (js/attribution/context-frames.js).
    this.enteredFrom = NEVER;
    this.madeFrame = undefined;
  }
}

// The context outside every scope, under every monitor; its slot is the ledger's UNATTRIBUTED.
const UNATTRIBUTED = new Context(layout.UNATTRIBUTED, null, null, undefined, 0);

/** What the carriers share with charging. */
const state = {
  cur: UNATTRIBUTED, // the context new resources inherit
  depth: 0, // callbacks running, nested
  tag: Symbol('rloop.scope'), // the property resources are tagged with, new per monitor: tags from an earlier one mean nothing
  tagged: false, // whether a resource was tagged on AsyncContextFrame: only then can an unscoped callback have a tag
  timerContext: null, // (resource) -> context of a timer created outside any scope (js/auto/timers.js)
};

let L = NO_LEDGER; // the ledger
let R = NO_LEDGER_R; // its RUNNING cell: the slot charged now, or -1 while idle
let CALLS = HEADER; // offset of the per-slot callback counters
let GEN = new Int32Array(1); // by slot: a key slot's generation, bumped as a newer key takes it; 0 for the others
const enclosing = []; // by depth: the context each nested callback began inside
let onWant = null; // starts what takes stacks of stalls, once one has happened
let onWake = null; // rloop's own periodic work, run as the loop wakes instead of on a timer
let wakeAt = Infinity; // when onWake is due
let log = null; // every change of scope, only while a CPU profile runs (js/attribution/timeline.js)
let recorders = 0; // the captures reading `log`

function context(slot, scope, name, key) {
  return new Context(slot, scope, name, key, 0);
}

/** A key's context in key slot `slot`, which it takes from the slot's earlier keys. */
function keyContext(slot, scope, key) {
  const gen = (GEN[slot] + 1) | 0;
  GEN[slot] = gen;
  return new Context(slot, scope, scope.name, key, gen);
}

/** Whether key context `ctx` still owns its slot: no newer key took it. */
function owns(ctx) {
  return GEN[ctx.slot] === ctx.gen;
}

/**
 * Moves key context `ctx`, which owns its slot, to `scope`: what it tags and its late work are
 * charged there from now on (the addon moves its window so far: js/attribution/scopes.js `rescope`).
 */
function moveKey(ctx, scope) {
  ctx.scope = scope;
  ctx.name = scope.name;
}

/** The slot `ctx` is charged to: its own, or its scope's once a newer key took the slot. */
function slotOf(ctx) {
  const slot = ctx.slot;
  return GEN[slot] === ctx.gen ? slot : scopeSlot(ctx);
}

/** The slot of a context's scope: a key's slot is rebound to other keys, its scope's never. */
function scopeSlot(ctx) {
  return (ctx.scope ?? ctx).slot;
}

/** A context's key while the slot charged for it is the key's own, else undefined (then its scope is charged). */
function liveKey(ctx) {
  return GEN[ctx.slot] === ctx.gen ? ctx.key : undefined;
}

function isContext(x) {
  return x instanceof Context;
}

function charge(slot) {
  let at = now();
  const running = R[0];
  if (log !== null) logSwitch(at, running);
  const wake = at;
  // Before the switch's stores: rloop's own work may read the ledger (a reader waits for a switch to end).
  if (running < 0 && (L[WANT] !== 0 || at >= wakeAt)) at = woke(at);
  const seq = ORDERED ? 0 : openSwitch(R);
  if (running >= 0) {
    const since = L[SINCE];
    L[SINCE] = at; // before the total: a reader that sees the new total sees where it ends (x64)
    L[HEADER + running] += at - since;
  } else {
    L[WAKE] = wake; // the loop wakes: a new stretch (src/stalls/lag.rs)
    L[SINCE] = at;
  }
  // Last: a reader that sees the new slot sees its start and its stretch's wake.
  if (ORDERED) R[0] = slot;
  else {
    Atomics.store(R, 0, slot);
    Atomics.store(R, SEQ, seq + 1);
  }
}

/** Logs a switch at `at` from `running` for the profile's timeline: state.cur is what is charged next. */
function logSwitch(at, running) {
  if (running < 0) log.add(L[SINCE], OUTSIDE_CALLBACKS); // the idle mark stamps SINCE (src/attribution/ledger.rs)
  log.add(at, scopeSlot(state.cur), liveKey(state.cur));
}

/** A callback of `ctx` begins: it is charged, and what it creates inherits it. */
function begin(ctx) {
  const depth = state.depth;
  if (depth !== 0) enclosing[depth] = state.cur; // a callback's after() at depth 0 goes back to UNATTRIBUTED, not to cur
  state.depth = depth + 1;
  state.cur = ctx;
  const slot = slotOf(ctx);
  L[CALLS + slot]++;
  if (R[0] !== slot) charge(slot);
}

/** A callback ends: the one it ran inside is charged again. */
function after() {
  const depth = state.depth - 1;
  if (depth < 0) return; // hooks were enabled inside this callback
  state.depth = depth;
  if (depth === 0) {
    state.cur = UNATTRIBUTED; // leave the interval open: coalesced with the next callback, or closed at idle
    return;
  }
  const ctx = enclosing[depth];
  state.cur = ctx;
  enclosing[depth] = undefined;
  const slot = slotOf(ctx);
  if (R[0] !== slot) charge(slot);
}

/** Code running now enters `ctx`: counted as a call of it, and charged to it. */
function enterCharged(ctx) {
  state.cur = ctx;
  const slot = slotOf(ctx);
  L[CALLS + slot]++;
  if (R[0] !== slot) charge(slot);
}

/** Code running now goes back to `ctx`: charged to it, no call counted. */
function restoreCharged(ctx) {
  state.cur = ctx;
  const slot = slotOf(ctx);
  if (R[0] !== slot) charge(slot);
}

/**
 * Runs `fn()`, rloop's own work (js/capture/own-work.js), charged to the ledger's RLOOP slot: no
 * scope's and not the app's busy time, which windows say apart (`rloopMs`). What it creates
 * inherits the context running, as without it; nested, the outer one goes on. Outside the
 * loop's stretches (an 'exit' listener, no monitor) nothing is charged, as for any code there.
 */
function ownCharged(fn) {
  const was = R[0];
  if (was < 0 || was === RLOOP) return fn();
  charge(RLOOP);
  try {
    return fn();
  } finally {
    const slot = slotOf(state.cur);
    if (R[0] >= 0 && R[0] !== slot) charge(slot);
  }
}

// rloop's own work, out of line, as the loop wakes: unattributed, and run in a callback rather
// than on a timer or at start, so whatever it creates is seen by the app's hooks in order.
function woke(at) {
  const c = state.cur;
  state.cur = UNATTRIBUTED;
  if (L[WANT] !== 0) {
    L[WANT] = 0;
    if (onWant !== null) attempt(onWant);
  }
  if (at >= wakeAt) wakeAt = attempt(onWake, at) ?? Infinity;
  state.cur = c;
  // rloop's own work is unattributed time, not the callback's about to run.
  const done = now();
  L[HEADER + UNATTRIBUTED.slot] += done - at;
  // In the profile's timeline too: switches inside that work are overruled (js/attribution/timeline.js).
  if (log !== null) {
    log.add(at, UNATTRIBUTED.slot);
    log.add(done, scopeSlot(c), liveKey(c));
  }
  return done;
}

/**
 * Calls `fn(now)` at the first wake of the loop at or after `at` (default: the next one), then
 * at the first at or after the `performance.now()` time it returns; null stops. Nothing runs
 * while the loop idles or is blocked, and no timer exists for the app to see.
 */
function atWake(fn, at = -Infinity) {
  onWake = fn;
  wakeAt = fn === null ? Infinity : Math.min(wakeAt, at);
}

/**
 * Starts charging `ledger` (a Float64Array laid out as src/attribution/ledger.rs says), of `slots` slots;
 * `want()` is called in the first callback after a stall that no stack could be taken of.
 */
function use(ledger, slots, want) {
  L = ledger;
  R = runningView(ledger);
  onWant = want ?? null;
  CALLS = HEADER + slots;
  GEN = new Int32Array(slots);
  state.tag = Symbol('rloop.scope');
  epoch++;
  state.cur = UNATTRIBUTED;
  state.depth = 0;
  L[SINCE] = L[WAKE] = now();
  Atomics.store(R, 0, UNATTRIBUTED.slot); // the code running now (the caller of start()) is unattributed busy time
}

/** Stops charging: writes go to no ledger, and nothing of the last monitor is held. */
function release() {
  L = NO_LEDGER;
  R = NO_LEDGER_R;
  onWant = null;
  atWake(null);
  CALLS = HEADER;
  GEN = new Int32Array(1);
  state.cur = UNATTRIBUTED;
  state.depth = 0;
  state.timerContext = null;
  enclosing.length = 0;
  log = null;
  recorders = 0;
}

/**
 * Charges `resource`'s callbacks (from the next one on) to `ctx`; returns the context they had.
 * An adapter's way to hand a long-lived handle (a keep-alive socket) to the request it serves.
 */
function retag(resource, asyncId, ctx) {
  const i = asyncId & (RING - 1);
  const prev = ringIds[i] === asyncId ? ringCtx[i] : resource[state.tag] ?? UNATTRIBUTED;
  resource[state.tag] = ctx;
  ringIds[i] = asyncId;
  ringCtx[i] = ctx;
  state.tagged = true;
  return prev;
}

/** Whether `ctx` was made under the running monitor. */
function ofMonitor(ctx) {
  return ctx.epoch === epoch;
}

/**
 * Starts recording every change of scope, for a CPU profile; returns a function that ends this
 * recording and gives `{ transitions: [[performance.now() ms, scope slot or OUTSIDE_CALLBACKS, key?]],
 * dropped, keysDropped }`, `key` where a keyed context was charged.
 * The first transition is the scope charged now.
 */
function recordTimeline() {
  log ??= new Timeline();
  recorders++;
  const from = log.length;
  const running = R[0];
  const known = running === slotOf(state.cur); // else the context charged is not known here, only its slot
  log.add(now(), running < 0 ? OUTSIDE_CALLBACKS : known ? scopeSlot(state.cur) : running, known ? liveKey(state.cur) : undefined);
  const mine = log;
  let done = false;
  return () => {
    if (mine !== log || done) return { transitions: [], dropped: 0, keysDropped: 0 }; // stopped meanwhile
    done = true;
    const out = { transitions: log.entries(from), dropped: log.dropped, keysDropped: log.keysDropped };
    if (--recorders === 0) log = null;
    return out;
  };
}

/** The slot being charged now, or -1 while idle. */
function running() {
  return R[0];
}

/** How long the loop has run in its current stretch, ms: since it woke (0 while idle). */
function inStretch(at) {
  return R[0] < 0 ? 0 : at - L[WAKE];
}

/** The seq of the running monitor's open window (its addon stores it as it closes one); -1 with none. */
function openWindowSeq() {
  return L[WINDOW];
}

module.exports = {
  UNATTRIBUTED, state, context, keyContext, owns, moveKey, isContext, ofMonitor, begin, after, enterCharged, restoreCharged, ownCharged, retag, atWake, use, release, recordTimeline, running, inStretch, openWindowSeq,
};

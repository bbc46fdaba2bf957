// The hot path: async hooks that charge busy time to ledger slots.
//
// Not strict mode on purpose: tagging a frozen resource must fail silently, never throw
// inside a hook (an exception there kills the process).
//
// Each async resource created while a scope is active is tagged with that scope's context
// (`{ slot, scope, key }`); `before` switches the charged slot to the resource's context and
// `after` switches back. The clock is read only when the charged slot changes, and at depth 0
// `after` leaves the interval open: the next callback of the same scope continues it, and the
// addon's prepare handle closes it just before the loop waits, so idle time is never charged.
// No `destroy` hook: the tag lives and dies with the resource, and a fixed ring by asyncId
// (js/attribution/ring.js) only saves looking it up.
//
// Where AsyncLocalStorage runs on AsyncContextFrame (Node ≥ 24 by default), the scope travels
// in a store of rloop's own instead, entered by enter() and restore() (js/attribution/context-frames.js, which
// copies no frame where it can): V8 carries it to every continuation with no `init` hook, which
// is most of the cost of an await (bench/acf.md).
// `before` reads the store (from the frame itself where rloop made it: context() of
// js/attribution/context-frames.js);
// only handles created before any JS runs (accepted connections) and handles handed to another
// scope by retag() are found in the ring.

const { createHook, executionAsyncResource, AsyncLocalStorage } = require('node:async_hooks');
const dc = require('node:diagnostics_channel');
const { now } = require('../clock');
const { attempt } = require('../attempt');
const { Timeline, IDLE: IDLE_MARK } = require('./timeline');
const { SINCE, WAKE, WANT, WINDOW, HEADER, ORDERED, SEQ, IDLE, IDLE_R, runningView, newLedger, openSwitch } = require('./ledger');
const { RING, ids: ringIds, contexts: ringCtx, clearRing, WeakContexts } = require('./ring');
const frames = require('./context-frames');

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
    this.from = frames.NEVER; // the frame this context was last entered from, and the one made then (js/attribution/context-frames.js)
    this.frame = undefined;
  }
}

const ROOT = new Context(0, null, null, undefined, 0); // unattributed, under every monitor

let L = IDLE; // the ledger
let R = IDLE_R; // its RUNNING cell: the slot charged now, or -1 while idle
let CALLS = HEADER; // offset of the per-slot callback counters
let GEN = new Int32Array(1); // by slot: a key slot's generation, bumped as a newer key takes it; 0 for the others
let tag = Symbol('rloop.scope'); // new per monitor: tags from an earlier one mean nothing
let cur = ROOT; // the context new resources inherit
let depth = 0;
const stack = [];
let onWant = null; // starts what takes stacks of stalls, once one has happened
let onWake = null; // rloop's own periodic work, run as the loop wakes instead of on a timer
let wakeAt = Infinity; // when onWake is due
let log = null; // every change of scope, only while a CPU profile runs (js/attribution/timeline.js)
let recorders = 0; // the captures reading `log`
let timerContext = null; // (resource) -> context of a timer created outside any scope (js/auto/timers.js)
// Stands in for the store once stopped: Node still calls a hook disabled inside a callback of
// another hook for the rest of that callback's event (rloop stopped from an app's async hook,
// or by an attach's command landing there as an interrupt), and a hook must never throw.
const NO_STORE = { getStore() {}, enterWith() {} };
let store = NO_STORE; // rloop's own AsyncLocalStorage while the scope travels by AsyncContextFrame
let tagged = false; // whether a resource was tagged while it does: only then can an unscoped callback have a tag

// The AsyncLocalStorage built on async hooks propagates in an init hook of its own (_propagate);
// the one on AsyncContextFrame has none. Read, never run: running it would enable that hook.
const FRAMES = !('_propagate' in AsyncLocalStorage.prototype);

clearRing(ROOT);

// Servers opened in a scope: connections they accept are created by Node before any JS runs,
// so only the trigger id links them (with the init hook; on frames, 'net.server.socket' retags them).
const links = new WeakContexts();

function context(slot, scope, name, key) {
  return new Context(slot, scope, name, key, 0);
}

/** A key's context in key slot `slot`, which it takes from the slot's earlier keys. */
function keyContext(slot, scope, key) {
  const gen = (GEN[slot] + 1) | 0;
  GEN[slot] = gen;
  return new Context(slot, scope, scope.name, key, gen);
}

/** The slot `ctx` is charged to: its own, or its scope's once a newer key took the slot. */
function slotOf(ctx) {
  const slot = ctx.slot;
  return GEN[slot] === ctx.gen ? slot : scopeSlot(ctx);
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
    L[WAKE] = wake; // the loop wakes: a new stretch (src/lag.rs)
    L[SINCE] = at;
  }
  // Last: a reader that sees the new slot sees its start and its stretch's wake.
  if (ORDERED) R[0] = slot;
  else {
    Atomics.store(R, 0, slot);
    Atomics.store(R, SEQ, seq + 1);
  }
}

/** Logs a switch at `now` from `running` for the profile's timeline: cur is what is charged next. */
function logSwitch(at, running) {
  if (running < 0) log.add(L[SINCE], IDLE_MARK); // the idle mark stamps SINCE (src/ledger.rs)
  log.add(at, scopeSlot(cur));
}

/** The slot of a context's scope: a key's slot is rebound to other keys, its scope's never. */
function scopeSlot(ctx) {
  return (ctx.scope ?? ctx).slot;
}

function init(asyncId, type, triggerAsyncId, resource) {
  let ctx = cur;
  if (cur !== ROOT) {
    resource[tag] = cur;
    if (type === 'TCPSERVERWRAP' || type === 'PIPESERVERWRAP') link(asyncId, resource);
  } else if (timerContext !== null && type === 'Timeout') {
    resource[tag] = ctx = timerContext(resource);
  } else if (links.size !== 0 && type !== 'PROMISE') {
    const l = links.get(triggerAsyncId);
    if (l !== undefined) resource[tag] = ctx = l;
  }
  const i = asyncId & (RING - 1);
  ringIds[i] = asyncId;
  ringCtx[i] = ctx;
}

function contextOf(asyncId) {
  const i = asyncId & (RING - 1);
  if (ringIds[i] === asyncId) return ringCtx[i];
  // No resource when Node (or an app, through internals) emits before for a bare asyncId.
  const ctx = executionAsyncResource()?.[tag] ?? ROOT;
  ringIds[i] = asyncId;
  ringCtx[i] = ctx;
  return ctx;
}

function before(asyncId) {
  begin(contextOf(asyncId));
}

// A callback's context by AsyncContextFrame: its store; a handle tagged by a link or retag()
// wins, and is entered so that what its callback creates inherits it.
function beforeFramed(asyncId) {
  if (tagged) return beforeTagged(asyncId);
  begin(depth === 0 ? frames.context() : nestedContext());
}

function beforeTagged(asyncId) {
  const i = asyncId & (RING - 1);
  if (ringIds[i] === asyncId) return begin(entered(ringCtx[i]));
  const ctx = depth === 0 ? frames.context() : nestedContext();
  begin(ctx !== ROOT ? ctx : entered(executionAsyncResource()?.[tag] ?? ROOT));
}

/** A tag's context, entered for the rest of the callback (Node restores the frame after it). */
function entered(ctx) {
  if (store !== NO_STORE && frames.context() !== ctx) frames.put(ctx);
  return ctx;
}

// AsyncResource.runInAsyncScope() emits `before` first and enters its frame after: a nested
// callback of one reads the store of the frame the resource keeps (Node's own property).
let frameKey;
function nestedContext() {
  const r = executionAsyncResource();
  if (typeof r !== 'object' || r === null) return frames.context();
  frameKey ??= Object.getOwnPropertySymbols(r).find((s) => s.description === 'context_frame');
  if (frameKey === undefined || !Object.hasOwn(r, frameKey)) return frames.context();
  return frames.contextIn(r[frameKey]);
}

function begin(ctx) {
  if (depth !== 0) stack[depth] = cur; // a callback's after() at depth 0 goes back to ROOT, not to cur
  depth++;
  cur = ctx;
  const slot = slotOf(ctx);
  L[CALLS + slot]++;
  if (R[0] !== slot) charge(slot);
}

function after() {
  if (depth === 0) return; // hooks were enabled inside this callback
  depth--;
  if (depth === 0) {
    cur = ROOT; // leave the interval open: coalesced with the next callback, or closed at idle
    return;
  }
  cur = stack[depth];
  stack[depth] = undefined;
  const slot = slotOf(cur);
  if (R[0] !== slot) charge(slot);
}

// rloop's own work, out of line, as the loop wakes: unattributed, and run in a callback rather
// than on a timer or at start, so whatever it creates is seen by the app's hooks in order.
function woke(at) {
  const c = cur;
  cur = ROOT;
  if (L[WANT] !== 0) {
    L[WANT] = 0;
    if (onWant !== null) attempt(onWant);
  }
  if (at >= wakeAt) wakeAt = attempt(onWake, at) ?? Infinity;
  cur = c;
  // rloop's own work is unattributed time, not the callback's about to run.
  const done = now();
  L[HEADER] += done - at;
  // In the profile's timeline too: switches inside that work are overruled (js/attribution/timeline.js).
  if (log !== null) {
    log.add(at, 0);
    log.add(done, scopeSlot(c));
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

function link(asyncId, resource) {
  links.set(asyncId, cur, new WeakRef(resource));
}

const hook = createHook({ init, before, after });
const framedHook = createHook({ before: beforeFramed, after });
// Named timers are tagged as they are created: only while js/auto/timers.js names them.
const timerHook = createHook({ init: initTimer });

function initTimer(asyncId, type, triggerAsyncId, resource) {
  if (type !== 'Timeout' || store.getStore() !== undefined) return;
  resource[tag] = timerContext(resource);
  tagged = true;
}

// A connection accepted by a server opened in a scope: published in the server's store, but
// its socket's callbacks run outside it (the handle was made before any JS ran).
function accepted({ socket }) {
  const ctx = store.getStore();
  const handle = socket._handle;
  if (ctx !== undefined && typeof handle?.getAsyncId === 'function') retag(handle, handle.getAsyncId(), ctx);
}

/**
 * Starts charging `ledger` (a Float64Array laid out as src/ledger.rs says); `want()` is called
 * in the first callback after a stall that no stack could be taken of.
 */
function install(ledger, slots, want) {
  L = ledger;
  R = runningView(ledger);
  onWant = want ?? null;
  CALLS = HEADER + slots;
  GEN = new Int32Array(slots);
  tag = Symbol('rloop.scope');
  epoch++;
  cur = ROOT;
  depth = 0;
  L[SINCE] = L[WAKE] = now();
  Atomics.store(R, 0, 0); // the code running now (the caller of start()) is unattributed busy time
  if (FRAMES) {
    store = new AsyncLocalStorage(); // new per monitor, like the tag
    frames.use(store, ROOT);
    tagged = false;
    dc.subscribe('net.server.socket', accepted);
    framedHook.enable();
  } else hook.enable();
}

function uninstall() {
  hook.disable();
  framedHook.disable();
  timerHook.disable();
  if (store !== NO_STORE) dc.unsubscribe('net.server.socket', accepted);
  store = NO_STORE;
  frames.use(NO_STORE, ROOT); // keeps no frame of the app's
  L = IDLE;
  R = IDLE_R;
  onWant = null;
  atWake(null);
  CALLS = HEADER;
  GEN = new Int32Array(1);
  cur = ROOT;
  depth = 0;
  stack.length = 0;
  links.clear();
  timerContext = null;
  log = null;
  recorders = 0;
  clearRing(ROOT); // its contexts name slots of this monitor's ledger, and hold their keys
}

/** Charges timers created outside any scope to `fn(timeout)`'s context from now on; null stops. */
function scopeTimers(fn) {
  timerContext = fn;
  if (store !== NO_STORE && fn !== null) timerHook.enable();
  else timerHook.disable();
}

/**
 * Charges `resource`'s callbacks (from the next one on) to `ctx`; returns the context they had.
 * An adapter's way to hand a long-lived handle (a keep-alive socket) to the request it serves.
 */
function retag(resource, asyncId, ctx) {
  const i = asyncId & (RING - 1);
  const prev = ringIds[i] === asyncId ? ringCtx[i] : resource[tag] ?? ROOT;
  resource[tag] = ctx;
  ringIds[i] = asyncId;
  ringCtx[i] = ctx;
  tagged = true;
  return prev;
}

/** Runs `fn` charged to `ctx`, as do all async resources it creates. */
function run(ctx, fn) {
  const prev = enter(ctx);
  try {
    return fn();
  } finally {
    restore(prev);
  }
}

/** Charges the rest of the current callback, and what it creates, to `ctx`; returns the context it replaces. */
function enter(ctx) {
  const prev = cur;
  cur = ctx;
  if (store !== NO_STORE) frames.enter(ctx, prev);
  const slot = slotOf(ctx);
  L[CALLS + slot]++;
  if (R[0] !== slot) charge(slot);
  return prev;
}

/**
 * Charges `ctx`, which enter() replaced, again: the entry ends. Counts no new call. A context
 * of an earlier monitor (a scope() or an entry that straddled a restart) means unattributed.
 */
function restore(ctx) {
  cur = ctx.epoch === epoch ? ctx : ROOT;
  if (store !== NO_STORE) frames.restore(cur);
  const slot = slotOf(cur);
  if (R[0] !== slot) charge(slot);
}

/**
 * Starts recording every change of scope, for a CPU profile; returns a function that ends this
 * recording and gives `{ transitions: [[performance.now() ms, scope slot or IDLE]], dropped }`.
 * The first transition is the scope charged now.
 */
function recordTimeline() {
  log ??= new Timeline();
  recorders++;
  const from = log.length;
  const running = R[0];
  log.add(now(), running < 0 ? IDLE_MARK : running === slotOf(cur) ? scopeSlot(cur) : running);
  const mine = log;
  let done = false;
  return () => {
    if (mine !== log || done) return { transitions: [], dropped: 0 }; // stopped meanwhile
    done = true;
    const out = { transitions: log.entries(from), dropped: log.dropped };
    if (--recorders === 0) log = null;
    return out;
  };
}

/** The slot being charged now, or -1 while idle. */
function running() {
  return R[0];
}

/** The seq of the running monitor's open window (its addon stores it as it closes one); -1 with none. */
function openWindow() {
  return L[WINDOW];
}

/** The scope and key code running now is charged to: `{ scope, key }`, null outside any. */
function current() {
  return { scope: cur.name, key: cur.key ?? null, automatic: (cur.scope ?? cur).automatic };
}

module.exports = {
  FRAMES, ROOT, context, keyContext, isContext, newLedger, install, uninstall, atWake, run, enter, restore, running, openWindow, current, recordTimeline, scopeTimers, retag,
};

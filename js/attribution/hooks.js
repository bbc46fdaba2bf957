'use strict';
// Attribution's hooks: which carrier takes a scope to the callbacks it causes, chosen once, and
// entering and leaving scopes on top of it. Charging itself is js/attribution/charge.js; the
// carriers are js/attribution/by-tag.js (an init hook tags every resource) and
// js/attribution/by-context-frame.js (rloop's store on AsyncContextFrame, no init hook).

const { AsyncLocalStorage } = require('node:async_hooks');
const charge = require('./charge');
const { newLedger } = require('./ledger');
const { clearRing } = require('./ring');

const { UNATTRIBUTED, state } = charge;

// The AsyncLocalStorage built on async hooks propagates in an init hook of its own (_propagate);
// the one on AsyncContextFrame has none. Read, never run: running it would enable that hook.
const CONTEXT_FRAMES = !('_propagate' in AsyncLocalStorage.prototype);
const carrier = CONTEXT_FRAMES ? require('./by-context-frame') : require('./by-tag');

clearRing(UNATTRIBUTED);

/**
 * Starts charging `ledger` (a Float64Array laid out as src/attribution/ledger.rs says); `want()` is called
 * in the first callback after a stall that no stack could be taken of.
 */
function install(ledger, slots, want) {
  charge.use(ledger, slots, want);
  carrier.start();
}

function uninstall() {
  carrier.stop();
  charge.release();
  clearRing(UNATTRIBUTED); // its contexts name slots of this monitor's ledger, and hold their keys
}

/** Charges timers created outside any scope to `fn(timeout)`'s context from now on; null stops. */
function scopeTimers(fn) {
  state.timerContext = fn;
  carrier.timers(fn !== null);
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
  const prev = state.cur;
  carrier.enter(ctx, prev);
  charge.enterCharged(ctx);
  return prev;
}

/**
 * Charges `ctx`, which enter() replaced, again: the entry ends. Counts no new call. A context
 * of an earlier monitor (a scope() or an entry that straddled a restart) means unattributed.
 */
function restore(ctx) {
  const back = charge.ofMonitor(ctx) ? ctx : UNATTRIBUTED;
  carrier.restore(back);
  charge.restoreCharged(back);
}

/** The scope and key code running now is charged to: `{ scope, key, automatic }`; scope and key null outside any. */
function current() {
  const cur = state.cur;
  return { scope: cur.name, key: cur.key ?? null, automatic: (cur.scope ?? cur).automatic };
}

module.exports = {
  CONTEXT_FRAMES,
  UNATTRIBUTED,
  context: charge.context,
  keyContext: charge.keyContext,
  owns: charge.owns,
  moveKey: charge.moveKey,
  isContext: charge.isContext,
  newLedger,
  install,
  uninstall,
  atWake: charge.atWake,
  run,
  enter,
  restore,
  running: charge.running,
  openWindowSeq: charge.openWindowSeq,
  current,
  recordTimeline: charge.recordTimeline,
  scopeTimers,
  retag: charge.retag,
};

'use strict';
// The ledger's layout: a Float64Array whose cells the hooks write and the addon's lookout thread
// reads, laid out as src/attribution/ledger.rs says. The addon gives the layout once, as this
// loads: module constants, which the hooks read on every switch. RUNNING's cell, seen as two
// i32s (the view R), holds the slot charged now (R[0], published last) and the switch count
// (R[SEQ]); slots past the built-in ones (unattributed, '(other)', rloop's own work) start at
// FIRST_SCOPE.

const native = require('../native');

const {
  running: RUNNING,
  since: SINCE,
  wake: WAKE,
  want: WANT, // set by the addon after a stall that nothing could take a stack of
  window: WINDOW, // the seq of the window open now, stored by the addon's lookout thread
  header: HEADER,
  seq: SEQ, // in R: the switch count, odd while one is written
  unattributed: UNATTRIBUTED,
  other: OTHER,
  rloop: RLOOP, // rloop's own work (js/capture/own-work.js): no scope, out of the app's busy time
  firstScope: FIRST_SCOPE,
} = native.layout();

// Stores a reader on another thread must see in program order (src/attribution/ledger.rs): x64
// keeps it; on arm64 and armv7 a switch's stores are a seqlock's write, between two
// Atomics.store of SEQ.
const ORDERED = process.arch === 'x64';

/** The RUNNING and SEQ cells of `ledger`. */
function runningView(ledger) {
  return new Int32Array(ledger.buffer, ledger.byteOffset + RUNNING * 8, 2);
}

/**
 * A ledger of `cells`, idle until the hooks install it: zeroed memory would read as slot 0
 * running since time 0, and the lookout thread would charge the process's age to the first window.
 */
function newLedger(cells) {
  const ledger = new Float64Array(new ArrayBuffer(cells * 8));
  runningView(ledger)[0] = -1;
  return ledger;
}

// No ledger: what the hooks write to between monitors. Typed-array writes past its end are
// no-ops, so a scope() that straddles stop() cannot throw.
const NO_LEDGER = new Float64Array(HEADER).fill(-1);
NO_LEDGER[WANT] = 0;
const NO_LEDGER_R = runningView(NO_LEDGER);
NO_LEDGER_R[0] = -1;

/**
 * Opens a switch's stores off x64, and returns the odd count: the load after the store keeps
 * the plain stores after it from being seen before it (arm64: an ldar is not taken before an
 * earlier stlr, nor anything after it before the ldar; armv7: a store is between dmb's).
 */
function openSwitch(R) {
  Atomics.store(R, SEQ, R[SEQ] + 1);
  return Atomics.load(R, SEQ);
}

module.exports = { SINCE, WAKE, WANT, WINDOW, HEADER, SEQ, UNATTRIBUTED, OTHER, RLOOP, FIRST_SCOPE, ORDERED, NO_LEDGER, NO_LEDGER_R, runningView, newLedger, openSwitch };

'use strict';
// The ledger's layout, shared with src/ledger.rs: a Float64Array whose cells the hooks write and
// the addon's watch thread reads. RUNNING (R[0], published last) and SEQ are i32s in the view R.

const SINCE = 1;
const WAKE = 2;
const WANT = 3; // set by the addon after a stall that nothing could take a stack of
const WINDOW = 4; // the seq of the window open now, stored by the addon's watch thread
const HEADER = 5;

// Stores a reader on another thread must see in program order (src/ledger.rs): x64 keeps it;
// on arm64 and armv7 a switch's stores are a seqlock's write, between two Atomics.store of SEQ.
const ORDERED = process.arch === 'x64';
const SEQ = 1; // in R: the switch count, odd while one is written

/** The RUNNING and SEQ cells of `ledger`. */
function runningView(ledger) {
  return new Int32Array(ledger.buffer, ledger.byteOffset, 2);
}

/**
 * A ledger of `cells`, idle until the hooks install it: zeroed memory would read as slot 0
 * running since time 0, and the watch thread would charge the process's age to the first window.
 */
function newLedger(cells) {
  const ledger = new Float64Array(new ArrayBuffer(cells * 8));
  runningView(ledger)[0] = -1;
  return ledger;
}

// An idle ledger between monitors: typed-array writes past its end are no-ops, so a scope()
// that straddles stop() cannot throw.
const IDLE = new Float64Array(HEADER).fill(-1);
IDLE[WANT] = 0;
const IDLE_R = runningView(IDLE);
IDLE_R[0] = -1;

/**
 * Opens a switch's stores off x64, and returns the odd count: the load after the store keeps
 * the plain stores after it from being seen before it (arm64: an ldar is not taken before an
 * earlier stlr, nor anything after it before the ldar; armv7: a store is between dmb's).
 */
function openSwitch(R) {
  Atomics.store(R, SEQ, R[SEQ] + 1);
  return Atomics.load(R, SEQ);
}

module.exports = { SINCE, WAKE, WANT, WINDOW, HEADER, ORDERED, SEQ, IDLE, IDLE_R, runningView, newLedger, openSwitch };

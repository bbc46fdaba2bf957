'use strict';
// Writes what running captures collected when the process ends under them — exit, uncaught
// exception, SIGTERM/SIGINT (src/capture/signals.rs) — without changing how it ends: the exit code,
// the app's error output and the signal's action stay as they would have been without rloop.

const { isMainThread, threadId } = require('node:worker_threads');
const native = require('../native');
const { attempt } = require('../attempt');
const { settleSampler } = require('../stalls/sampler');

// How long the exit waits for a stack the sampler is taking of a stall just before it: the
// sampler's own limit for an answer.
const SETTLE_MS = 1000;

const finishers = new Set(); // (reason) => void, synchronous
let uncaught = false;

// First: from here on the sampler opens no session (rloop's work at exit, and the app's exit
// listeners after this one, are no stalls to take stacks of), and one a stall before holds ends.
function onExit() {
  settleSampler(SETTLE_MS);
  finishAll(uncaught ? 'uncaughtException' : 'exit');
}

function onUncaught() {
  // Only an exception nobody handles ends the process (the 'exit' that follows writes the
  // reports): one the app handles must not label a later, normal exit.
  if (process.listenerCount('uncaughtException') === 0 && !process.hasUncaughtExceptionCaptureCallback()) uncaught = true;
}

function finishAll(reason) {
  // One capture failing to write must not stop the others, nor change the exit.
  for (const finish of [...finishers]) attempt(finish, reason);
  finishers.clear();
}

const SIGNALS = ['SIGTERM', 'SIGINT'];

// An app listener that removes itself and raises the signal again (process.once and
// process.kill, as signal-exit does) leaves the default action behind as it goes (Node's own
// 'removeListener' listener, registered first, has closed libuv's handler by now): listen again
// before the signal comes, or it ends the process with no report.
function onRemoved(event) {
  if (!SIGNALS.includes(event) || process.listenerCount(event) !== 0) return;
  attempt(native.rearmSignals); // never into the app's removeListener(): our thread looks again soon
}

function install() {
  process.on('exit', onExit);
  process.on('uncaughtExceptionMonitor', onUncaught);
  if (isMainThread) process.on('removeListener', onRemoved);
  // Natively, not with process.on(): a JS listener would replace the default action and run
  // only when the loop turns (a looping app would no longer die on Ctrl-C). Signals the app
  // listens to are its own, until its last listener goes: if it exits meanwhile, 'exit' writes
  // the reports. Each capturing thread arms for itself; the addon tells the app's listeners by
  // the action in place (a worker cannot count the main thread's).
  try {
    native.armSignals(threadId, SIGNALS, finishAll);
  } catch {
    // No native signal handling to be had: a signal ends the process without the reports.
  }
}

function uninstall() {
  process.off('exit', onExit);
  process.off('uncaughtExceptionMonitor', onUncaught);
  process.off('removeListener', onRemoved);
  native.disarmSignals(threadId);
}

/** Calls `finish(reason)` synchronously if the process ends before `remove` is called. */
function guard(finish) {
  if (finishers.size === 0) install();
  finishers.add(finish);
  return function remove() {
    finishers.delete(finish);
    if (finishers.size === 0) uninstall();
  };
}

module.exports = { guard };

'use strict';
// Writes what running captures collected when the process ends under them — exit, uncaught
// exception, SIGTERM/SIGINT — without changing how it ends: the exit code, the app's error
// output and the signal's default action stay as they would have been without rloop.

const finishers = new Set(); // (reason) => void, synchronous
let uncaught = false;

function onExit() {
  finishAll(uncaught ? 'uncaughtException' : 'exit');
}

function onUncaught() {
  // Only an exception nobody handles ends the process (the 'exit' that follows writes the
  // reports): one the app handles must not label a later, normal exit.
  if (process.listenerCount('uncaughtException') === 0 && !process.hasUncaughtExceptionCaptureCallback()) uncaught = true;
}

function onSignal(signal) {
  // The app handles this signal itself: if it then exits, 'exit' writes the reports. rloop's
  // listener runs first (prepended), so an app's once() listener is still counted here.
  if (process.listenerCount(signal) > 1) return;
  finishAll(signal);
  // Without rloop's listener the signal would have ended the process: let it.
  uninstall();
  process.kill(process.pid, signal);
}

function finishAll(reason) {
  for (const finish of [...finishers]) {
    try {
      finish(reason);
    } catch {
      // One capture failing to write must not stop the others, nor change the exit.
    }
  }
  finishers.clear();
}

const SIGNALS = ['SIGTERM', 'SIGINT'];

function install() {
  process.on('exit', onExit);
  process.on('uncaughtExceptionMonitor', onUncaught);
  for (const s of SIGNALS) process.prependListener(s, onSignal);
}

function uninstall() {
  process.off('exit', onExit);
  process.off('uncaughtExceptionMonitor', onUncaught);
  for (const s of SIGNALS) process.off(s, onSignal);
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

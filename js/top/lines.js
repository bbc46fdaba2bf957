'use strict';
// Live 'lag' and 'slowIO' events as the lines rloop attach prints and rloop top lists.

const { lagLine, ioLine } = require('../report/terminal');

// An operation told pending that ends within this prints once, as it ended.
const HOLD_MS = 1000;

/**
 * Prints live 'lag' and 'slowIO' events through `print(line)`, one line per slow operation: one
 * told pending waits HOLD_MS for its end, and prints as pending only if it has not ended by then
 * (its end then prints nothing). `drop()` forgets those waiting (a capture ended: its report
 * lists what is still pending).
 */
function liveLines(print, c) {
  const held = new Map(); // operation -> its timer
  // A connect's target is known only at its end; operations of a kind started in the same ms may
  // swap lines, never add one.
  const operation = (e) => `${e.type}\0${e.method}\0${e.at}`;
  return {
    event(type, e) {
      if (type === 'lag') return print(lagLine(e, c));
      if (e.state === 'pending') {
        const op = operation(e);
        const timer = setTimeout(() => {
          held.delete(op);
          print(ioLine(e, c));
        }, HOLD_MS);
        timer.unref();
        held.set(op, timer);
        return;
      }
      if (e.reportedPending) {
        const timer = held.get(operation(e));
        if (timer === undefined) return; // printed as pending already
        clearTimeout(timer);
        held.delete(operation(e));
      }
      print(ioLine(e, c));
    },
    drop() {
      for (const timer of held.values()) clearTimeout(timer);
      held.clear();
    },
  };
}

module.exports = { liveLines };

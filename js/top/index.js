'use strict';
// rloop.top(): the live view of `rloop top`, of the app itself, in its own terminal. It takes
// the terminal while on (stdin raw, the alternate screen) and gives it back as it was. q ends
// the view; Ctrl-C ends it and raises SIGINT, as the terminal would have without raw mode, so
// the app's own handling of it is unchanged. No signal listener is added.

const { threadId } = require('node:worker_threads');
const { live } = require('./screen');

const EVENTS = ['window', 'lag', 'slowIO'];

/**
 * Shows the view until q, Ctrl-C or `stop()`: `{ monitor, stdin, stdout }`, by default this
 * thread's running monitor (else one started here, and stopped when the view ends) and the
 * process's terminal. Returns `{ stop(), done }`, `done` resolving once the terminal is restored.
 * `rloop` is the public API's `{ monitor, start }` (js/index.js passes them: no import back).
 */
function top({ monitor, stdin = process.stdin, stdout = process.stdout } = {}, rloop) {
  if (!stdout?.isTTY || typeof stdout.write !== 'function') throw new TypeError("rloop: top() needs a terminal: option 'stdout' is not a TTY");
  if (!stdin?.isTTY || typeof stdin.setRawMode !== 'function') throw new TypeError("rloop: top() needs a terminal: option 'stdin' is not a TTY");
  if (monitor !== undefined && (monitor === null || typeof monitor.on !== 'function' || typeof monitor.off !== 'function')) {
    throw new TypeError("rloop: option 'monitor' must be a monitor (rloop.start()), got " + (monitor === null ? 'null' : typeof monitor));
  }
  let mon = monitor ?? rloop.monitor();
  const started = mon === null;
  if (started) mon = rloop.start();
  const screen = live({ info: { pid: process.pid, node: process.version, thread: threadId }, stdin, out: stdout });
  const listeners = EVENTS.map((type) => [type, (data) => screen.event(type, data)]);
  for (const [type, fn] of listeners) mon.on(type, fn);
  const done = screen.done.then((why) => {
    for (const [type, fn] of listeners) mon.off(type, fn);
    if (started) mon.stop();
    if (why === 'ctrl-c') process.kill(process.pid, 'SIGINT');
  });
  return { stop: () => { screen.end('stop'); return done; }, done };
}

module.exports = { top };

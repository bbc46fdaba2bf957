'use strict';
// The ledger's memory order under a fast writer (src/attribution/ledger.rs): the JS hooks switch
// scopes as fast as they can, with idle gaps between stretches, while the addon's lookout thread
// closes a window every 10 ms and looks for stalls. No window may charge a negative time, nor
// more than it lasted plus the longest stretch of the run: a reader that saw a new scope with the
// last interval's start, or a stretch's first scope with the idle mark's time, would charge an
// interval again or an idle gap (20 ms, twice the window, stretches ≈ 3 ms). The stretch is allowed
// for: a writer descheduled between its clock read and its stores starts its next interval in the
// past, after the reader charged that time to the previous scope (the loop was busy all along, one
// long stretch). scripts/test-platforms.js runs this under qemu-user on arm, where each switch is a
// seqlock's write (src/attribution/ledger.rs): JS's and the prepare handle's counts must agree and
// readers settle. qemu on an x64 host keeps x64's store order, so it checks the protocol, not arm's
// reorderings; the argument for those is in src/attribution/ledger.rs.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const rloop = require('rloop');

const SLACK_MS = 5; // a window may end a read's duration late; less than the idle gap
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test('a writer switching scopes fast never gets a negative or impossible window', async () => {
  const mon = rloop.start({ windowMs: 10, history: 1000, lagThresholdMs: 1000 });
  let windows;
  const names = ['a', 'b', 'c'];
  let switches = 0;
  let stretches = 0;
  let gaps = 0;
  const noop = () => {};
  try {
    const end = performance.now() + 3000;
    while (performance.now() < end) {
      // One stretch: many changes of scope, a few ms of them, then the loop polls.
      const stretchEnd = performance.now() + 3;
      for (let i = 0; performance.now() < stretchEnd; i++) {
        rloop.scope(names[i % 3], noop);
        switches += 2;
      }
      if (++stretches % 3 !== 0) await new Promise(setImmediate);
      else {
        await sleep(20);
        gaps++;
      }
    }
    await sleep(100);
    // Read at the end, not through 'window': its delivery is rloop's own work at a wake, which
    // is charged when it ends (js/attribution/charge.js woke), so a slow one lands in one window.
    windows = mon.history();
  } finally {
    mon.stop();
  }
  assert.ok(switches > 2000 && gaps > 10, `${switches} switches, ${gaps} idle gaps`); // qemu is slow
  assert.ok(windows.length > 50, `${windows.length} windows`);
  const longest = Math.max(...windows.map((w) => w.lag.maxMs));
  for (const w of windows) {
    const what = () => JSON.stringify(w);
    const charged = [w.unattributed, ...w.scopes].map((s) => s.busyMs);
    assert.ok(charged.every((ms) => ms >= 0), what());
    const most = w.durationMs + longest + SLACK_MS;
    assert.ok(w.thread.busyMs >= 0 && w.thread.busyMs <= most, what());
  }
});

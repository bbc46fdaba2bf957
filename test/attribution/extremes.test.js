'use strict';
// The extremes of the options work: keys bind, windows close, time adds up. How much they cost
// the app's loop is measured in bench/extremes.js, not asserted here (timing would flake).

const test = require('node:test');
const assert = require('node:assert');
const { setTimeout: sleep } = require('node:timers/promises');
const { performance } = require('node:perf_hooks');
const rloop = require('../..');
const { busy } = require('../fixtures/helpers');

test('windowMs 10, maxScopes 10⁶, keySlots 1 048 576: keyed scopes bind, windows close, totals add up', async () => {
  const mon = rloop.start({ windowMs: 10, maxScopes: 1_000_000, keySlots: 1_048_576 });
  try {
    for (let i = 0; i < 200_000; i++) rloop.scope(`s${i % 5000}`, () => {}, { key: `k${i}` });
    const called = performance.now();
    const spent = rloop.scope('slow', () => busy(30), { key: 'the-slow-one' });
    const call = performance.now() - called; // the work, plus binding its key (a GC may run there)
    await sleep(100);
    const history = mon.history();
    assert.ok(history.length >= 5, `${history.length} windows`);
    for (let i = 1; i < history.length; i++) assert.strictEqual(history[i].seq, history[i - 1].seq + 1);
    const slow = history.flatMap((w) => w.scopes).filter((s) => s.name === 'slow');
    const slowMs = slow.reduce((ms, s) => ms + s.busyMs, 0);
    assert.ok(slowMs > spent - 0.5 && slowMs < call + 0.5, `slow: ${slowMs} ms over ${slow.length} windows, its work measured ${spent}, the call ${call}`);
    assert.ok(slow.every((s) => s.keys.worst[0].key === 'the-slow-one'));
    const totals = mon.totals();
    assert.strictEqual(totals.scopes.length, 5001);
    assert.strictEqual(totals.scopes.filter((s) => /^s\d+$/.test(s.name)).reduce((n, s) => n + s.calls, 0), 200_000);
  } finally {
    mon.stop();
  }
});

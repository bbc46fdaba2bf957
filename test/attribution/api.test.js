'use strict';
// The API's contract: options, lifecycle, errors, and hooks that change nothing for the app.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const { AsyncResource } = require('node:async_hooks');
const { EventEmitter } = require('node:events');
const rloop = require('../..');
const native = require('../../js/native');
const { SINCE, WAKE, WANT, WINDOW, HEADER, SEQ, UNATTRIBUTED, OTHER, FIRST_SCOPE, runningView, newLedger } = require('../../js/attribution/ledger');
const { busy, scopeIn } = require('../fixtures/helpers');

test('invalid options throw a TypeError or RangeError that names the option', () => {
  const cases = [
    [{ windowMs: '1000' }, TypeError, /'windowMs' must be an integer/],
    [{ windowMs: 1 }, RangeError, /'windowMs' must be between 10 and/],
    [{ history: 0 }, RangeError, /'history'/],
    [{ history: 1.5 }, TypeError, /'history'/],
    [{ maxScopes: -1 }, RangeError, /'maxScopes'/],
    [{ maxKeys: NaN }, TypeError, /'maxKeys'/],
    [{ worstKeys: 1e9 }, RangeError, /'worstKeys'/],
    [{ keySlots: 4 }, RangeError, /'keySlots'/],
    [{ keySlots: (1 << 20) + 1 }, RangeError, /'keySlots' must be between 16 and 1048576/],
    [{ windowMS: 100 }, TypeError, /unknown start\(\) option 'windowMS'/],
    [{ lagThresholdMs: 0 }, RangeError, /'lagThresholdMs' must be between 1 and/],
    // An alias is checked under the name it was given by; giving both forms names both.
    [{ lagThreshold: 0 }, RangeError, /'lagThreshold' must be between 1 and/],
    [{ lagThreshold: 50, lagThresholdMs: 50 }, TypeError, /options 'lagThresholdMs' and 'lagThreshold' \(its alias\) are both given/],
    [{ ioThreshold: 10, ioThresholdMs: 20 }, TypeError, /options 'ioThresholdMs' and 'ioThreshold' \(its alias\) are both given/],
    [42, TypeError, /start\(\) options must be an object/],
    [null, TypeError, /start\(\) options must be an object/],
  ];
  for (const [options, type, message] of cases) {
    assert.throws(() => rloop.start(options), (e) => e instanceof type && message.test(e.message), JSON.stringify(options));
  }
  assert.throws(() => rloop.scope(7, () => {}), TypeError);
  assert.throws(() => rloop.scope('', () => {}), RangeError);
  assert.throws(() => rloop.scope('x'.repeat(257), () => {}), RangeError);
  assert.throws(() => rloop.scope('x', 'not a function'), /needs a function/);
  assert.throws(() => rloop.scope('x', () => {}, { key: {} }), /option 'key' must be a string or a number/);
  assert.throws(() => rloop.enter('x', { keys: 1 }), /unknown scope option 'keys'/);
  for (const bad of [undefined, null, 'x', {}, { slot: 0, epoch: 0 }]) {
    assert.throws(() => rloop.restore(bad), (e) => e instanceof TypeError && /restore\(\) needs what enter\(\) returned/.test(e.message), String(bad));
  }
  assert.strictEqual(rloop.monitor(), null, 'no monitor was left running by a failed start');
});

test('lagThreshold and ioThreshold, the older names of lagThresholdMs and ioThresholdMs, still set them', async () => {
  const mon = rloop.start({ lagThreshold: 30, ioThreshold: 70 });
  const alive = setInterval(() => {}, 1000); // a capture's timer keeps no process alive, by design
  try {
    const report = await mon.capture({ durationMs: 50, heapStats: false });
    assert.deepStrictEqual([report.lag.thresholdMs, report.io.thresholdMs], [30, 70]);
    assert.deepStrictEqual([report.meta.options.lagThresholdMs, report.meta.options.ioThresholdMs], [30, 70]);
  } finally {
    clearInterval(alive);
    mon.stop();
  }
});

test('scope() without start() still runs fn, returns its value and propagates its error', () => {
  assert.strictEqual(rloop.monitor(), null);
  assert.strictEqual(rloop.scope('x', () => 42), 42);
  assert.throws(() => rloop.scope('x', () => { throw new Error('boom'); }), /boom/);
  rloop.restore(rloop.enter('x', { key: 1 })); // no-ops, not errors
});

test('stop() is idempotent, start() after stop() starts afresh, and a second start() throws', async () => {
  const first = rloop.start();
  assert.throws(() => rloop.start(), /already started/);
  let late;
  rloop.scope('old', () => { late = new Promise((resolve) => setTimeout(() => resolve(busy(10)), 20)); });
  first.stop();
  first.stop();
  assert.ok(first.stopped);
  assert.throws(() => first.liveWindow(), /stopped/);
  const second = rloop.start({ windowMs: 60000 }); // one window for the whole test on a slow machine
  rloop.scope('new', () => busy(5));
  await late; // work tagged by the first monitor is not charged to any scope of the second
  const w = second.liveWindow();
  assert.deepStrictEqual(Object.keys(second.elu()), Object.keys(w), 'elu(), the 0.x name, reads the same');
  second.stop();
  assert.strictEqual(scopeIn(w, 'old').busyMs, 0);
  assert.ok(w.unattributed.busyMs >= 9, `late work of a stopped monitor is unattributed: ${w.unattributed.busyMs}`);
  assert.ok(scopeIn(w, 'new').busyMs >= 4);
});

test('a scope() that straddles stop() returns normally', () => {
  const mon = rloop.start();
  assert.strictEqual(rloop.scope('x', () => { mon.stop(); return 'done'; }), 'done');
});

test('a Rust panic becomes a JS exception and the process lives on', () => {
  assert.throws(() => native._panicForTests(), /rloop test panic/);
  assert.strictEqual(rloop.scope('x', () => 1), 1);
});

test('the raw scope adder and key binder turn bad arguments and a stopped monitor into exceptions', () => {
  const [maxScopes, keySlots] = [2, 4];
  const ledger = new Float64Array(native.ledgerCells(maxScopes, keySlots));
  const options = { threadId: 0, windowMs: 1000, history: 2, maxScopes, keySlots, maxKeys: 4, worstKeys: 2, clockOffsetMs: 0, timeOrigin: 0 };
  const nm = new native.NativeMonitor(ledger.buffer, options);
  const addScope = nm.scopeAdder();
  const scope = addScope('s');
  assert.deepStrictEqual([addScope('名前-🔑'.repeat(64)), addScope('t'), addScope('s'), addScope('u')], [scope + 1, OTHER, scope, OTHER], 'past maxScopes, a name seen before keeps its slot');
  assert.throws(() => addScope(42), /addScope: name must be a string/);
  const keySlot = FIRST_SCOPE + maxScopes;
  const bind = nm.keyBinder();
  const key = 'ключ-🔑'.repeat(36); // non-ASCII, as long as a key gets (252 UTF-16 units)
  bind(keySlot, scope, key);
  ledger[HEADER + keySlot] += 5; // 5 ms charged to the key's slot
  const s = nm.liveWindow().scopes.find((x) => x.name === 's');
  assert.deepStrictEqual(s.keys.worst.map((w) => [w.key, w.busyMs]), [[key, 5]], 'the name arrives whole');
  assert.throws(() => bind(0, scope, 'k'), /slot 0 is not a key slot/);
  assert.throws(() => bind(keySlot, 99, 'k'), /scope 99 is not registered/);
  assert.throws(() => bind('x', scope, 'k'), /bindKey: slot must be a number/);
  assert.throws(() => bind(keySlot, scope, 42), /bindKey: key must be a string/);
  nm.stop();
  assert.throws(() => bind(keySlot, scope, 'k'), /bindKey: monitor is stopped/);
  assert.throws(() => addScope('s'), /addScope: monitor is stopped/);
});

test('the ledger as JS lays it out from the addon\'s layout() is the ledger the addon reads', async () => {
  const [maxScopes, keySlots] = [2, 16];
  const slots = FIRST_SCOPE + maxScopes + keySlots;
  const ledger = newLedger(native.ledgerCells(maxScopes, keySlots));
  assert.strictEqual(ledger.length, HEADER + 2 * slots, 'the header, then busy time and callbacks per slot');
  const clockOffsetMs = performance.now() - native.monotonicMs();
  // A thread id of its own: no stack sampler listens for its stalls.
  const options = { threadId: 4242, windowMs: 60000, history: 2, maxScopes, keySlots, maxKeys: 4, worstKeys: 2, clockOffsetMs, timeOrigin: 0, lagThresholdMs: 50 };
  const nm = new native.NativeMonitor(ledger.buffer, options);
  const stalls = [];
  nm.onLag((event) => stalls.push(event));
  const R = runningView(ledger);
  // A switch as the hooks make it as the loop wakes (here `woke` ms before): WAKE and SINCE, then the slot.
  const wake = (slot, woke) => {
    const now = performance.now();
    ledger[WAKE] = now - woke;
    ledger[SINCE] = now;
    R[0] = slot;
  };
  const idleMark = () => new Promise((resolve) => setTimeout(resolve, 20)); // the loop polls once at least
  try {
    assert.strictEqual(ledger[WINDOW], 1, 'the window open now, as the addon stores it');
    const scope = nm.scopeAdder()('s');
    assert.strictEqual(scope, FIRST_SCOPE);
    wake(UNATTRIBUTED, 0); // a first stretch: the stall after it is the app's, not its start-up's
    await idleMark();
    assert.strictEqual(R[0], -1, 'the idle mark closed the stretch');
    const CALLS = HEADER + slots;
    for (const [slot, ms, calls] of [[UNATTRIBUTED, 3, 1], [OTHER, 4, 1], [scope, 5, 2]]) {
      ledger[HEADER + slot] = ms;
      ledger[CALLS + slot] = calls;
    }
    wake(scope, 300);
    busy(100); // a stall, `scope` charged for its last 100 ms
    const read = () => {
      const w = nm.liveWindow(); // the window open now
      const named = (name) => w.scopes.find((x) => x.name === name);
      return { unattributed: w.unattributed, other: named('(other)'), s: named('s') };
    };
    const w = read();
    assert.deepStrictEqual([w.unattributed.busyMs, w.unattributed.calls, w.other.busyMs, w.other.calls, w.s.calls], [3, 1, 4, 1, 2]);
    assert.ok(w.s.busyMs >= 105, `the running interval counts: ${w.s.busyMs} ms`);
    R[SEQ] = 1; // a switch half written
    assert.strictEqual(read().s.busyMs, 5, 'a reading that does not settle leaves the running interval out');
    R[SEQ] = 2;
    assert.ok(read().s.busyMs >= 105);
    for (let waited = 0; !stalls.some((e) => e.scope === 's') && waited < 5000; waited += 20) await idleMark();
    const stall = stalls.find((e) => e.scope === 's');
    assert.ok(stall?.lagMs >= 400, JSON.stringify(stalls));
    // The idle mark charged `scope` from SINCE and ended the stretch that began at WAKE, at one moment.
    assert.ok(Math.abs(stall.lagMs - (ledger[HEADER + scope] - 5) - 300) < 1e-6, `${stall.lagMs} ms stalled, ${ledger[HEADER + scope]} ms charged`);
    assert.strictEqual(ledger[WANT], 1, 'no stack of the stall: the addon asks for a sampler');
  } finally {
    nm.onLag(null);
    nm.stop();
  }
});

test('scopes past maxScopes are charged to (other) and counted', () => {
  const mon = rloop.start({ maxScopes: 2 });
  for (const name of ['a', 'b', 'c', 'd']) rloop.scope(name, () => busy(3));
  const w = mon.liveWindow();
  mon.stop();
  assert.deepStrictEqual(w.scopes.map((s) => s.name).sort(), ['(other)', 'a', 'b']);
  assert.strictEqual(w.scopesOverflowed, 2);
  assert.ok(scopeIn(w, '(other)').busyMs >= 5);
});

test('inside a scope past maxScopes, rloop.current() says (other), as the windows do, and every such name shares one context', async () => {
  const mon = rloop.start({ maxScopes: 1, lag: false, io: false });
  try {
    rloop.scope('kept', () => {});
    const seen = new Set();
    for (let i = 0; i < 1000; i++) {
      rloop.scope(`past-${i}`, () => {
        assert.deepStrictEqual(rloop.current(), { scope: '(other)', key: null, automatic: false });
        seen.add(rloop.enter(`past-again-${i}`)); // what enter() returns: the context it replaced
      });
    }
    assert.strictEqual(seen.size, 1, 'one context for every name past the cap: nothing allocated per name');
    const keyed = await rloop.scope('past-keyed', async () => {
      await null;
      return rloop.current();
    }, { key: 'k1' });
    assert.deepStrictEqual(keyed, { scope: '(other)', key: 'k1', automatic: false });
    assert.strictEqual(mon.totals().scopesOverflowed, 2001, 'each entry past the cap counts');
  } finally {
    mon.stop();
  }
});

test('the window event fires once per window with the closed window', async () => {
  const mon = rloop.start({ windowMs: 50, history: 3 });
  const seen = [];
  mon.on('window', (w) => seen.push(w));
  await new Promise((resolve) => setTimeout(resolve, 400));
  mon.stop();
  assert.ok(seen.length >= 4, `windows: ${seen.length}`);
  for (let i = 1; i < seen.length; i++) {
    assert.strictEqual(seen[i].seq, seen[i - 1].seq + 1, 'no window skipped or repeated');
    assert.ok(Math.abs(seen[i].start - seen[i - 1].end) < 1, `windows abut: ${seen[i - 1].end} → ${seen[i].start}`);
  }
  for (const w of seen) {
    assert.ok(Math.abs(w.durationMs - (w.end - w.start)) < 1, `duration ${w.durationMs} is end - start`);
    assert.ok(w.end > w.start && Math.abs(w.end - Date.now()) < 5000, 'times are epoch milliseconds');
  }
  // Closes keep to a 50 ms grid: one a loaded machine delays makes its window longer and the
  // next shorter, so the typical window, not each one, is 50 ms long.
  const durations = seen.map((w) => w.durationMs).sort((a, b) => a - b);
  const median = durations[durations.length >> 1];
  assert.ok(Math.abs(median - 50) < 20, `durations ${durations.join(', ')}`);
  assert.strictEqual(mon.windowMs, 50);
});

// Runs a battery of async APIs and records what every callback received and returned.
async function observe() {
  const seen = [];
  const note = (what, value) => seen.push([what, value]);
  await new Promise((resolve) => setTimeout((a, b) => { note('timeout', [a, b]); resolve(); }, 1, 'a', 2));
  await new Promise((resolve) => setImmediate((x) => { note('immediate', x); resolve(); }, { y: 1 }));
  note('promise', await Promise.resolve(5).then((v) => v * 2));
  note('rejection', await Promise.reject(new Error('no')).catch((e) => e.message));
  note('fs', await new Promise((resolve) => fs.stat(__filename, (err, st) => resolve([err, st.isFile()]))));
  note('resource', new AsyncResource('X').runInAsyncScope(function (a) { return [this.k, a]; }, { k: 'this' }, 'arg'));
  note('emitter', await new Promise((resolve) => { const e = new EventEmitter(); e.on('x', (...args) => resolve(args)); setImmediate(() => e.emit('x', 1, 'two')); }));
  note('scope', rloop.scope('s', function () { return [typeof this, arguments.length]; }));
  note('own props', Object.keys(new AsyncResource('Y')));
  return seen;
}

test('hooks never change what callbacks receive or return', async () => {
  const without = await observe();
  const mon = rloop.start();
  const within = await rloop.scope('app', observe);
  mon.stop();
  assert.deepStrictEqual(within, without);
});

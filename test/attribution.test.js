'use strict';
// Attribution accuracy against known busy work, on real timers, promises and fs.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { AsyncResource } = require('node:async_hooks');
const rloop = require('..');
const { busy, sleep, scopeIn } = require('./helpers');

test('a scope doing 30 ms of work every 100 ms through timers, promises and fs reads 30 %', async () => {
  const file = path.join(os.tmpdir(), `rloop-attr-${process.pid}`);
  fs.writeFileSync(file, 'x'.repeat(4096));
  const mon = rloop.start({ windowMs: 500 });
  const tick = () => {
    setTimeout(() => busy(10), 1);
    Promise.resolve().then(() => busy(5)).then(() => busy(5));
    fs.readFile(file, () => fs.stat(file, () => busy(10)));
  };
  const timer = setInterval(() => rloop.scope('work', tick), 100);
  await sleep(600); // let a first full window begin with the workload running
  const from = mon.elu().last.seq;
  const elu0 = performance.eventLoopUtilization();
  const totals0 = mon.totals();
  await sleep(3000);
  const totals1 = mon.totals();
  const elu = performance.eventLoopUtilization(elu0);
  clearInterval(timer);
  const windows = mon.history().filter((w) => w.seq > from);
  mon.stop();
  fs.unlinkSync(file);

  assert.ok(windows.length >= 4, `complete windows: ${windows.length}`);
  const share = windows.reduce((s, w) => s + scopeIn(w, 'work').busyMs, 0) / windows.reduce((s, w) => s + w.durationMs, 0);
  assert.ok(Math.abs(share - 0.3) <= 0.03, `work read ${(share * 100).toFixed(1)} %, expected 30 ± 3`);
  for (const w of windows) {
    const sum = w.scopes.reduce((s, x) => s + x.busyMs, 0) + w.unattributed.busyMs;
    assert.ok(Math.abs(sum - w.thread.busyMs) < 1e-6, `scopes + unattributed = thread busy (${sum} vs ${w.thread.busyMs})`);
    assert.ok(scopeIn(w, 'work').calls > 0);
  }
  // Thread busy time agrees with Node's own event-loop utilization over the same span.
  const ours = (totals1.thread.busyMs - totals0.thread.busyMs) / (elu.idle + elu.active);
  assert.ok(Math.abs(ours - elu.utilization) <= 0.05 * elu.utilization, `thread ELU ${ours.toFixed(4)} vs Node ${elu.utilization.toFixed(4)}`);
});

test('nested scopes are exclusive: a nanosecond is charged once, to the innermost scope', () => {
  const mon = rloop.start();
  rloop.scope('outer', () => {
    busy(20);
    rloop.scope('inner', () => {
      busy(30);
      rloop.scope('innermost', () => busy(15));
    });
    busy(10);
  });
  const now = mon.elu();
  mon.stop();
  const ms = (n) => scopeIn(now, n).busyMs;
  // Inclusive time would read 75 / 45 / 15; the margin is for a shared, noisy machine.
  assert.ok(Math.abs(ms('outer') - 30) < 5, `outer ${ms('outer')}`);
  assert.ok(Math.abs(ms('inner') - 30) < 5, `inner ${ms('inner')}`);
  assert.ok(Math.abs(ms('innermost') - 15) < 5, `innermost ${ms('innermost')}`);
  assert.strictEqual(scopeIn(now, 'outer').calls, 1);
});

test('async work inherits the innermost scope that created it', async () => {
  const mon = rloop.start();
  await new Promise((resolve) => {
    rloop.scope('outer', () => {
      setTimeout(() => busy(20), 1); // outer
      rloop.scope('inner', () => {
        setImmediate(() => {
          busy(20); // inner, by inheritance
          process.nextTick(() => busy(10)); // still inner, one level further down
        });
        const resource = new AsyncResource('UserQueue'); // a user resource, run later from outside
        setTimeout(() => rloop.scope('elsewhere', () => resource.runInAsyncScope(() => busy(10))), 5);
      });
      setTimeout(resolve, 50);
    });
  });
  const totals = mon.totals();
  mon.stop();
  const ms = (n) => totals.scopes.find((s) => s.name === n)?.busyMs ?? 0;
  assert.ok(Math.abs(ms('outer') - 20) < 4, `outer ${ms('outer')}`);
  assert.ok(Math.abs(ms('inner') - 40) < 5, `inner ${ms('inner')}`);
  assert.ok(ms('elsewhere') < 2, `a resource runs in the scope that created it, not its caller's: ${ms('elsewhere')}`);
});

test('enter() charges the rest of the callback and what it starts', async () => {
  const mon = rloop.start();
  await new Promise((resolve) =>
    setTimeout(() => {
      busy(10); // unattributed
      rloop.enter('node:abc', { key: 'msg-1' });
      busy(20);
      setTimeout(() => {
        busy(15);
        resolve();
      }, 1);
    }, 1),
  );
  const w = mon.elu();
  mon.stop();
  const node = scopeIn(w, 'node:abc');
  assert.ok(Math.abs(node.busyMs - 35) < 4, `node:abc ${node.busyMs}`);
  assert.ok(w.unattributed.busyMs >= 9, `unattributed ${w.unattributed.busyMs}`);
  assert.strictEqual(node.keys.count, 1);
  assert.strictEqual(node.keys.worst[0].key, 'msg-1');
  assert.ok(Math.abs(node.keys.worst[0].busyMs - 35) < 4);
});

test('restore() ends a nested entry: each side is charged its own time, a call counted once', async () => {
  const mon = rloop.start();
  let stale;
  await new Promise((resolve) =>
    setTimeout(() => {
      const outer = rloop.enter('bus:sender', { key: 'm-1' });
      busy(10);
      const inner = rloop.enter('bus:handler');
      busy(20);
      setTimeout(() => resolve(busy(5)), 1); // started inside the handler: the handler's
      rloop.restore(inner); // the sender again
      busy(15);
      rloop.restore(outer); // unattributed again
      busy(8);
      stale = inner;
    }, 1),
  );
  const w = mon.elu();
  mon.stop();
  const sender = scopeIn(w, 'bus:sender');
  const handler = scopeIn(w, 'bus:handler');
  assert.ok(Math.abs(sender.busyMs - 25) < 4, `sender ${sender.busyMs}`);
  assert.ok(Math.abs(handler.busyMs - 25) < 4, `handler ${handler.busyMs}`);
  assert.ok(w.unattributed.busyMs >= 7, `unattributed ${w.unattributed.busyMs}`);
  assert.strictEqual(sender.calls, 1, 'restore() is not a new call');
  assert.strictEqual(sender.keys.worst[0].key, 'm-1');
  assert.ok(Math.abs(sender.keys.worst[0].busyMs - 25) < 4, 'the key is charged on both sides of the nested entry');

  // What a stopped monitor's enter() returned restores "unattributed" under the next one.
  const next = rloop.start();
  await new Promise((resolve) =>
    setTimeout(() => {
      rloop.enter('fresh');
      busy(5);
      rloop.restore(stale);
      busy(10);
      resolve();
    }, 1),
  );
  const v = next.elu();
  next.stop();
  assert.ok(Math.abs(scopeIn(v, 'fresh').busyMs - 5) < 3, `fresh ${scopeIn(v, 'fresh').busyMs}`);
  assert.ok(!v.scopes.some((s) => s.name === 'bus:handler'), 'no scope of the old monitor appears');
  assert.ok(v.unattributed.busyMs >= 9, `unattributed ${v.unattributed.busyMs}`);
});

test('per-key statistics: percentiles, worst keys and the key cap', async () => {
  const mon = rloop.start({ maxKeys: 50, worstKeys: 3 });
  // 60 requests: 57 of 2 ms, then 25, 35 and 45 ms ones (far apart: a noisy machine may stretch
  // a 2 ms one); names are kept for 50 keys a window.
  const costs = [...Array(57).fill(2), 25, 35, 45];
  for (let i = 0; i < costs.length; i++) {
    await new Promise((resolve) => rloop.scope('route:/users', () => setImmediate(() => resolve(busy(costs[i]))), { key: `req-${i}` }));
  }
  const w = mon.elu();
  mon.stop();
  const route = scopeIn(w, 'route:/users');
  const keys = route.keys;
  assert.strictEqual(keys.count, 60, 'every key is counted');
  assert.strictEqual(keys.dropped, 10, 'the least busy keys past the cap lose their names');
  assert.ok(Math.abs(keys.p50Ms - 2) < 0.6, `p50 ${keys.p50Ms}`);
  assert.ok(keys.p99Ms > 30 && keys.p99Ms < 50, `p99 ${keys.p99Ms}`);
  assert.ok(Math.abs(keys.maxMs - 45) < 3, `max ${keys.maxMs}`);
  assert.deepStrictEqual(keys.worst.map((k) => k.key), ['req-59', 'req-58', 'req-57']);
  assert.ok(route.busyMs >= costs.reduce((a, b) => a + b) - 1, `scope busy ${route.busyMs}`);
});

test('key slots are reused: late work of an old key goes to its scope', async () => {
  const mon = rloop.start({ keySlots: 16 });
  let late;
  rloop.scope('job', () => {
    late = new Promise((resolve) => setTimeout(() => resolve(busy(10)), 30));
  }, { key: 'first' });
  for (let i = 0; i < 40; i++) rloop.scope('job', () => busy(0.1), { key: `k${i}` });
  await late;
  const w = mon.elu();
  mon.stop();
  const job = scopeIn(w, 'job');
  assert.ok(job.busyMs >= 13, `job ${job.busyMs}`);
  assert.ok(!job.keys.worst.some((k) => k.key === 'first' && k.busyMs > 5), 'the reused slot does not charge the old key');
});

test('a server opened in a scope charges the connections it accepts', async () => {
  const net = require('node:net');
  const mon = rloop.start();
  const server = await new Promise((resolve) => {
    rloop.scope('tcp-in', () => {
      const s = net.createServer((socket) => socket.on('data', () => { busy(20); socket.end('ok'); }));
      s.listen(0, '127.0.0.1', () => resolve(s));
    });
  });
  await new Promise((resolve, reject) => {
    const c = net.connect(server.address().port, '127.0.0.1', () => c.write('hi'));
    c.on('data', () => {}).on('end', resolve).on('error', reject);
  });
  server.close();
  const w = mon.elu();
  mon.stop();
  assert.ok(scopeIn(w, 'tcp-in').busyMs >= 19, `tcp-in ${scopeIn(w, 'tcp-in').busyMs}`);
});

'use strict';
// Windows are live: a reader sees a callback's time while that callback still runs.

const test = require('node:test');
const assert = require('node:assert');
const { Worker } = require('node:worker_threads');
const { threadId } = require('node:worker_threads');
const rloop = require('../..');
const { busy, scopeIn } = require('../fixtures/helpers');

test('another thread sees a blocking scope at >= 90 % ELU before the loop returns', async () => {
  const mon = rloop.start({ windowMs: 1000 });
  // The reader publishes what it saw through shared memory: the main thread cannot take a
  // message while it is blocked, which is the point.
  const seen = new Float64Array(new SharedArrayBuffer(16)); // [epoch ms when seen, elu]
  const reader = new Worker(
    `const { workerData: { seen, main }, parentPort } = require('node:worker_threads');
     const rloop = require(${JSON.stringify(require.resolve('../..'))});
     parentPort.postMessage('ready');
     const poll = setInterval(() => {
       const t = rloop.threads().find((t) => t.threadId === main);
       const s = t && t.current.scopes.find((s) => s.name === 'blocker');
       if (s && s.elu >= 0.9 && seen[0] === 0) { seen[1] = s.elu; seen[0] = Date.now(); clearInterval(poll); }
     }, 20);`,
    { eval: true, workerData: { seen, main: threadId } },
  );
  await new Promise((resolve) => reader.once('message', resolve));
  let returnedAt;
  rloop.scope('blocker', () => {
    busy(1500);
    returnedAt = Date.now();
    // The same live view from inside the running callback.
    // Windows close on time while it runs: with one or two closed meanwhile, this one and the
    // last hold at least a full window of it.
    const live = mon.liveWindow();
    const ms = scopeIn(live, 'blocker').busyMs + (live.last ? scopeIn(live.last, 'blocker').busyMs : 0);
    assert.ok(ms >= 990, `own live view: ${ms} ms`);
  });
  await reader.terminate();
  mon.stop();
  assert.ok(seen[0] > 0, 'the reader saw the blocking scope at >= 90 % ELU');
  assert.ok(seen[0] < returnedAt, `seen at ${seen[0]}, loop returned at ${returnedAt}`);
  assert.ok(seen[1] >= 0.9 && seen[1] <= 1, `elu ${seen[1]}`);
});

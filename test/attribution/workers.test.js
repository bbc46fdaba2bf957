'use strict';
// Worker threads: each thread attributes on its own; state never mixes; teardown is clean.

const test = require('node:test');
const assert = require('node:assert');
const { Worker, threadId } = require('node:worker_threads');
const rloop = require('../..');
const { busy, scopeIn } = require('../fixtures/helpers');

const RLOOP = JSON.stringify(require.resolve('../..'));

function worker(source) {
  return new Worker(source, { eval: true });
}

test('a worker attributes its own scopes; threads() shows each thread from any thread', async (t) => {
  const mon = rloop.start({ windowMs: 100 });
  t.after(() => mon.stop());
  const w = worker(
    `const rloop = require(${RLOOP}); const { parentPort } = require('node:worker_threads');
     const mon = rloop.start({ windowMs: 100 });
     const t = setInterval(() => rloop.scope('in-worker', () => { const e = performance.now() + 20; while (performance.now() < e); }), 40);
     parentPort.on('message', () => { parentPort.postMessage(rloop.threads().map((t) => t.threadId)); });
     parentPort.postMessage('started');`,
  );
  const tid = w.threadId; // -1 once terminated
  const timer = setInterval(() => rloop.scope('in-main', () => busy(5)), 40);
  // Windows from the worker's start on (starting it, addon included, can take a while on a busy machine).
  await new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
  await new Promise((resolve) => setTimeout(resolve, 600));
  const all = rloop.threads();
  const fromWorker = await new Promise((resolve) => {
    w.once('message', resolve);
    w.postMessage('threads?');
  });
  clearInterval(timer);
  await w.terminate();
  const mine = all.find((t) => t.threadId === threadId);
  const theirs = all.find((t) => t.threadId === tid);
  assert.ok(mine && theirs, `threads: ${all.map((t) => t.threadId)}`);
  assert.ok(scopeIn(theirs.last, 'in-worker').elu > 0.3, JSON.stringify(theirs.last));
  assert.strictEqual(scopeIn(theirs.last, 'in-main').busyMs, 0);
  assert.strictEqual(scopeIn(mine.last, 'in-worker').busyMs, 0);
  assert.ok(scopeIn(mine.last, 'in-main').busyMs > 0);
  assert.deepStrictEqual(fromWorker.sort(), [threadId, tid].sort());
  assert.deepStrictEqual(rloop.threads().map((t) => t.threadId), [threadId], 'a terminated worker leaves the registry');
});

test('200 worker start/terminate cycles with rloop active: no crash, no leak', async (t) => {
  const mon = rloop.start();
  const cycle = async (i) => {
    const w = worker(
      `const rloop = require(${RLOOP}); const { parentPort } = require('node:worker_threads');
       const mon = rloop.start({ windowMs: 10 });
       rloop.scope('w', () => { setInterval(() => {}, 1); Promise.resolve().then(() => parentPort.postMessage('up')); });
       ${i % 3 === 0 ? 'mon.stop();' : ''}`,
    );
    await new Promise((resolve, reject) => w.once('message', resolve).once('error', reject));
    await w.terminate();
  };
  for (let i = 0; i < 40; i++) await cycle(i); // warm up: first workers grow the heap for good
  global.gc?.();
  const before = process.memoryUsage().rss;
  for (let i = 40; i < 200; i++) await cycle(i);
  global.gc?.();
  const grown = (process.memoryUsage().rss - before) / 2 ** 20;
  t.diagnostic(`RSS grew ${grown.toFixed(1)} MB over 160 cycles (gc exposed: ${!!global.gc})`);
  assert.deepStrictEqual(rloop.threads().map((t) => t.threadId), [threadId]);
  mon.stop();
  assert.ok(grown < 16, `RSS grew ${grown.toFixed(1)} MB over 160 cycles`);
});

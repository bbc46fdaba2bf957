'use strict';
// The key of a keyed context in a CPU profile's scope timeline (js/attribution/timeline.js,
// written by js/attribution/charge.js while a profile runs): recorded with its scope where the
// key's own slot is charged, never for a key whose slot a newer key took (its work is charged to
// its scope, and said so), and bounded: keys past the cap are dropped and counted, their scope kept.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const rloop = require('../..');
const hooks = require('../../js/attribution/hooks');
const { Timeline, MAX_KEYS } = require('../../js/attribution/timeline');
const { busy } = require('../fixtures/helpers');

test('the timeline keeps each change\'s key, and past MAX_KEYS distinct keys drops and counts them, the scope kept', () => {
  const t = new Timeline();
  t.add(1, 3);
  t.add(2, 4, 'a');
  t.add(3, 5, 'b');
  t.add(2.5, 4); // overrules the keyed change at 3: its key goes with it
  t.add(4, 4, 'a');
  assert.deepStrictEqual(t.entries(), [[1, 3], [2, 4, 'a'], [2.5, 4], [4, 4, 'a']]);
  for (let i = 0; i < MAX_KEYS; i++) t.add(10 + i, 6, `k${i}`);
  assert.strictEqual(t.keysDropped, 2, 'the two keys past the cap');
  t.add(1e6, 6, 'a'); // a key kept already stays known
  const last = t.entries(t.length - 4);
  assert.deepStrictEqual(last, [[10 + MAX_KEYS - 3, 6, `k${MAX_KEYS - 3}`], [10 + MAX_KEYS - 2, 6], [10 + MAX_KEYS - 1, 6], [1e6, 6, 'a']]);
});

test('while recorded, a keyed context\'s changes carry its key; late work of a key whose slot was taken carries its scope alone', async () => {
  const mon = rloop.start({ keySlots: 16, lag: false, io: false });
  let take;
  let lateAt;
  let late;
  rloop.scope('job', () => {
    take = hooks.recordTimeline(); // inside the keyed context: the first change is its
    late = new Promise((resolve) => setTimeout(() => {
      lateAt = performance.now();
      resolve(busy(2));
    }, 30));
  }, { key: 'first' });
  rloop.scope('other', () => busy(0.2));
  for (let i = 0; i < 40; i++) rloop.scope('job', () => busy(0.1), { key: `k${i}` });
  await late;
  const { transitions, keysDropped } = take();
  mon.stop();
  const [start] = transitions;
  assert.strictEqual(start[2], 'first', `the first change: ${JSON.stringify(start)}`);
  const job = start[1];
  const keyed = transitions.filter((e) => e.length > 2);
  assert.deepStrictEqual(new Set(keyed.map((e) => e[1])), new Set([job]), 'keys go with their scope\'s slot');
  for (let i = 0; i < 40; i++) assert.ok(keyed.some((e) => e[2] === `k${i}`), `k${i}`);
  const other = transitions.filter((e) => e[1] !== job && e[1] >= 0);
  assert.ok(other.length > 0 && other.every((e) => e.length === 2), `an unkeyed scope has no key: ${JSON.stringify(other)}`);
  const inForce = transitions.findLast((e) => e[0] <= lateAt);
  assert.deepStrictEqual(inForce.slice(1), [job], 'the old key\'s late work: its scope, no key');
  assert.strictEqual(keysDropped, 0);
});

'use strict';
// An app's tests with fake timers: @sinonjs/fake-timers (what jest and sinon install) replaces
// performance.now, process.hrtime, Date and the timers on the objects every module shares, the
// perf_hooks and timers modules included; node:test's mock.timers replaces the timers. rloop
// loaded before them keeps its own real clock and timers: busy time is real time, a timed
// capture ends on time, and none of rloop's timers is on the app's fake clock.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { setTimeout: realTimeout } = require('node:timers');
const FakeTimers = require('@sinonjs/fake-timers');
const rloop = require('../..');
const { primeStackSampler } = require('../fixtures/helpers');

const realNow = performance.now.bind(performance);
// rloop's own timers and callbacks never keep a process alive; these tests wait on them.
const keepAlive = setInterval(() => {}, 1000);
test.after(() => clearInterval(keepAlive));
const spin = (ms) => {
  const end = realNow() + ms;
  while (realNow() < end);
};
const sleep = (ms) => new Promise((resolve) => realTimeout(resolve, ms));

/** The capture's report, or a failure after `ms` of real time (the fake clock never moves on its own). */
function within(ms, pending) {
  return Promise.race([pending, sleep(ms).then(() => assert.fail(`no report after ${ms} ms`))]);
}

test('@sinonjs/fake-timers installed while rloop runs: real busy time, a capture that ends on time, no timer on the fake clock', async () => {
  await primeStackSampler(); // the sampler's worker runs: stalls get stacks from the first
  const mon = rloop.start({ windowMs: 100 });
  // What it fakes by default but setImmediate and its clear, which node:test's own runner needs.
  const clock = FakeTimers.install({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date', 'performance', 'hrtime'] });
  try {
    assert.notStrictEqual(performance.now, Object.getPrototypeOf(performance).now, 'the fake clock is in place');
    const started = realNow();
    const pending = mon.capture({ durationMs: 1000 });
    assert.strictEqual(clock.countTimers(), 0, 'the capture\'s timer is rloop\'s, not on the app\'s clock');
    rloop.scope('work', () => spin(150));
    await sleep(20);
    rloop.scope('work', function blocker() {
      spin(300); // long enough for the sampler's stack on a loaded machine
    });
    const report = await within(5000, pending);
    const took = realNow() - started;
    assert.ok(took >= 980 && took < 4000, `the capture ended after ${took.toFixed(0)} ms of real time`);
    const work = report.elu.scopes.find((s) => s.name === 'work');
    assert.ok(work && work.busyMs >= 430 && work.busyMs < 700, `work busy ${work?.busyMs} ms (spun 450)`);
    assert.ok(report.meta.durationMs >= 980 && report.meta.durationMs < 4000, `meta.durationMs ${report.meta.durationMs}`);
    const end = report.meta.start + report.meta.durationMs;
    assert.ok(Math.abs(end - (performance.timeOrigin + realNow())) < 1000, 'the report on the real clock');
    // The sampler's stack, stamped on the real clock as the main thread answers: inside the stall.
    const stall = report.lag.events.find((e) => e.stack?.some((f) => f.functionName === 'blocker'));
    assert.ok(stall, JSON.stringify(report.lag.events));
    assert.ok(stall.stackTakenAfterMs > 0 && stall.stackTakenAfterMs < stall.lagMs, `taken ${stall.stackTakenAfterMs} ms into a stall of ${stall.lagMs}`);
    assert.strictEqual(report.heap.startUp, null, 'the app\'s start-up ended before the capture (perf_hooks says, not the fake)');
    assert.strictEqual(clock.countTimers(), 0);
  } finally {
    clock.uninstall();
    mon.stop();
  }
});

test('node:test mock.timers enabled while rloop runs: a timed capture, watch() and \'window\' events run on real time', async (t) => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-fake-timers-'));
  t.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
  const mon = rloop.start({ windowMs: 100 });
  t.mock.timers.enable({ apis: ['setTimeout', 'setInterval', 'setImmediate', 'Date'] });
  try {
    const report = await within(5000, mon.capture({ durationMs: 300 }));
    assert.ok(report.meta.durationMs >= 280, `meta.durationMs ${report.meta.durationMs}`);
    const windows = [];
    mon.on('window', (w) => windows.push(w));
    const watching = mon.watch({ everyMs: 200, durationMs: 100, heapStats: false, json: path.join(tmp, 'watch-{n}.json') });
    await sleep(700);
    watching.stop();
    const files = fs.readdirSync(tmp);
    assert.ok(files.length >= 3, `watch() wrote ${files.join() || 'nothing'}`);
    assert.ok(windows.length >= 5, `${windows.length} windows emitted`);
  } finally {
    t.mock.timers.reset();
    mon.stop();
  }
});

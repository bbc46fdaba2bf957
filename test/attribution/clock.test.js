'use strict';
// One time base: a step of the wall clock (NTP, a VM resumed) while rloop runs moves no part of
// a report against another, and no capture of watch() later or sooner. A step is what JS sees
// of it: Date.now() jumps; performance.timeOrigin and performance.now() do not.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const rloop = require('../..');
const { busy } = require('../fixtures/helpers');
const { assertValidReport } = require('../fixtures/report');

const STEP_MS = 3_600_000;
// rloop's own timers never keep a process alive; these tests wait on them.
const keepAlive = setInterval(() => {}, 1000);
test.after(() => clearInterval(keepAlive));

/** Runs `fn` with the wall clock stepped by `stepMs` (as Date.now() sees it), then steps back. */
async function stepped(stepMs, fn) {
  const now = Date.now;
  Date.now = () => now() + stepMs;
  try {
    return await fn();
  } finally {
    Date.now = now;
  }
}

for (const step of [STEP_MS, -STEP_MS]) {
  test(`a capture across a step of the wall clock by ${step / 3_600_000} h: its start, end, windows, heap samples and stalls agree`, async () => {
    const mon = rloop.start({ windowMs: 100, lagThresholdMs: 30 });
    try {
      const capture = mon.capture({ durationMs: 600 });
      await new Promise((resolve) => setTimeout(resolve, 150));
      const r = await stepped(step, async () => {
        rloop.scope('stall', () => busy(60));
        return capture;
      });
      assertValidReport(r);
      const { start, end } = r.meta;
      // The heap's last sample is taken as the report is built, just after its end.
      const within = (at, what) => assert.ok(at >= start - 5 && at <= end + 50, `${what} at ${at}, the capture ran ${start} … ${end}`);
      assert.ok(end - start >= 590 && end - start < 5000, `meta: ${end - start} ms`);
      assert.ok(Math.abs(r.elu.windows[0].start - start) < 110, `the first window starts ${r.elu.windows[0].start - start} ms from the capture`);
      for (const w of r.elu.windows) within(w.end, 'a window end');
      for (const s of [r.heap.start, ...r.heap.timeline, r.heap.end]) within(s.at, 'a heap sample');
      const stall = r.lag.events.find((e) => e.scope === 'stall');
      assert.ok(stall, JSON.stringify(r.lag.events));
      within(stall.at, 'the stall');
    } finally {
      mon.stop();
    }
  });
}

test('watch() keeps its period across a step of the wall clock back', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-clock-'));
  t.after(() => fs.rmSync(dir, { recursive: true }));
  const written = () => fs.readdirSync(dir).length;
  const mon = rloop.start({ lag: false });
  try {
    const w = mon.watch({ everyMs: 300, durationMs: 100, heapStats: false, json: path.join(dir, 'w-{n}.json') });
    await new Promise((resolve) => setTimeout(resolve, 50)); // the first capture runs
    await stepped(-STEP_MS, async () => {
      for (const end = performance.now() + 10_000; written() < 3 && performance.now() < end;) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    w.stop();
  } finally {
    mon.stop();
  }
  assert.ok(written() >= 3, `${written()} captures in 10 s, one due every 300 ms`);
});

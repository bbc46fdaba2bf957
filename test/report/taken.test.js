'use strict';
// What a report says took a stall's time besides its code, and a window's busy time
// (js/report/taken.js), on hand-made stalls and windows: the words, when code named is said to
// be not all the stall's, and the findings, in the page's and the terminal's voice alike. The
// numbers themselves are measured in test/stalls/why.test.js.

const test = require('node:test');
const assert = require('node:assert');
const taken = require('../../js/report/taken');
const { findings, VOICES } = require('../../js/report/sections/diagnosis');
const { context } = require('../../js/report/context');
const { renderHtml } = require('../../js/report/html');
const { formatReport, lagLine, palette } = require('../../js/report/terminal');
const { emptyReport } = require('../fixtures/synthetic-reports');
const { assertValidReport } = require('../fixtures/report');

const frame = { functionName: 'spin', url: 'file:///srv/app/spin.js', line: 3, column: 5 };
const stall = (at, fields) => ({
  lagMs: 310, at, thread: 0, scope: 'job', key: null, stack: [frame], stackFrom: 'sampler', noticedAfterMs: 50, scopes: [], atStart: false, trace: null,
  cpuMs: 90, throttledMs: 210, cpuFromMs: 0, gc: [], ...fields,
});

test('a stall in words: what the thread ran of it, what was throttled or waited, its GC; unknown says nothing', () => {
  const said = (e) => taken.words(taken.ofStall(e));
  assert.strictEqual(said(stall(0, { gc: [{ kind: 'major', ms: 140, count: 1 }, { kind: 'minor', ms: 3, count: 2 }] })),
    'the thread ran 90 ms of it, throttled 210 ms by its CPU quota; major GC 140 ms, 2 minor GCs 3 ms');
  assert.strictEqual(said(stall(0, { cpuMs: 40, throttledMs: 0 })), 'the thread ran 40 ms of it, 270 ms waiting for a CPU or in a system call');
  assert.strictEqual(said(stall(0, { cpuMs: 250, throttledMs: 0, cpuFromMs: 25 })), 'the thread ran 250 ms of the 285 ms measured (from 25 ms into it), 35 ms waiting for a CPU or in a system call');
  assert.strictEqual(said(stall(0, { cpuMs: 300, throttledMs: null })), 'the thread ran 300 ms of it', 'a wait under a tenth is not worth saying');
  assert.strictEqual(said(stall(0, { cpuMs: null, throttledMs: null, cpuFromMs: null, gc: null })), '', 'unknown (not Linux): nothing');
  const older = stall(0, {});
  for (const k of ['cpuMs', 'throttledMs', 'cpuFromMs', 'gc']) delete older[k];
  assert.strictEqual(said(older), '', 'an older report: nothing');
});

test('code named for a stall mostly not its own says so: the quota, the wait, or GC (a pause waits on V8\'s helpers too)', () => {
  const why = (e) => taken.caveat(taken.ofStall(e));
  assert.strictEqual(why(stall(0, {})), 'the thread ran only 29 % of that time: its CPU quota throttled it 210 ms');
  assert.strictEqual(why(stall(0, { throttledMs: 0 })), 'the thread ran only 29 % of that time: it waited 220 ms for a CPU or in a system call');
  assert.strictEqual(why(stall(0, { cpuMs: 28, throttledMs: 0, gc: [{ kind: 'major', ms: 280, count: 1 }] })), '90.3 % of that time was garbage collection: major GC 280 ms');
  assert.strictEqual(why(stall(0, { cpuMs: 200, throttledMs: 0 })), null, 'ran most of it: its code');
  assert.strictEqual(lagLine(stall(0, {}), palette(false)), '⚠ lag 310 ms  scope job  at spin …/app/spin.js:3  (but the thread ran only 29 % of that time: its CPU quota throttled it 210 ms)');
  assert.strictEqual(lagLine(stall(0, { cpuMs: 300, throttledMs: 0 }), palette(false)), '⚠ lag 310 ms  scope job  at spin …/app/spin.js:3  (the thread ran 300 ms of it)');
});

/**
 * A report of two throttled stalls in `job`, and windows whose busy time the thread ran a third
 * of: of `job`'s a quarter, of `light`'s all.
 */
function throttledReport() {
  const r = emptyReport();
  const start = r.meta.start;
  r.lag = { enabled: true, thresholdMs: 50, events: [stall(start + 10, {}), stall(start + 500, { lagMs: 200, cpuMs: 60, throttledMs: 140 })], dropped: 0, summary: { stalls: 2, stretches: 40, p99Ms: 310, maxMs: 310 } };
  const window = (i, busyMs, cpuMs, throttledMs) => ({
    seq: i + 1, start: start + i * 100, end: start + (i + 1) * 100, durationMs: 100, thread: { elu: busyMs / 100, busyMs, cpuMs, throttledMs },
    unattributed: { name: '(unattributed)', elu: 0, busyMs: 0, cpuMs: 0, calls: 0 },
    scopes: [{ name: 'job', elu: (busyMs - 10) / 100, busyMs: busyMs - 10, cpuMs: cpuMs - 10 - (i === 2 ? 2.5 : 0), calls: 1 }, { name: 'light', elu: 0.1, busyMs: 10, cpuMs: 10, calls: 1 }],
  });
  r.elu.windows = [window(0, 90, 30, 60), window(1, 90, 30, 60), window(2, 60, 20, 40)];
  r.elu.scopes = [{ name: 'job', elu: 0.7, busyMs: 210, calls: 3 }, { name: 'light', elu: 0.1, busyMs: 30, calls: 3 }];
  r.elu.thread = { busyMs: 240, elu: 0.8 };
  return r;
}

test('a report says it once, in the page\'s and the terminal\'s words alike: the stalls, and the CPU taken from the busy loop', () => {
  const r = throttledReport();
  assertValidReport(r);
  const [html, text] = [VOICES.html, VOICES.text].map((v) => findings(context(r), v));
  const stalls = text.find((f) => f.title === 'Loop stalls.');
  assert.match(stalls.message, /; by code, in spin …\/app\/spin\.js:3 \(2 stalls, 510 ms, the longest 310 ms\), but the thread ran only 29.4 % of that time: its CPU quota throttled it 350 ms\./);
  assert.match(stalls.message, / In the stalls, the thread ran 150 ms of their 510 ms, throttled 350 ms by its CPU quota\.$/);
  assert.match(stalls.suggestion, /^Most of the stalls' time the thread was held back by its CPU quota/);
  const cpu = text.find((f) => f.title === 'CPU taken away.');
  assert.strictEqual(cpu.severity, 'warning', 'the quota took most of it');
  assert.match(cpu.message, /^The thread's CPU time was 80 ms over 3 windows the loop was busy 240 ms: at least 160 ms of its busy time it did not run, 160 ms of it throttled by its CPU quota\. Taken most from job \(not run 163 ms of its 210 ms\)\. /);
  assert.match(html.find((f) => f.title === 'CPU taken away.').message, /Taken most from <bdi>job<\/bdi> \(not run/, 'the scope as the page names scopes');
  assert.deepStrictEqual(html.map((f) => f.title), text.map((f) => f.title), 'one voice');
  const said = formatReport(r);
  assert.match(said, /CPU taken away\. The thread's CPU time was 80 ms/);
  // A scope's busy time the thread did not run a fifth of is noted where it is listed; one it ran, not.
  assert.match(said, /\n {2}job .* 210 ms {2}3 calls {2}\(the thread ran 22\.6 % of it\)\n/);
  assert.match(said, /\n {2}light .* 30 ms {2}3 calls\n/);
  const page = renderHtml(r);
  assert.match(page, /thread CPU <b>80 ms<\/b><\/span><span>busy, not running <b>160 ms<\/b><\/span><span>throttled <b>160 ms<\/b>/);
  const rowOf = (name) => page.slice(page.indexOf('aria-label="ELU by scope"')).split('<tr>').find((row) => row.includes(`>${name}<`));
  assert.match(rowOf('job'), /210 ms <span class="muted" title="[^"]*">ran 22\.6 %<\/span>/);
  assert.doesNotMatch(rowOf('light'), /ran \d/);

  // Waiting rather than throttled: the same, said as information; under a fifth of busy time, not at all.
  for (const w of r.elu.windows) w.thread.throttledMs = 0;
  assert.strictEqual(findings(context(r), VOICES.text).find((f) => f.title === 'CPU taken away.').severity, 'info');
  for (const w of r.elu.windows) w.thread.cpuMs = w.thread.busyMs * 0.85;
  assert.strictEqual(findings(context(r), VOICES.text).find((f) => f.title === 'CPU taken away.'), undefined);
});

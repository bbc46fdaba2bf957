'use strict';
// A zero-code capture starts in the preload, so the app's start-up is in it. The
// heap-growth warning tells the growth of start-up (the app loading its state) from the growth
// after it, where a leak would be (heap.startUp, js/capture/heap.js).

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const rloop = require('../..');
const { renderHtml } = require('../../js/report/html');
const { assertValidReport } = require('../fixtures/report');
const { inChromium, CHROMIUM } = require('../fixtures/helpers');

const MB = 1024 * 1024;
const ROOT = path.join(__dirname, '..', '..');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-heap-startup-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
fs.mkdirSync(path.join(tmp, 'node_modules'));
fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'rloop'));
// Start-up builds ≈ 30 MB of state it keeps; then, with 'leak', each of 10 timer turns keeps ≈ 2.5 MB more.
const APP = path.join(tmp, 'app.js');
fs.writeFileSync(APP, `'use strict';
const make = (n, tag) => Array.from({ length: n }, (_, i) => ({ i, tag, s: 'x'.repeat(40) + i }));
globalThis.state = make(300000, 'state');
const kept = [];
let turns = 0;
const t = setInterval(() => {
  if (process.argv[2] === 'leak') kept.push(make(25000, 'leak'));
  if (++turns === 10) clearInterval(t);
}, 30);
`);

/** The zero-code report of the app run in `mode`, and its page. */
function run(mode) {
  const json = path.join(tmp, `${mode}.json`);
  const r = spawnSync(process.execPath, ['-r', 'rloop/register', APP, mode], {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 60000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, RLOOP_JSON: json, RLOOP_IO_THRESHOLD: 'off' },
  });
  assert.strictEqual(r.status, 0, r.stderr);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assertValidReport(report);
  return { report, html: renderHtml(report) };
}

/** The page's heap-growth finding: its severity and message. */
function finding(html) {
  const m = /<li class="finding (\w+)">(?:(?!<\/li>).)*?<b>Heap growth\.<\/b> ([^<]*)/s.exec(html);
  return m && { severity: m[1], message: m[2] };
}

const section = (html, id) => {
  const at = html.indexOf(`<section id="${id}"`);
  return html.slice(at, html.indexOf('</section>', at));
};

test("a zero-code capture marks the app's start-up: its heap growth is no leak warning", () => {
  const { report, html } = run('quiet');
  const { start, startUp, end } = report.heap;
  assert.ok(startUp, 'the capture began before the loop ran');
  assert.ok(start.at <= startUp.at && startUp.at <= end.at);
  const what = JSON.stringify({ upMB: (startUp.heapUsed - start.heapUsed) / MB, afterMB: (end.heapUsed - startUp.heapUsed) / MB });
  assert.ok(startUp.heapUsed - start.heapUsed > 20 * MB, `the state built at start-up: ${what}`);
  assert.ok(end.heapUsed - startUp.heapUsed < 8 * MB, `little after it: ${what}`);
  const f = finding(html);
  assert.ok(f, 'the growth is reported');
  assert.strictEqual(f.severity, 'info', `start-up's growth is no warning: ${f.message}`);
  assert.match(f.message, /: \+\d+(\.\d+)? MB during the app's start-up \(to \+\d+\.\d+ s, the event loop's first turn: loading modules and building state, not a leak\), [+−]\d+(\.\d+)? (MB|KB|B) after it\./);
  assert.match(section(html, 'summary'), /over the capture, \+\d+(\.\d+)? MB of it in start-up/);
  const memory = section(html, 'memory');
  assert.match(memory, /start-up, to \+\d+\.\d+ s .*<b>\+\d+(\.\d+)? MB<\/b>.*after start-up/s);
  assert.match(memory, /<line class="start-up" x1="[\d.]+"/, 'the chart marks where start-up ended');
  // The stall of building that state is start-up's too, said apart; the app stalls no more after it.
  const startUpStall = report.lag.events.find((e) => e.atStart);
  assert.ok(startUpStall && startUpStall.lagMs >= 50, JSON.stringify(report.lag.events.map((e) => [e.lagMs, e.atStart])));
  const stalls = /<li class="finding (\w+)">(?:(?!<\/li>).)*?<b>Loop stalls\.<\/b> ([^<]*)/s.exec(html);
  assert.match(stalls[2], /; 1 of them \([\d,.]+ ms\) was already running when rloop started \(zero-code: the app's start-up\); /);
  if (report.lag.events.every((e) => e.atStart || e.lagMs < 100)) assert.strictEqual(stalls[1], 'info', 'no warning for start-up alone');
});

test('growth after start-up is still a warning, and says so', () => {
  const { report, html } = run('leak');
  const { startUp, end } = report.heap;
  assert.ok(end.heapUsed - startUp.heapUsed > 15 * MB, `kept after start-up: ${(end.heapUsed - startUp.heapUsed) / MB} MB`);
  const f = finding(html);
  assert.strictEqual(f?.severity, 'warning', f?.message);
  // Told by the heap after GCs, not by heap used, which holds garbage too.
  assert.match(f.message, /(After the major GC|After major GCs|after minor GCs, young garbage gone,)/);
  assert.match(f.message, /during the app's start-up .*, \+\d+(\.\d+)? MB after it\./);
  leakPage = html;
});

let leakPage = null; // the leaking app's HTML report

test('in Chromium, the warning and the memory chart show where start-up ended', { skip: !fs.existsSync(CHROMIUM) && `no ${CHROMIUM}` }, async () => {
  assert.ok(leakPage, 'the run above made a report');
  await inChromium('report-heap-start-up', leakPage, async (page, artifacts) => {
    const warning = page.locator('#diagnosis li.finding.warning', { hasText: 'Heap growth.' });
    assert.match(await warning.innerText(), /during the app's start-up \(to \+\d+\.\d+ s, the event loop's first turn: loading modules and building state, not a leak\), \+\d+(\.\d+)? MB after it\./);
    const line = page.locator('#memory line.start-up');
    const box = await line.boundingBox();
    assert.ok(box && box.height > 100, `a dashed line across the chart: ${JSON.stringify(box)}`);
    assert.notStrictEqual(await line.evaluate((l) => getComputedStyle(l).strokeDasharray), 'none');
    await page.locator('#diagnosis').screenshot({ path: path.join(artifacts, 'report-heap-start-up-diagnosis.png') });
    await page.locator('#memory').screenshot({ path: path.join(artifacts, 'report-heap-start-up-memory.png') });
  });
});

test('a capture begun once the loop runs holds no start-up', async () => {
  await new Promise((resolve) => setTimeout(resolve, 10)); // node:test may run a test before the loop
  assert.ok(performance.nodeTiming.loopStart >= 0);
  const mon = rloop.start({ lag: false, io: false });
  const keep = setInterval(() => {}, 20); // the capture's end waits for the loop to wake
  try {
    const report = await mon.capture({ durationMs: 200 });
    assert.strictEqual(report.heap.startUp, null);
    assertValidReport(report);
  } finally {
    clearInterval(keep);
    mon.stop();
  }
});

test('the heap after a major GC, as V8 says it in its GC epilogue, is heap used after it', async () => {
  require('node:v8').setFlagsFromString('--expose-gc');
  const gc = require('node:vm').runInNewContext('gc');
  const mon = rloop.start({ io: false });
  const keep = setInterval(() => {}, 20); // the capture's end waits for the loop to wake
  try {
    const captured = mon.capture({ durationMs: 300 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    const garbage = Array.from({ length: 200000 }, (_, i) => ({ i }));
    garbage.length = 0;
    gc();
    const used = process.memoryUsage().heapUsed;
    const report = await captured;
    assertValidReport(report);
    const { major } = report.heap.afterGc;
    assert.ok(major.count >= 1, JSON.stringify(report.heap.afterGc));
    const after = major.samples[major.samples.length - 1].heapUsed;
    assert.ok(Math.abs(after - used) < MB, `after the GC ${after}, heap used then ${used}`);
  } finally {
    clearInterval(keep);
    mon.stop();
  }
});

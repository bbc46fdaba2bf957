'use strict';
// A stall's caller chain before the blocker. With a profile running, the stall's
// samples in order say what ran in it just before the blocking code (`stackBefore`), so the
// page shows how the loop got there; what ran after it is never that.

const test = require('node:test');
const assert = require('node:assert');
const rloop = require('../..');
const { renderHtml } = require('../../js/report/html');
const { assertValidReport } = require('../fixtures/report');
const fs = require('node:fs');
const path = require('node:path');
const { busy, primeStackSampler, inChromium, CHROMIUM } = require('../fixtures/helpers');

const timed = (f) => {
  const t = performance.now();
  f();
  return performance.now() - t;
};

// Named functions: the profile names each as its source does.
function prepare() {
  // The JS the handler runs first, long enough for the profile to sample; its own loop, so that
  // it is the innermost frame (Date.now is a builtin with no frame).
  const end = Date.now() + 60;
  let spins = 0;
  while (Date.now() < end) spins++;
  return spins;
}

function ranAfter() {
  return busy(15);
}

test('with a profile, a stall names what ran just before its blocker (stackBefore), never what ran after', async (t) => {
  const keep = setInterval(() => {}, 100); // rloop's events come as the loop wakes
  t.after(() => clearInterval(keep));
  await primeStackSampler();
  const big = (n) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ i, s: 'x'.repeat(20) })));
  let text = big(20000);
  while (timed(() => JSON.parse(text)) < 300) text = big(Math.ceil((JSON.parse(text).length * 3) / 2));
  const parseBig = () => JSON.parse(text);
  const mon = rloop.start({ lagThresholdMs: 50 });
  let report;
  try {
    const captured = mon.capture({ profile: true, durationMs: 120000 });
    const stalls = [];
    mon.on('lag', (e) => { if (e.scope !== null && e.scope.startsWith('handler')) stalls.push(e); });
    // One stall each: the handler prepares, then parses; and one that parses first thing.
    for (const [name, work] of [['handler:prepared', () => { prepare(); parseBig(); ranAfter(); }], ['handler:direct', () => { parseBig(); ranAfter(); }]]) {
      const seen = stalls.length;
      await new Promise((resolve) => setTimeout(() => { rloop.scope(name, work); resolve(); }, 20));
      for (let waited = 0; stalls.length === seen && waited < 30000; waited += 50) await new Promise((r) => setTimeout(r, 50));
    }
    mon.stop();
    report = await captured;
  } finally {
    mon.stop();
  }
  assertValidReport(report);
  const names = (frames) => (frames ?? []).map((f) => f.functionName);
  const stallOf = (scope) => {
    const e = report.lag.events.find((s) => s.scope === scope && s.stackFrom === 'profile');
    assert.ok(e, `${scope}: a stall with the profile's stack: ${JSON.stringify(report.lag.events.map((s) => [s.scope, s.lagMs, s.stackFrom, names(s.stack)]))}`);
    return e;
  };
  const prepared = stallOf('handler:prepared');
  const where = (frames) => (frames ?? []).map((f) => `${f.functionName} ${f.url}:${f.line}`);
  const what = JSON.stringify({ stack: where(prepared.stack), before: where(prepared.stackBefore) });
  assert.ok(prepared.stack.some((f) => f.functionName === 'parseBig'), `the blocker's stack: ${what}`);
  assert.strictEqual(prepared.native, 'JSON', what);
  assert.strictEqual(prepared.stackBefore?.[0]?.functionName, 'prepare', `what ran just before the blocker: ${what}`);
  assert.ok(prepared.stackBefore[0].url.endsWith('stack-before.test.js') && prepared.stackBefore[0].line > 0, what);
  // Its callers are the blocker's: the same callback reached both.
  const caller = prepared.stack[prepared.stack.findIndex((f) => f.functionName === 'parseBig') + 1];
  assert.deepStrictEqual(prepared.stackBefore[1], caller, what);
  for (const e of report.lag.events) assert.ok(!names(e.stackBefore).includes('ranAfter') && !names(e.stack).includes('ranAfter'), 'never what ran after');

  // Parsing first thing: nothing but its callers ran before it.
  const direct = stallOf('handler:direct');
  assert.ok(direct.stack.some((f) => f.functionName === 'parseBig'), JSON.stringify(names(direct.stack)));
  assert.ok(direct.stackBefore === null || direct.stackBefore[0].functionName !== 'prepare', JSON.stringify(names(direct.stackBefore)));

  // The page shows it beside the blocker's stack.
  const html = renderHtml(report);
  const at = html.indexOf('<section id="lag"');
  const lag = html.slice(at, html.indexOf('</section>', at));
  assert.match(lag, /ran just before it:<\/span> prepare …\/stalls\/stack-before\.test\.js:\d+</, 'in the table, with its frames');
  assert.match(lag, /data-tip="[^"]*scope: handler:prepared[^"]*\nran just before it: prepare …\/stalls\/stack-before\.test\.js:\d+"/, 'in the stall\'s tooltip');
  page = html;
});

let page = null; // the first test's HTML report

test('in Chromium, the stall\'s row opens what ran just before it', { skip: !fs.existsSync(CHROMIUM) && `no ${CHROMIUM}` }, async () => {
  assert.ok(page, 'the capture above made a report');
  await inChromium('report-stack-before', page, async (p, artifacts) => {
    // The row of the stall that prepared: the direct one may rank above it and may have a
    // stackBefore of its own (its callers' frames).
    const row = p.locator('#lag tr', { hasText: 'handler:prepared' }).filter({ hasText: 'ran just before it:' }).first();
    const summary = row.locator('details summary', { hasText: 'ran just before it:' }).first();
    assert.match(await summary.innerText(), /^ran just before it: prepare …\/stalls\/stack-before\.test\.js:\d+$/);
    await summary.click();
    const frames = await summary.locator('xpath=..').locator('li').allInnerTexts();
    assert.ok(frames.some((f) => /^prepare\b/.test(f)), `its frames, opened: ${JSON.stringify(frames)}`);
    await p.locator('#lag').screenshot({ path: path.join(artifacts, 'report-stack-before.png') });
  });
});

test('the stack sampler\'s interrupt shows in a CPU profile as rloop\'s, so it is never what ran before a blocker', async () => {
  // The sampler's expression had no URL: a profile sampling it (a stall's first millisecond) named
  // its frames '(anonymous)' as the app's, and stackBefore reported them instead of `prepare`.
  const inspector = require('node:inspector');
  const { EXPRESSION, SAMPLER_URL } = require('../../js/stalls/stack-expression');
  const { isOwn } = require('../../js/own');
  const session = new inspector.Session();
  session.connect();
  const post = (method, params = {}) => new Promise((resolve, reject) => session.post(method, params, (e, r) => (e ? reject(e) : resolve(r))));
  try {
    await post('Profiler.enable');
    await post('Profiler.setSamplingInterval', { interval: 10 });
    let nodes = [];
    for (let round = 0; round < 20 && !nodes.some((n) => n.callFrame.url === SAMPLER_URL); round++) {
      await post('Profiler.start');
      for (let i = 0; i < 300; i++) await post('Runtime.evaluate', { expression: EXPRESSION, returnByValue: true, silent: true });
      nodes = (await post('Profiler.stop')).profile.nodes;
    }
    const sampled = nodes.filter((n) => n.callFrame.url === SAMPLER_URL);
    assert.ok(sampled.length > 0, 'the profile sampled the expression');
    assert.ok(sampled.every((n) => isOwn(n.callFrame)), 'as rloop\'s');
    const unnamed = nodes.filter((n) => n.callFrame.url === '' && String(n.callFrame.scriptId) !== '0');
    assert.deepStrictEqual(unnamed.map((n) => n.callFrame), [], 'no evaluated script without a URL');
  } finally {
    session.disconnect();
  }
});

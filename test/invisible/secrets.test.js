'use strict';
// No secret leaves through a side door: a capture of an app that plants one in every string rloop
// records — I/O targets (credentials, query, fragment, `;jsessionid=`), an error message holding
// a URL, and the URL of an ES module loaded with a query string, which then shows in slow-I/O
// stacks, stall stacks and the CPU profile's analysis and flame tree — renders JSON and HTML
// reports without it.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const { once } = require('node:events');
const { pathToFileURL } = require('node:url');
const rloop = require('../..');
const { buildReport } = require('../../js/report/build');
const { renderJson } = require('../../js/report/json');
const { renderHtml } = require('../../js/report/html');
const { assertValidReport } = require('../fixtures/report');
const { primeStackSampler } = require('../fixtures/helpers');

const SECRET = 'S3CR3T';
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-secrets-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// The app's module, loaded as `app.mjs?v=S3CR3T`: each of its frames has that URL.
const MODULE = `import http from 'node:http';
export function spin(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}
export function slowGet(url) {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => res.resume().on('end', () => resolve(res.statusCode))).on('error', reject);
  });
}
export function failingGet(url, message) {
  return new Promise((resolve) => {
    const req = http.get(url, () => {});
    req.on('error', resolve);
    setTimeout(() => req.destroy(new Error(message)), 20);
  });
}
`;

function assertNoSecret(text, what) {
  const at = text.indexOf(SECRET);
  assert.equal(at, -1, `${what} holds the secret: …${text.slice(Math.max(0, at - 120), at + 40)}…`);
}

test('a capture records no secret planted in URLs, error messages or script URLs, in JSON or HTML', async () => {
  const file = path.join(tmp, 'app.mjs');
  fs.writeFileSync(file, MODULE);
  const url = pathToFileURL(file).href;
  const app = await import(`${url}?v=${SECRET}`);
  const server = http.createServer((req, res) => setTimeout(() => res.end('late'), 30));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address();
  const base = `http://user:${SECRET}@127.0.0.1:${port}`;

  await primeStackSampler(); // so that the stall gets a stack, with the module's URL in it
  const mon = rloop.start({ ioThresholdMs: 0, lagThresholdMs: 50 });
  const live = [];
  mon.on('lag', (e) => live.push(e));
  const json = path.join(tmp, 'report.json');
  const html = path.join(tmp, 'report.html');
  let report;
  try {
    const pending = mon.capture({ durationMs: Infinity, profile: true, json, html });
    await new Promise((resolve) => setTimeout(resolve, 50)); // the profiler is on
    assert.equal(await app.slowGet(`${base}/a;jsessionid=${SECRET}/b?token=${SECRET}#${SECRET}`), 200);
    const error = await app.failingGet(`${base}/c`, `proxy refused ${base}/p?token=${SECRET} (path /d;jsessionid=${SECRET}/e)`);
    assert.match(error.message, /proxy refused/);
    app.spin(300); // a stall, with the module's frames on its stack and in the profile
    await new Promise((resolve) => setTimeout(resolve, 100));
    mon.stop();
    report = await pending;
  } finally {
    mon.stop();
    server.close();
  }
  assertValidReport(report);

  // What was planted reached the report, redacted.
  const events = report.io.events;
  const get = events.find((e) => e.type === 'http' && e.status === 200);
  assert.equal(get?.target, `127.0.0.1:${port}/a/b`, JSON.stringify(events));
  assert.ok(events.some((e) => e.type === 'http-in' && e.target === '/a/b'), 'the server saw the path without its parameter');
  const failed = events.find((e) => e.error?.startsWith('proxy refused'));
  assert.equal(failed?.error, `proxy refused http://127.0.0.1:${port}/p (path /d/e)`);
  assert.ok(get.stack.some((f) => f.functionName.endsWith('slowGet') && f.url === url), JSON.stringify(get.stack));
  const heavy = report.profile.analysis.heavyFunctions.find((f) => f.functionName.endsWith('spin'));
  assert.equal(heavy?.url, url, JSON.stringify(report.profile.analysis.heavyFunctions));
  // The app's stall, not rloop's own start of the CPU profile (marked rloopMs), which a loaded machine can stretch past 250 ms.
  const stall = report.lag.events.find((e) => e.lagMs - (e.rloopMs ?? 0) >= 250);
  assert.ok(stall, JSON.stringify(report.lag.events));
  if (stall.stack) assert.ok(stall.stack.some((f) => f.functionName.endsWith('spin') && f.url === url), JSON.stringify(stall.stack));

  assert.ok(live.some((e) => e.stack?.some((f) => f.url === url)), JSON.stringify(live));
  assertNoSecret(JSON.stringify(live), "the live 'lag' events");
  assertNoSecret(fs.readFileSync(json, 'utf8'), 'the JSON report');
  assertNoSecret(fs.readFileSync(html, 'utf8'), 'the HTML report');
});

test('stall stacks are redacted where the report is built, whatever the sampler gave', () => {
  const frame = (url) => ({ functionName: 'f', url, line: 1, column: 1 });
  const totals = { thread: { busyMs: 0 }, unattributed: { busyMs: 0, calls: 0 }, scopes: [] };
  const stack = [frame(`file:///app/x.mjs?v=${SECRET}`), frame(`http://u:${SECRET}@cdn/m.js;jsessionid=${SECRET}#${SECRET}`), frame('node:fs')];
  const lagEvent = { lagMs: 80, at: 1, thread: 0, scope: null, key: null, stack, noticedAfterMs: 50 };
  const report = buildReport({
    meta: { start: 0, end: 1000 },
    windowMs: 1000,
    totalsBefore: totals,
    totalsAfter: totals,
    windows: [],
    lag: { enabled: true, thresholdMs: 50, events: [lagEvent, { ...lagEvent, stack: null }], dropped: 0 },
    io: { enabled: false, thresholdMs: 500, events: [], dropped: 0, aggregates: [] },
    heap: null,
    profile: null,
  });
  assert.deepEqual(report.lag.events[0].stack.map((f) => f.url), ['file:///app/x.mjs', 'http://cdn/m.js', 'node:fs']);
  assert.equal(report.lag.events[1].stack, null);
  assert.equal(stack[0].url, `file:///app/x.mjs?v=${SECRET}`, 'what was collected is left as it was');
  assertNoSecret(renderJson(report), 'the JSON report');
  assertNoSecret(renderHtml({ ...report, meta: { ...report.meta, tool: 'rloop', options: {} } }), 'the HTML report');
});

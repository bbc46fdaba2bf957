'use strict';
// The HTML report renderer (js/report/html.js) on reports of a real capture, at scale, with
// hostile strings everywhere, and with nothing collected; `rloop report` and capture({ html }).
// What runs in a browser is tested in browser.test.js.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const rloop = require('../..');
const { renderHtml } = require('../../js/report/html');
const { assertValidReport } = require('../fixtures/report');
const { appReport } = require('../fixtures/report-app');
const { scaleReport, hostileReport, emptyReport, diagnosisReport, PAYLOADS, HUGE } = require('../fixtures/synthetic-reports');
const { packagesReport } = require('../fixtures/tree-profile');

const CLI = path.join(__dirname, '..', '..', 'cli', 'rloop.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-html-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const KB = 1024;
const count = (html, re) => (html.match(re) ?? []).length;
const island = (html) => JSON.parse(html.match(/<script type="application\/json" id="rloop-data">(.*?)<\/script>/s)[1]);
const section = (html, id) => {
  const start = html.indexOf(`<section id="${id}"`);
  return start < 0 ? null : html.slice(start, html.indexOf('</section>', start));
};

/**
 * Checks that hold for every page: one file, nothing that can reach the network. App text never
 * holds a raw '<', so every tag here is the renderer's own.
 */
function assertSelfContained(html) {
  assert.match(html, /^<!doctype html>/);
  assert.equal(count(html, /<script\b/gi), 2, 'the data island and the page script');
  assert.equal(count(html, /<style\b/gi), 1);
  assert.match(html, /<meta http-equiv="Content-Security-Policy" content="default-src 'none'; /);
  for (const [tag] of html.matchAll(/<[a-z][^>]*>/gi)) {
    for (const [, name, value] of tag.matchAll(/\s([\w-]+)(?:="([^"]*)")?/g)) {
      assert.ok(name !== 'src' && !name.startsWith('on'), tag.slice(0, 200));
      if (name === 'href') assert.match(value, /^(#[\w-]+|data:,)$/, 'links stay in the page');
      if (name === 'style') assert.doesNotMatch(value, /url|@|:\/\//i, tag.slice(0, 200));
    }
  }
  const css = html.slice(html.indexOf('<style>'), html.indexOf('</style>'));
  assert.doesNotMatch(css, /url\(|@import|:\/\//, 'nothing the stylesheet could fetch');
}

let app;
test.before(() => {
  app = appReport();
});

test('a real capture renders every section, small and self-contained', () => {
  assertValidReport(app);
  const copy = structuredClone(app);
  const html = renderHtml(app);
  assert.deepEqual(app, copy, 'the report is not changed');
  assert.equal(renderHtml(app), html, 'the same report renders the same page');
  assertSelfContained(html);
  assert.ok(html.length < 300 * KB, `${html.length} bytes`);
  for (const id of ['summary', 'diagnosis', 'elu', 'nodered', 'cpu', 'io', 'lag', 'memory', 'capture']) assert.ok(section(html, id), id);

  assert.match(section(html, 'summary'), /Busiest scope/);
  assert.match(section(html, 'diagnosis'), /badge warning|badge critical/);
  assert.match(section(html, 'diagnosis'), /Loop stalls\./);
  const elu = section(html, 'elu');
  for (const s of app.elu.scopes.filter((x) => !x.name.startsWith('node:'))) assert.ok(elu.includes(s.name), s.name);
  assert.equal(count(elu, /<svg class="chart"/g), 1, 'the stacked timeline');
  assert.match(elu, /<table class="sortable[^>]*aria-label="ELU by scope"/);
  assert.match(elu, /req-\d+/, 'worst keys');
  const nodered = section(html, 'nodered');
  for (const name of ['Parse order', 'Enrich customer', 'Render invoice', 'Orders', 'Billing', 'Retry with backoff']) assert.ok(nodered.includes(name), name);
  const cpu = section(html, 'cpu');
  assert.match(cpu, /searchProducts/);
  assert.equal(count(cpu, /<details class="callers">/g), app.profile.analysis.callStacks.length);
  assert.match(cpu, /id="flame-svg"/);
  assert.match(section(html, 'io'), /localhost:\d+\/orders\//);
  const lag = section(html, 'lag');
  assert.match(lag, /job:cleanup/);
  assert.match(lag, /aria-label="Stalls by code location"/);
  assert.match(section(html, 'memory'), /class="delta (good|fair|poor)"/);

  const data = island(html);
  assert.equal(data.flame.nodes.length / 6, app.profile.flame.nodes, 'every node of the flame tree');
  assert.equal(data.flame.nodes[5], app.profile.flame.root.value, 'the root is as wide as the busy time');
});

test('memory deltas are green under 1 MB, yellow to 10 MB, red above', () => {
  const report = emptyReport();
  const at = (heapUsed) => ({ at: report.meta.start, rss: 50e6, heapTotal: 20e6, heapUsed, external: 1e6, arrayBuffers: 0 });
  report.heap = { start: at(10e6), end: at(10e6), timeline: [], dropped: 0, snapshot: null };
  const delta = (bytes) => {
    report.heap.end = at(10e6 + bytes);
    return section(renderHtml(report), 'memory').match(/<td class="num" data-v="[^"]*"><span class="delta (\w+)">/g)
      .map((m) => m.match(/delta (\w+)/)[1]);
  };
  // rss, heapTotal, heapUsed, external, arrayBuffers: only heapUsed changes.
  assert.deepEqual(delta(-5 * 1024 * 1024)[2], 'good');
  assert.deepEqual(delta(0.9 * 1024 * 1024)[2], 'good');
  assert.deepEqual(delta(5 * 1024 * 1024)[2], 'fair');
  assert.deepEqual(delta(11 * 1024 * 1024)[2], 'poor');
});

test('hostile strings render as text: no markup, no script, no URL gets through', () => {
  const report = hostileReport();
  assertValidReport(report);
  const html = renderHtml(report);
  assertSelfContained(html);
  assert.equal(count(html, /<\/script>/gi), 2);
  assert.equal(count(html, /<\/style>/gi), 1);
  assert.deepEqual(html.match(/<(img|iframe|svg onload|style>@)/gi), null);
  assert.deepEqual(html.match(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g), null, 'no raw control character');
  assert.ok(html.includes('controls \\x00\\x01\\x07\\x1b[31mred\\x1b[0m\\x7f\\x85 end'), 'controls shown as \\xNN');
  assert.ok(html.includes('&lt;script&gt;window.__pwned=&quot;script&quot;&lt;/script&gt;'), 'escaped as text');
  assert.ok(html.includes('<bdi>שלום \u202Eevil override\u202C مرحبا</bdi>'), 'right-to-left text isolated');
  assert.ok(html.includes('🔥👩‍💻 emoji 𝒻𝓃'));
  assert.ok(!html.includes('x'.repeat(1000)), 'the 1 MB name is clipped');
  assert.match(html, /hugex+… \(\+1,048,\d{3} chars\)/);
  assert.ok(html.length < 2 * KB * KB);
  // The island holds the strings as they were (clipped): nothing in it could end the element.
  const strings = island(html).flame.strings;
  assert.ok(strings.filter((s) => PAYLOADS.includes(s)).length >= 5);
  assert.ok(strings.some((s) => s.startsWith(HUGE.slice(0, 100)) && s.length < 300));
});

test('an empty capture says why each section is empty, and shows no Node-RED section', () => {
  const report = emptyReport();
  assertValidReport(report);
  const html = renderHtml(report);
  assertSelfContained(html);
  assert.equal(section(html, 'nodered'), null);
  const why = {
    diagnosis: 'No CPU profile was taken in this capture',
    elu: 'No window closed during the capture',
    cpu: 'No CPU profile was taken in this capture (one is taken by capture({ profile: true }) in code, RLOOP_PROFILE=1 in zero-code use, and rloop attach unless --no-profile)',
    io: 'I/O tracking was off for this capture',
    lag: 'Lag tracking was off for this capture',
    memory: 'Heap statistics were not collected in this capture',
  };
  for (const [id, text] of Object.entries(why)) assert.ok(section(html, id).includes(text), `${id}: ${text}`);
  assert.match(section(html, 'elu'), /No scope ran during the capture/);
  assert.match(html, /partial: SIGTERM/);
});

test('a damaged report still renders: any field null or of the wrong type', () => {
  const report = scaleReport({ samples: 500, nodes: 40, ioEvents: 4, targets: 2, lagEvents: 4, scopes: 3, windows: 2 });
  report.nodered = { nodes: { 1003: { name: 'n', type: 't', flow: 'f' } } };
  const paths = [];
  (function walk(value, at) {
    if (at.length > 0) paths.push(at);
    if (value !== null && typeof value === 'object') for (const k of Object.keys(value).slice(0, Array.isArray(value) ? 1 : 50)) walk(value[k], [...at, k]);
  })(report, []);
  assert.ok(paths.length > 150, `${paths.length} fields`);
  for (const at of paths) {
    for (const bad of [null, '<bad>', {}]) {
      const damaged = structuredClone(report);
      at.slice(0, -1).reduce((o, k) => o[k], damaged)[at.at(-1)] = bad;
      const html = renderHtml(damaged);
      assert.ok(!html.includes('<bad>') && html.endsWith('</html>\n'), `${at.join('.')} = ${JSON.stringify(bad)}`);
    }
  }
});

test('Node-RED scopes without the plugin\'s metadata are listed by id', () => {
  const report = structuredClone(app);
  delete report.nodered;
  const nodered = section(renderHtml(report), 'nodered');
  assert.match(nodered, /no Node-RED metadata/);
  assert.match(nodered, /\(unknown\)/);
  assert.match(nodered, /4f1a9c2e8d7b6a01/);
});

test('Node-RED nodes show the messages the plugin counted, not callbacks; a report without the counts shows callbacks as such', () => {
  const report = structuredClone(app);
  const [id] = Object.keys(report.nodered.nodes);
  const calls = report.elu.scopes.find((s) => s.name === `node:${id}`).calls;
  report.nodered.nodes[id].messages = 98;
  const counted = section(renderHtml(report), 'nodered');
  const head = (html) => html.slice(html.indexOf('aria-label="Node-RED nodes"'), html.indexOf('</thead>', html.indexOf('aria-label="Node-RED nodes"')));
  assert.match(head(counted), />Messages</);
  assert.doesNotMatch(head(counted), />Calls<|>Callbacks</);
  assert.match(counted, />98</);
  const row = counted.slice(counted.indexOf(id));
  assert.doesNotMatch(row.slice(0, row.indexOf('</tr>')), new RegExp(`>${calls}<`));
  delete report.nodered.nodes[id].messages;
  assert.match(head(section(renderHtml(report), 'nodered')), />Callbacks</);
  assert.match(section(renderHtml(report), 'elu'), />Callbacks</);
});

test('a 100 k-sample profile and 10 k slow I/O events render under 2 MB, saying what was capped', () => {
  const report = scaleReport({ samples: 100000, ioEvents: 10000 });
  assertValidReport(report);
  assert.equal(report.profile.analysis.samples, 100000);
  const html = renderHtml(report);
  assertSelfContained(html);
  assert.ok(html.length < 2 * KB * KB, `${html.length} bytes`);
  const caps = section(html, 'capture').match(/<ul class="caps">(.*?)<\/ul>/s)[1];
  assert.match(caps, /Slow I\/O: the 100 costliest of 3,000 type and target groups are listed/);
  assert.match(caps, /All I\/O: the 50 costliest of 6,000 targets are listed/);
  assert.match(caps, /Lag timeline: the 500 longest of 1,000 stalls are drawn/);
  assert.match(caps, /Flame graph: [\d,]+ call-tree nodes are left out/);
  assert.match(caps, /CPU by package: the 30 busiest of 32 packages are listed, the rest summed in \(other packages\)/);
  assert.match(section(html, 'io'), /class="cap"/, 'and in the section itself');
  const packages = section(html, 'cpu').match(/aria-label="CPU by package">.*?<\/table>/s)[0];
  assert.equal(count(packages, /<tr><td>/g), report.profile.analysis.packages.length);
  assert.match(plain(packages), /\(other packages\) 2 package /);
});

test('rloop report writes the HTML page and a pretty JSON copy', () => {
  const input = path.join(tmp, 'in.json');
  fs.writeFileSync(input, JSON.stringify(app));
  const [html, json] = [path.join(tmp, 'out.html'), path.join(tmp, 'out.json')];
  const r = spawnSync(process.execPath, [CLI, 'report', input, '--html', html, '--json', json], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(fs.readFileSync(html, 'utf8'), renderHtml(app));
  assert.equal(fs.readFileSync(json, 'utf8'), `${JSON.stringify(app, null, 2)}\n`);
  const bad = spawnSync(process.execPath, [CLI, 'report', input], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /report needs --html and\/or --json/);
});

test('capture({ html }) writes the page', async (t) => {
  const keepAlive = setInterval(() => {}, 1000); // rloop's own timers never keep a process alive
  t.after(() => clearInterval(keepAlive));
  const file = path.join(tmp, 'capture-{n}.html');
  const mon = rloop.start({ windowMs: 50 });
  const report = await mon.capture({ durationMs: 120, html: file });
  mon.stop();
  const written = fs.readdirSync(tmp).find((f) => f.startsWith('capture-'));
  assert.equal(fs.readFileSync(path.join(tmp, written), 'utf8'), renderHtml(report));
});

// On the field report rebuilt (test/fixtures/synthetic-reports.js, diagnosisReport).
const plain = (html) => html.replace(/<[^>]+>/g, ' ').replace(/&#39;/g, "'").replace(/\s+/g, ' ');
const findings = (html) => [...section(html, 'diagnosis').matchAll(/<li class="finding[^"]*">(.*?)<\/li>/gs)].map((m) => plain(m[1]));
const finding = (html, title) => findings(html).find((f) => f.includes(title));
const card = (html, label) => plain(section(html, 'summary').match(new RegExp(`<span class="label">${label}</span>(.*?)</a>`, 's'))[1]);

test('a function that blocks 120 ms every 500 ms is named, with where and how many stalls it caused', () => {
  const report = diagnosisReport();
  assertValidReport(report);
  const html = renderHtml(report);
  const long = finding(html, 'Long calls.');
  assert.ok(long, findings(html).join('\n'));
  assert.match(long, /20 single calls of rebuildIndex \(file:\/\/\/srv\/app\/src\/jobs\/reindex\.js:42:3\) lasted 50 ms or more, the longest 120 ms/);
  assert.match(long, /It was on the stack of 15 of the 29 stalls whose stack was taken\./);
  assert.match(long, /at …\/jobs\/reindex\.js:42/);
  assert.ok(!findings(html).some((f) => f.includes('CPU hog.')), 'no function over half the busy time');
});

test('slow I/O advice: of the stalls in a wait, only the one its response arrived in held it; the other side\'s time a range', () => {
  const report = diagnosisReport();
  const io = finding(renderHtml(report), 'Slow I/O.');
  // A report without `stretchMs`: a stall ended within the lag threshold of a read may have held it.
  assert.match(io, /Of their 3,623 ms of waiting, 1,935 ms \(53\.4 %\) was this app's own loop stalled \(14 stalls overlapped them\)\. A response waits only for a stall it arrives in: 1 stall may have held one, 140 ms at most, so the other side took about 1,161–1,208 ms a call\./);
  assert.match(io, /Look at the remote side first/);
  assert.match(section(renderHtml(report), 'io'), /Loop stalled meanwhile/);
  // Where the loop woke to read each response, just before: no stall ran up to that wake.
  const fetches = report.io.events.filter((e) => e.type === 'fetch');
  for (const e of fetches) e.stretchMs = 0.2;
  assertValidReport(report);
  assert.match(finding(renderHtml(report), 'Slow I/O.'), /\(14 stalls overlapped them\)\. A response waits only for a stall it arrives in, and none was under way as one was read: the other side took about 1,208 ms a call\./);
  // A stall that ran until the loop woke to read each: the response may have come as it began.
  const stall = report.lag.events[0];
  report.lag.events = fetches.map((e) => ({ ...stall, at: e.at + e.durationMs - 400.2, lagMs: 400 }));
  const held = finding(renderHtml(report), 'Slow I/O.');
  assert.match(held, /3 stalls may have held one, 1,201 ms at most, so the other side took about 807–1,208 ms a call\./);
  assert.match(held, /Fix the loop's stalls first/);
  // The same waits with the loop free: the remote side is the suspect.
  report.lag.events = [];
  const free = finding(renderHtml(report), 'Slow I/O.');
  assert.match(free, /No stall of the loop overlapped them\./);
  assert.match(free, /Look at the remote side first/);
});

test('a response is held only by the stall that ran up to the wake that read it', () => {
  const { heldResponses } = require('../../js/report/facts');
  const stalls = [{ at: 100, lagMs: 100 }, { at: 400, lagMs: 200 }];
  const held = (e) => heldResponses([e], stalls, 50);
  assert.deepEqual(held({ at: 0, durationMs: 650, stretchMs: 50 }), { heldMs: 250, stalls: 1 }, 'woke as the stall ended: it came from 400 on');
  assert.deepEqual(held({ at: 0, durationMs: 650, stretchMs: 30 }), { heldMs: 30, stalls: 0 }, 'woke 20 ms after it: the stretch alone');
  assert.deepEqual(held({ at: 500, durationMs: 100, stretchMs: 0 }), { heldMs: 100, stalls: 1 }, 'no earlier than the wait');
  assert.deepEqual(held({ at: 50, durationMs: 500, stretchMs: 150 }), { heldMs: 150, stalls: 1 }, 'read 150 ms into a stall: up to those');
  assert.deepEqual(held({ at: 0, durationMs: 700, state: 'pending' }), { heldMs: 0, stalls: 0 }, 'never read');
  assert.deepEqual(held({ at: 0, durationMs: 640 }), { heldMs: 240, stalls: 1 }, 'an older report: ended within the lag threshold');
  assert.deepEqual(held({ at: 0, durationMs: 660 }), { heldMs: 0, stalls: 0 }, 'an older report: ended before it');
});

test('one count of stalls and one longest everywhere; p99 never above the longest', () => {
  const report = diagnosisReport();
  const html = renderHtml(report);
  assert.match(card(html, 'Loop stalls'), /^ 38 longest 529 ms $/);
  assert.match(finding(html, 'Loop stalls.'), /The loop stalled 38 times for 50 ms or more, the longest 529 ms/);
  assert.match(finding(html, 'Loop stalls.'), /; by code, in compactCache …\/lib\/cache\.js:30 \(8 stalls, 2,068 ms, the longest 529 ms\)\./, 'named, rloop\'s run frame no group of its own');
  const head = plain(section(html, 'lag').match(/<p class="facts">.*?<\/p>/s)[0]);
  assert.match(head, /stalls 38 longest 529 ms/);
  const p99 = Number(head.match(/p99 stretch \(worst window\) ([\d,]+) ms/)[1].replace(',', ''));
  assert.ok(p99 <= 529, head);
  // A window's p99 above every stall: capped at the longest.
  report.elu.windows[0].lag.p99Ms = 852;
  report.lag.summary.p99Ms = 852;
  assert.match(plain(section(renderHtml(report), 'lag')), /p99 stretch \(worst window\) 529 ms/);
  const { buildReport } = require('../../js/report/build');
  const rebuilt = buildReport({ ...report, meta: report.meta, windowMs: 1000, totalsBefore: { thread: { busyMs: 0 }, unattributed: { busyMs: 0, calls: 0 }, scopes: [] },
    totalsAfter: { thread: { busyMs: 0 }, unattributed: { busyMs: 0, calls: 0 }, scopes: [] }, windows: [{ ...report.elu.windows[0], lag: { stretches: 9, stalls: 1, p50Ms: 1, p99Ms: 852, maxMs: 849 } }] });
  assert.deepEqual(rebuilt.lag.summary, { stalls: 1, stretches: 9, p99Ms: 849, maxMs: 849 });
});

test('a scope whose total fell between the two readings (a request\'s key moved to its route) has no negative time', () => {
  const { eluBetween } = require('../../js/report/build');
  const totals = (scopes) => ({ thread: { busyMs: 100 }, unattributed: { busyMs: 0, calls: 0 }, scopes });
  const before = totals([{ name: 'GET /weather/paris', busyMs: 3, calls: 2 }, { name: 'GET /weather/:city', busyMs: 10, calls: 5 }]);
  const after = totals([{ name: 'GET /weather/paris', busyMs: 2.5, calls: 3 }, { name: 'GET /weather/:city', busyMs: 14, calls: 9 }]);
  assert.deepEqual(eluBetween(before, after, 1000).scopes.map((x) => [x.name, x.busyMs, x.calls]), [['GET /weather/:city', 4, 4], ['GET /weather/paris', 0, 1]]);
});

test("a stall that is rloop's own (starting or stopping a CPU profile) is no finding; a stall of the app's counts for its own part", () => {
  const report = diagnosisReport();
  const at = report.meta.start + 100;
  const stall = (lagMs, rloopMs, scope) => ({ lagMs, rloopMs, at, thread: 0, scope, key: null, stack: null, noticedAfterMs: 5 });
  report.lag = { ...report.lag, events: [stall(164, 150, null)], dropped: 0 };
  assert.equal(finding(renderHtml(report), 'Loop stalls.'), undefined, 'its 14 ms are no stall of the app');
  // Nor a stall of the app's anywhere: the Lag section and the terminal count none and say why.
  const page = renderHtml(report);
  const lag = page.slice(page.indexOf('<section id="lag"'), page.indexOf('</section>', page.indexOf('<section id="lag"')));
  assert.match(lag, /stalls <b>0<\/b>.*longest <b>—<\/b>/);
  assert.match(lag, /1 stall of 164 ms was mostly rloop&#39;s own work \(150 ms starting or stopping a CPU profile\) and is not counted as the app&#39;s\./);
  assert.doesNotMatch(lag, /Longest stalls/);
  const { formatReport } = require('../../js/report/terminal');
  const terminal = formatReport(report);
  assert.match(terminal, /^Lag: 0 stalls of 50 ms or more\n {2}1 stall of 164 ms was mostly rloop's own work/m);
  report.lag.events.push(stall(180, 100, 'job'), { ...stall(60, undefined, 'job'), at: at + 1000 });
  const text = finding(renderHtml(report), 'Loop stalls.');
  assert.match(text, /The loop stalled 2 times for 50 ms or more, the longest 80 ms \(not counting 1 stall of rloop's own, starting or stopping a CPU profile\); by scope, the most lag was in job \(2 stalls, 140 ms\)/);
});

test('the terminal report says when a list is cut short, and shows a builtin as one, not rloop\'s marker', () => {
  const { formatReport } = require('../../js/report/terminal');
  const text = formatReport(diagnosisReport());
  assert.match(text, /^Lag: 38 stalls of 50 ms or more, longest 529 ms/m);
  assert.match(text, /^ {2}the 5 longest of 38:$/m);
  assert.match(text, /^ +1,800 ms +25 % {2}JSON\.parse \(builtin\)$/m);
  assert.doesNotMatch(text, /rloop:json/);
  // The page's diagnosis, in the same words and order: stalls and slow I/O too, not the profile's patterns alone.
  const page = findings(renderHtml(diagnosisReport())).map((f) => f.split('. ')[0]);
  const terminal = [...text.matchAll(/^ {2}\[\w+\] ([^.]+)\./gm)].map((m) => m[1]);
  assert.deepEqual(terminal, page.map((t) => t.trim().replace(/^\w+ /, '')));
  assert.match(text, /^ {2}\[warning\] Slow I\/O\. .* the other side took about 1,161–1,208 ms a call\.$/m);
});

test('CPU shares are shares of busy time everywhere, and say so', () => {
  const html = renderHtml(diagnosisReport());
  const cpu = section(html, 'cpu');
  assert.match(cpu, /<th scope="col" class="num" data-type="num" tabindex="0">Self, % of busy<\/th>/);
  const json = plain(cpu.match(/<tr><td class="num" data-v="2">.*?<\/tr>/s)[0]);
  assert.match(json, /JSON\.parse \(builtin\) json 1,800 ms 25 %/);
  assert.match(finding(html, 'JSON-heavy.'), /took 25 % of busy time, 1,800 ms/);
  assert.match(cpu, /aria-label="CPU time by kind of work, share of busy time"/);
  assert.doesNotMatch(plain(cpu), /idle 2,900 ms · /, 'idle is no share of busy time');
  assert.match(card(html, 'Hot functions'), /renderPage 33\.3 % of busy/);
});

test('the charts span the capture: they end at its end, the last partial window drawn, nothing before its start', () => {
  const html = renderHtml(diagnosisReport()); // 10.1 s; windows from 30 ms before it to 9.97 s
  const ticks = (id) => [...section(html, id).matchAll(/<text class="tick" x="([\d.]+)" y="\d+" text-anchor="middle">([^<]*)<\/text>/g)].map((m) => [Number(m[1]), m[2]]);
  for (const id of ['elu', 'lag', 'memory']) {
    const xs = ticks(id);
    assert.deepEqual(xs.at(-1)[1], '10 s', `${id}: ${xs.map((x) => x[1])}`);
    assert.ok(xs.at(-1)[0] < 1186 - 1, `${id}: the 10 s tick left of the 10.1 s end`);
  }
  const elu = section(html, 'elu');
  const tips = [...elu.matchAll(/<rect class="hover"[^>]*data-tip="([^"]*)"/g)].map((m) => m[1]);
  assert.equal(tips.length, 11, 'ten windows and the partial one');
  assert.match(tips[0], /^\+0 s to \+0\.97 s: loop busy [\d.]+ %\nthe window began 0\.03 s before the capture/);
  assert.match(tips[10], /^\+9\.97 s to \+10\.1 s: loop busy [\d.]+ %\nthe capture ended inside this window/);
  const bars = [...elu.matchAll(/<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"/g)].map((m) => Number(m[1]) + Number(m[2]));
  assert.ok(Math.max(...bars) > 1180, `bars reach the end: ${Math.max(...bars)}`);
});

test('slow I/O counts outgoing and incoming apart', () => {
  const html = renderHtml(diagnosisReport());
  assert.match(card(html, 'Slow I/O'), /^ 3 out · 3 in longest out 1,441 ms · longest in 1,481 ms $/);
  assert.match(finding(html, 'Slow I/O.'), /^ warning Slow I\/O\. 3 outgoing operations took 500 ms or more; 3 incoming requests took as long to answer\./);
  assert.match(plain(section(html, 'io')), /slow outgoing 3 slow incoming \(http-in\) 3/);
});

test("rloop's own frames are hidden from stacks and from stalls by code location", () => {
  const html = renderHtml(diagnosisReport());
  const lag = section(html, 'lag');
  assert.doesNotMatch(lag, /\/js\/hooks\.js|\/js\/index\.js|rloop:json/);
  const rows = [...lag.match(/aria-label="Stalls by code location".*?<\/table>/s)[0].matchAll(/<tr>(.*?)<\/tr>/gs)].slice(1).map((m) => plain(m[1]).trim());
  assert.deepEqual(rows.map((r) => r.split(' ').slice(0, 3).join(' ')), [
    'compactCache …/lib/cache.js:30 8', 'rebuildIndex …/jobs/reindex.js:42 10', 'tokenize …/jobs/reindex.js:80 5',
    'handleRequest …/routes/checkout.js:12 6', 'no stack taken',
  ]);
  assert.doesNotMatch(section(html, 'cpu'), /hooks\.js/);
  assert.ok(!island(html).flame.strings.some((s) => s.includes('/js/attribution/hooks.js')), 'nor in the flame graph');
  assert.doesNotMatch(html, /rloop:json/, 'its JSON markers show as the builtins: JSON.parse (builtin)');
  assert.ok(island(html).flame.strings.includes('(builtin)'));
});

test('a fetch stack shows the caller first and folds the library frames, counted', () => {
  const io = section(renderHtml(diagnosisReport()), 'io');
  const stack = io.match(/<details class="stack"><summary>Timeout\._onTimeout …\/routes\/checkout\.js:31.*?<\/ol><\/details>(?=<\/td>)/s)[0];
  const items = stack.match(/<ol class="calls"[^>]*>(.*)<\/ol>/s)[1];
  assert.match(items, /^<li><span class="fn"><bdi>Timeout\._onTimeout<\/bdi><\/span>/, 'the app frame first');
  assert.match(items, /<li class="lib"><details><summary>9 library frames <span class="muted">\(undici ×8, node ×1\)<\/span><\/summary>/);
  assert.match(items, /mainFetch.*Channel\.publish/s, 'callers first inside the fold too');
});

test('words agree with their numbers; the heap card is whole', () => {
  const report = diagnosisReport();
  report.lag.events = report.lag.events.slice(0, 1);
  report.lag.dropped = 0;
  const html = renderHtml(report);
  assert.match(finding(html, 'Loop stalls.'), /stalled 1 time for 50 ms or more.*\(1 stall, /);
  assert.doesNotMatch(html, /\b1 (stalls|times|frames|msgs|call-tree nodes)\b/);
  assert.match(card(html, 'Peak heap used'), /^ 43 MB \+4\.8 MB over the capture $/);
  assert.doesNotMatch(html, /\d\.\d{3} ms/, 'no raw milliseconds');
  const titles = findings(html).map((f) => f.match(/^ \w+ ([^.]+\.)/)[1]);
  for (const t of titles) assert.match(t, /^[A-Z][\w/ -]*\.$/, `title "${t}"`);
});

test('the stalled part of a wait is never more than the wait, whatever stalls a report holds', () => {
  const { stalledDuring } = require('../../js/report/facts');
  const stalls = [{ at: 100, lagMs: 300 }, { at: 150, lagMs: 100 }, { at: 350, lagMs: 200 }, { at: 900, lagMs: 50 }];
  assert.deepEqual(stalledDuring([{ at: 0, durationMs: 1000 }, { at: 500, durationMs: 100 }, { at: 960, durationMs: 10 }], stalls),
    { ms: 550, stalls: 4, events: [{ ms: 500, stalls: 4 }, { ms: 50, stalls: 3 }, { ms: 0, stalls: 0 }] });
  const html = renderHtml(scaleReport({ samples: 2000, nodes: 300, ioEvents: 2000, targets: 20, lagEvents: 1000, scopes: 5, windows: 60 }));
  const share = Number(finding(html, 'Slow I/O.').match(/\(([\d.]+) %\) was this app's own loop stalled/)[1]);
  assert.ok(share <= 100, `${share} %`);
  assert.doesNotMatch(finding(html, 'Slow I/O.'), /about -/);
});

test('a stall whose stack is not the blocker\'s says so, and never groups under the code that ran after', () => {
  const report = diagnosisReport();
  const after = { functionName: 'ranAfter', url: 'file:///app/after.js', line: 3, column: 1 };
  report.lag.events = [{
    lagMs: 300, at: report.meta.start + 1000, thread: 0, scope: 'job:import', key: null, stack: null, noticedAfterMs: 50,
    stackTakenAfterMs: 301, stackSeen: [after], native: null, atStart: false,
    stackNote: 'the loop was in code V8 cannot interrupt (a builtin such as JSON.parse or RegExp, or C++) for 250 ms more: these frames ran after it',
    scopes: [{ scope: 'job:import', key: null, ms: 240 }, { scope: 'job:blocker', key: null, ms: 60 }],
  }];
  assertValidReport(report);
  const lag = section(renderHtml(report), 'lag');
  assert.match(lag, /no stack of the blocker: the loop was in code V8 cannot interrupt/);
  assert.match(lag, /frames that ran after it/);
  assert.match(lag, /inside: job:import 240 ms, job:blocker 60 ms/);
  const byLocation = lag.slice(lag.indexOf('By code location'), lag.indexOf('Longest stalls'));
  assert.ok(!byLocation.includes('ranAfter'), 'not grouped under what ran after');
});

test('CPU by package, a bar and a table of shares of busy time; heavy functions say their package', () => {
  const r = packagesReport();
  assertValidReport(r);
  const cpu = section(renderHtml(r), 'cpu');
  assert.match(plain(cpu), /The busiest package, some-orm , ran 39 % of the busy time in its own code \(39 ms\)\./);
  assert.match(cpu, /<div class="catbar" role="img" aria-label="CPU time by package, share of busy time">/);
  const bar = cpu.match(/aria-label="CPU time by package, share of busy time">(.*?)<\/div>/s)[1];
  assert.equal(count(bar, /<span /g), r.profile.analysis.packages.length, 'a part for each');
  assert.match(bar, /<span style="width:39%;background:#4e79a7" data-tip="some-orm\n39 ms, 39 % of busy time">/);
  assert.match(bar, /<span class="cat-user" style="width:14%" data-tip="\(app\)\n14 ms, 14 % of busy time">/);
  const table = cpu.match(/<table class="sortable [^"]*" aria-label="CPU by package">.*?<\/table>/s)[0];
  const rows = [...table.matchAll(/<tr><td>(.*?)<\/tr>/gs)].map((m) => plain(m[1]).trim());
  assert.deepEqual(rows, [
    'some-orm package 39 ms 39 % query 30 ms JSON.parse 5 ms RegExp: ^\\w+$ 4 ms',
    '(app) the app 14 ms 14 % main 9 ms validate 3 ms JSON.parse 2 ms',
    '@orm/sql package 11 ms 11 % build 11 ms',
    '(garbage collector) GC 9 ms 9 % (garbage collector) 9 ms',
    'lodash package 8 ms 8 % find 8 ms',
    '(node core) Node.js 7 ms 7 % read 4 ms listOnTimeout 2 ms run 1 ms',
    'tpl package 6 ms 6 % render 6 ms',
    '(program) V8 4 ms 4 % (program) 4 ms',
    '(native) native 2 ms 2 % uv_run 1 ms callback 1 ms',
  ]);
  const heavy = cpu.match(/aria-label="Heavy functions">.*?<\/table>/s)[0];
  assert.match(plain(heavy), / query some-orm …\/lib\/query\.js:10 user 30 ms /);
  assert.match(plain(heavy), / main …\/src\/main\.js:10 user 9 ms /, 'the app\'s own function names no package');
});

test('a report from before packages says so, and the rest of the CPU section renders', () => {
  const r = packagesReport();
  delete r.profile.analysis.packages;
  for (const f of r.profile.analysis.heavyFunctions) delete f.package;
  assertValidReport(r);
  const cpu = section(renderHtml(r), 'cpu');
  assert.match(cpu, /No busy time by package in this report \(older reports have none\)\./);
  assert.match(cpu, /aria-label="Heavy functions"/);
});

test("a stall's stack from the CPU profile says so, with the native work it was in", () => {
  const report = diagnosisReport();
  const blocker = { functionName: 'importAll', url: 'file:///app/import.js', line: 9, column: 3 };
  report.lag.events = [{
    lagMs: 300, at: report.meta.start + 1000, thread: 0, scope: 'job:import', key: null, stack: [blocker], stackFrom: 'profile',
    noticedAfterMs: 50, stackTakenAfterMs: 301, stackSeen: null, stackNote: null, native: 'JSON', atStart: false, scopes: [],
  }];
  assertValidReport(report);
  const lag = section(renderHtml(report), 'lag');
  assert.match(lag, /native JSON work<\/span><br><span class="muted">stack from the CPU profile&#39;s samples inside the stall/);
  assert.match(lag, /in native JSON work\nstack from the CPU profile/);
  assert.match(lag, /the capture kept 1 stall and dropped 6 more/);
  report.lag.events[0].stackFrom = 'sampler';
  assert.doesNotMatch(section(renderHtml(report), 'lag'), /from the CPU profile/);
});

test('counts of one read in the singular: a slow operation, an older sample', () => {
  const report = diagnosisReport();
  report.io.events = report.io.events.slice(0, 1);
  report.io.dropped = 3;
  report.heap.dropped = 1;
  const html = renderHtml(report);
  assert.match(section(html, 'io'), /the capture kept 1 slow operation and dropped 3 more/);
  assert.match(section(html, 'memory'), /the capture dropped 1 older sample of its timeline/);
});

test('heap growth is told by the heap after GCs: garbage the GCs freed is no finding, and heap used alone warns of nothing', () => {
  const MB = 1024 * 1024;
  const report = diagnosisReport();
  const t0 = report.meta.start;
  const stats = (ms, heapUsed) => ({ at: t0 + ms, rss: 200 * MB, heapTotal: 120 * MB, heapUsed, external: 0, arrayBuffers: 0 });
  const kinds = (major, minor) => ({
    major: { count: major.length, samples: major.map(([ms, mb]) => ({ at: t0 + ms, heapUsed: mb * MB })) },
    minor: { count: minor.length, samples: minor.map(([ms, mb]) => ({ at: t0 + ms, heapUsed: mb * MB })) },
  });
  const severityOf = (heap) => {
    const f = finding(renderHtml({ ...report, heap: { ...report.heap, start: stats(0, 41 * MB), end: stats(10000, 68 * MB), startUp: null, ...heap } }), 'Heap growth.');
    return f && { severity: /warning/.test(f) ? 'warning' : 'info', text: f };
  };
  // The field case: +27 MB of heap used, the heap after major GCs flat.
  assert.equal(severityOf({ afterGc: kinds([[2000, 42], [9000, 41.5]], [[1000, 45], [9500, 46]]) }), undefined);
  // No GC recorded (an older report, or none ran): said, never a warning.
  const unknown = severityOf({ afterGc: null });
  assert.doesNotMatch(unknown.text, /^warning/i);
  assert.match(unknown.text, /a leak cannot be told from it in this capture/);
  // A leak: the heap after major GCs grows.
  assert.match(severityOf({ afterGc: kinds([[2000, 42], [9000, 60]], []) }).text, /After major GCs the heap went from 42 MB \(\+2(\.0+)? s\) to 60 MB \(\+9(\.0+)? s\), \+18 MB over 2 major GCs: memory the GC could not free\./);
  // Only minor GCs: what outlived the young generation, said as such.
  assert.match(severityOf({ afterGc: kinds([], [[1000, 40], [9000, 58]]) }).text, /No major GC ran; after minor GCs, young garbage gone, the heap went from 40 MB .* to 58 MB .*, \+18 MB of objects that outlived the young generation/);
});

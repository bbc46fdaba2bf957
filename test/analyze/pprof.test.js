'use strict';
// A capture's CPU and heap profiles as pprof, read by real consumers: `go tool pprof` (Debian
// golang-go, .ci/run installs it) shows the time per `scope`, `route`, `key` and `thread` label,
// equal to the report's analysis by scope, and focuses on one scope's or key's functions;
// pprof-format (the encoder's own decoder) reads every sample's labels; speedscope (the npm
// package's built app, in Debian's headless Chromium) imports both files. Known work: scopes in
// the main thread, keyed and not, an HTTP route, allocations in one key, and a worker thread.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { execFileSync } = require('node:child_process');
const { Profile } = require('pprof-format');
const { CHROMIUM, ARTIFACTS } = require('../fixtures/helpers');

const ROOT = path.resolve(__dirname, '..', '..');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-pprof-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

/** A child process: the main thread's capture of scopes alpha and beta and a route, or a worker's. */
const APP = `
const { Worker, isMainThread, threadId } = require('node:worker_threads');
const http = require('node:http');
const rloop = require(${JSON.stringify(ROOT)});
const spinAlpha = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };
const spinBeta = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };
const spinRoute = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };
function allocGamma() { const a = []; for (let i = 0; i < 5000; i++) a.push({ i }); return a.length; }
const out = process.argv[2];
const mon = rloop.start({ autoScopes: { http: true } });
let n = 0;
const work = setInterval(() => {
  rloop.scope('alpha', () => spinAlpha(3), { key: 'order-' + (n++ % 3) });
  rloop.scope('beta', () => spinBeta(1));
  rloop.scope('gamma', () => allocGamma(), { key: 'batch-7' });
}, 8);
let server;
let asking = true;
if (isMainThread) {
  server = http.createServer((req, res) => { spinRoute(2); res.end('ok'); }).listen(0, '127.0.0.1', () => {
    const { port } = server.address();
    const agent = new http.Agent({ keepAlive: true });
    // A request sent as the server closes its idle connections at the end may be reset.
    const ask = () => asking && http.get({ host: '127.0.0.1', port, path: '/items/' + Math.floor(Math.random() * 1e6), agent }, (r) => {
      r.resume();
      r.on('end', () => setTimeout(ask, 5));
    }).on('error', () => {});
    ask();
  });
}
mon.capture({ durationMs: 1500, profile: true, pprof: out + '.pb.gz', heapProfile: true, heapPprof: out + '-heap.pb.gz', json: out + '.json' }).then(() => {
  clearInterval(work);
  mon.stop();
  asking = false;
  server?.close();
  server?.closeIdleConnections();
  if (isMainThread) new Worker(__filename, { argv: [out + '-worker'] }).on('exit', () => process.exit(0));
});
`;

const pprof = (...args) => execFileSync('go', ['tool', 'pprof', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PPROF_TMPDIR: dir } });

/** ms per value of `label` as `go tool pprof -tags` prints them, of the samples `-tagfocus=focus` keeps. */
function tagsOf(file, label, focus = '') {
  const text = pprof('-tags', '-tagfocus', focus, file);
  const block = text.split(/\n\s*\n/).find((b) => b.trim().startsWith(`${label}:`)) ?? '';
  return Object.fromEntries([...block.matchAll(/^\s+([\d.]+)(ms|s)\s+\([^)]*\):\s+(.+)$/gm)].map(([, v, unit, name]) => [name, Number(v) * (unit === 's' ? 1000 : 1)]));
}

/** The decoded profile's time per value of `label`, ms. */
function decodedBy(file, label) {
  const { profile: p, str, samples } = decoded(file);
  const cpu = p.sampleType.findIndex((t) => str(t.type) === 'cpu');
  const out = {};
  samples.forEach(({ labels }, i) => {
    if (labels[label] !== undefined) out[labels[label]] = (out[labels[label]] ?? 0) + Number(p.sample[i].value[cpu]) / 1e6;
  });
  return { profile: p, str, byLabel: out };
}

/** The decoded profile, and each sample's labels as `{ key: value }`. */
function decoded(file) {
  const profile = Profile.decode(zlib.gunzipSync(fs.readFileSync(file)));
  const str = (i) => profile.stringTable.strings[Number(i)];
  const samples = profile.sample.map((s) => ({ labels: Object.fromEntries(s.label.map((l) => [str(l.key), str(l.str)])) }));
  return { profile, str, samples };
}

let file;
let heapFile;
let report;
test('setup: a capture writes its profile as pprof, and the report links it', { timeout: 60_000 }, () => {
  assert.ok(require('../fixtures/helpers').onPath('go'), 'go (Debian golang-go) is on PATH: .ci/run installs it');
  const out = path.join(dir, 'app');
  const script = path.join(dir, 'app.js');
  fs.writeFileSync(script, APP);
  execFileSync(process.execPath, [script, out], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 50_000 });
  file = `${out}.pb.gz`;
  heapFile = `${out}-heap.pb.gz`;
  report = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
  assert.equal(report.profile.pprof, file);
  assert.equal(report.heapProfile.pprof, heapFile);
  assert.deepEqual([...fs.readFileSync(file).subarray(0, 2)], [0x1f, 0x8b], 'gzipped');
});

test('go tool pprof: time per scope equals the report\'s analysis by scope', () => {
  const tags = tagsOf(file, 'scope');
  const analysis = Object.fromEntries(report.profile.analysis.scopes.filter((s) => s.name !== null).map((s) => [s.name, s.ms]));
  for (const name of ['alpha', 'beta', 'GET /items/:id']) {
    assert.ok(analysis[name] > 0, `the report charged ${name}: ${JSON.stringify(analysis)}`);
    // pprof prints 4 significant digits or so: within 1 % or 0.1 ms.
    assert.ok(Math.abs(tags[name] - analysis[name]) <= Math.max(0.1, analysis[name] * 0.01), `${name}: pprof ${tags[name]} ms, the report ${analysis[name]} ms\n${JSON.stringify(tags)}`);
  }
  const { byLabel } = decodedBy(file, 'scope');
  for (const [name, ms] of Object.entries(analysis)) assert.ok(Math.abs(byLabel[name] - ms) < 0.01, `${name}: decoded ${byLabel[name]}, the report ${ms}`);
});

test('go tool pprof: one scope\'s functions with -tagfocus, a route label, the thread', () => {
  const alpha = pprof('-top', '-tagfocus=scope=alpha', file);
  assert.match(alpha, /spinAlpha/);
  assert.doesNotMatch(alpha, /spinBeta|spinRoute/);
  const route = pprof('-top', '-tagfocus=route=GET /items/:id', file);
  assert.match(route, /spinRoute/);
  assert.doesNotMatch(route, /spinAlpha/);
  assert.deepEqual(Object.keys(tagsOf(file, 'route')), ['GET /items/:id']);
  assert.deepEqual(Object.keys(tagsOf(file, 'thread')), ['0']);
});

test('a worker\'s pprof is labelled with its threadId; samples, functions and time are sound', () => {
  const worker = `${path.join(dir, 'app')}-worker`;
  const { profile, str, byLabel } = decodedBy(`${worker}.pb.gz`, 'thread');
  const { thread } = JSON.parse(fs.readFileSync(`${worker}.json`, 'utf8')).meta;
  assert.ok(thread > 0);
  assert.deepEqual(Object.keys(byLabel), [String(thread)]);
  assert.ok(decodedBy(`${worker}.pb.gz`, 'scope').byLabel.alpha > 0);
  assert.equal(str(profile.periodType.type), 'cpu');
  assert.equal(Number(profile.period), 100_000, 'the sampling interval, ns');
  const start = Number(profile.timeNanos) / 1e6;
  assert.ok(Math.abs(start - Date.now()) < 60_000, `start time is epoch ns: ${new Date(start).toISOString()}`);
  const fns = new Set(profile.function.map((f) => str(f.name)));
  assert.ok(fns.has('spinAlpha') && !fns.has('(idle)'), [...fns].join(', '));
  assert.ok(profile.function.every((f) => !str(f.filename).startsWith('rloop:')), 'builtins are (builtin), not rloop\'s marker');
});

test('go tool pprof: a key label on the samples of a keyed context, with its scope; none elsewhere', () => {
  const alpha = tagsOf(file, 'key', 'scope=alpha');
  assert.deepEqual(Object.keys(alpha).sort(), ['order-0', 'order-1', 'order-2'], JSON.stringify(alpha));
  assert.ok(Object.values(alpha).every((ms) => ms > 0));
  assert.ok(tagsOf(file, 'scope', 'scope=beta').beta > 0, 'beta was sampled');
  assert.deepEqual(tagsOf(file, 'key', 'scope=beta'), {}, 'beta is not keyed: no key');
  const one = pprof('-top', '-tagfocus=key=order-1', file);
  assert.match(one, /spinAlpha/);
  assert.doesNotMatch(one, /spinBeta|spinRoute/);
  // Every sample of a keyed scope has its key (the route's: the request's path and number), no other sample has one.
  const { samples } = decoded(file);
  const keyed = { alpha: /^order-[012]$/, gamma: /^batch-7$/, 'GET /items/:id': /^\/items\/\d+ #\d+$/ };
  for (const { labels } of samples) {
    if (keyed[labels.scope]) assert.match(labels.key ?? '(none)', keyed[labels.scope], JSON.stringify(labels));
    else assert.equal(labels.key, undefined, JSON.stringify(labels));
  }
  assert.ok(samples.some((s) => s.labels.scope === 'GET /items/:id'), 'the route was sampled');
});

test('the heap pprof: allocations of a keyed context labelled with its key where the CPU profile tells it', () => {
  assert.match(pprof('-sample_index=alloc_space', '-tags', '-tagfocus=scope=gamma', heapFile), /^ key: Total[^\n]*\n[^\n]*: batch-7$/m);
  const { profile, str, samples } = decoded(heapFile);
  const bytes = profile.sampleType.findIndex((t) => str(t.type) === 'alloc_space');
  const gamma = samples.map((s, i) => ({ ...s.labels, bytes: Number(profile.sample[i].value[bytes]) })).filter((l) => l.scope === 'gamma');
  assert.ok(gamma.reduce((sum, l) => sum + l.bytes, 0) > 0, 'gamma allocated');
  assert.ok(gamma.every((l) => l.key === 'batch-7'), JSON.stringify(gamma));
  assert.ok(profile.function.some((f) => str(f.name) === 'allocGamma'));
});

test('speedscope imports the CPU and the heap pprof: the app\'s functions, no import error', { skip: !fs.existsSync(CHROMIUM) && `no ${CHROMIUM} (.ci/run installs it)`, timeout: 60_000 }, async () => {
  const served = await serveSpeedscope({ 'cpu.pb.gz': file, 'heap.pb.gz': heapFile });
  const profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-chromium-'));
  const { chromium } = require('playwright-core');
  const browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    for (const [name, fn] of [['cpu.pb.gz', 'spinAlpha'], ['heap.pb.gz', 'allocGamma']]) {
      const page = await browser.newPage();
      const seen = { errors: [], logs: [], dialogs: [] };
      page.on('console', (m) => (m.type() === 'error' ? seen.errors : seen.logs).push(m.text()));
      page.on('pageerror', (e) => seen.errors.push(e.message));
      page.on('dialog', (d) => {
        seen.dialogs.push(d.message()); // speedscope's 'Unrecognized format!' is an alert
        d.dismiss();
      });
      // The sandwich view lists the profile's functions as text, heaviest first (only the rows in view are rendered).
      await page.goto(`${served.url}/index.html#profileURL=${encodeURIComponent(`${served.url}/${name}`)}&view=sandwich`);
      await page.getByText(fn, { exact: true }).first().waitFor({ timeout: 30_000 });
      await page.screenshot({ path: path.join(ARTIFACTS, `speedscope-${name.replace('.pb.gz', '')}.png`) });
      assert.ok(seen.logs.includes('Importing as protobuf encoded pprof file'), `${name}: read as pprof: ${JSON.stringify(seen.logs)}`);
      assert.deepEqual(seen.errors, [], name);
      assert.deepEqual(seen.dialogs, [], name);
      await page.close();
    }
  } finally {
    await browser.close();
    served.close();
    fs.rmSync(profileDir, { recursive: true, force: true });
  }
});

/** Serves speedscope's built app (its npm package's dist/release) and `files` (name -> path) on 127.0.0.1: `{ url, close() }`. */
async function serveSpeedscope(files) {
  const app = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist', 'release');
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css', '.wasm': 'application/wasm', '.png': 'image/png' };
  const server = http.createServer((req, res) => {
    const name = path.basename(decodeURIComponent(new URL(req.url, 'http://127.0.0.1').pathname));
    const at = files[name] ?? path.join(app, name);
    fs.readFile(at, (e, body) => {
      if (e) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': types[path.extname(at)] ?? 'application/octet-stream' }).end(body);
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${server.address().port}`, close: () => server.close() };
}

test('keys the timeline dropped: their samples keep the scope, and the file\'s comment says how many', () => {
  const frame = (functionName, url) => ({ functionName, url, scriptId: '0', lineNumber: 0, columnNumber: 0 });
  const profile = {
    nodes: [{ id: 1, callFrame: frame('(root)', ''), children: [2] }, { id: 2, callFrame: frame('work', 'file:///app.js') }],
    samples: [2, 2, 2], timeDeltas: [0, 100, 100], startTime: 0, endTime: 300,
  };
  const { renderPprof } = require('../../js/report/pprof');
  const dropped = path.join(dir, 'dropped.pb.gz');
  fs.writeFileSync(dropped, renderPprof(profile, { scopeTimeline: [[0, 'alpha', 'k1'], [150, 'alpha']], keysDropped: 7 }));
  // Samples at 0, 100 and 200 µs: the key changed at 150 was dropped.
  const keyed = { thread: '0', scope: 'alpha', key: 'k1' };
  assert.deepEqual(decoded(dropped).samples.map((s) => s.labels), [keyed, keyed, { thread: '0', scope: 'alpha' }]);
  assert.match(pprof('-comments', dropped), /rloop: 7 changes of scope past the distinct keys kept have no key label/);
});

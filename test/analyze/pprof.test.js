'use strict';
// A capture's CPU profile as pprof, read by real consumers: `go tool pprof` (Debian golang-go,
// .ci/run installs it) shows the time per `scope`, `route` and `thread` label, equal to the
// report's analysis by scope, and focuses on one scope's functions; pprof-format (the encoder's
// own decoder) reads every sample's labels. Known work: two scopes in the main thread, an HTTP
// route, and a worker thread.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { execFileSync } = require('node:child_process');
const { Profile } = require('pprof-format');

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
const out = process.argv[2];
const mon = rloop.start({ autoScopes: { http: true } });
const work = setInterval(() => {
  rloop.scope('alpha', () => spinAlpha(3));
  rloop.scope('beta', () => spinBeta(1));
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
mon.capture({ durationMs: 1500, profile: true, pprof: out + '.pb.gz', json: out + '.json' }).then(() => {
  clearInterval(work);
  mon.stop();
  asking = false;
  server?.close();
  server?.closeIdleConnections();
  if (isMainThread) new Worker(__filename, { argv: [out + '-worker'] }).on('exit', () => process.exit(0));
});
`;

const pprof = (...args) => execFileSync('go', ['tool', 'pprof', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PPROF_TMPDIR: dir } });

/** ms per value of `label` as `go tool pprof -tags` prints them. */
function tagsOf(file, label) {
  const text = pprof('-tags', '-tagfocus', '', file);
  const block = text.split(/\n\s*\n/).find((b) => b.trim().startsWith(`${label}:`)) ?? '';
  return Object.fromEntries([...block.matchAll(/^\s+([\d.]+)(ms|s)\s+\([^)]*\):\s+(.+)$/gm)].map(([, v, unit, name]) => [name, Number(v) * (unit === 's' ? 1000 : 1)]));
}

/** The decoded profile's time per value of `label`, ms. */
function decodedBy(file, label) {
  const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(file)));
  const str = (i) => p.stringTable.strings[Number(i)];
  const cpu = p.sampleType.findIndex((t) => str(t.type) === 'cpu');
  const out = {};
  for (const s of p.sample) {
    const l = s.label.find((x) => str(x.key) === label);
    if (l) out[str(l.str)] = (out[str(l.str)] ?? 0) + Number(s.value[cpu]) / 1e6;
  }
  return { profile: p, str, byLabel: out };
}

let file;
let report;
test('setup: a capture writes its profile as pprof, and the report links it', { timeout: 60_000 }, () => {
  assert.ok(require('../fixtures/helpers').onPath('go'), 'go (Debian golang-go) is on PATH: .ci/run installs it');
  const out = path.join(dir, 'app');
  const script = path.join(dir, 'app.js');
  fs.writeFileSync(script, APP);
  execFileSync(process.execPath, [script, out], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 50_000 });
  file = `${out}.pb.gz`;
  report = JSON.parse(fs.readFileSync(`${out}.json`, 'utf8'));
  assert.equal(report.profile.pprof, file);
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

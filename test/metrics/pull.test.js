'use strict';
// Profiles pulled from the metrics endpoint in Go's convention, by the real consumer:
// `go tool pprof http://…/debug/pprof/profile?seconds=N` (and /heap) (Debian golang-go)
// fetches a profile labelled by scope, and never by key (the endpoint exposes no keys). One at a
// time, bounded seconds, clear 4xx otherwise; a token where set, kept out of reports; a loop
// blocked past the ask is a 503, not a profile nobody waits for.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const zlib = require('node:zlib');
const { fork, execFile } = require('node:child_process');
const { Profile } = require('pprof-format');
const { onPath } = require('../fixtures/helpers');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-pull-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
const TOKEN = 'pull-test-token-0123456789';

/**
 * The app: scopes alpha (keyed) and beta doing known work; on 'block', 6 s of blocked loop; on
 * `{ pprof: options }`, a capture with a profile, and those options, writing its pprof files
 * beside argv[3] (report.pb.gz, report-heap.pb.gz) and its report there.
 */
const APP = `
const rloop = require(${JSON.stringify(path.resolve(__dirname, '..', '..'))});
const spinAlpha = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };
const spinBeta = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };
function allocAlpha() { return Array.from({ length: 2000 }, (_, i) => ({ i })).length; }
function allocBeta() { return Array.from({ length: 700 }, (_, i) => ({ i })).length; }
const metrics = JSON.parse(process.argv[2]);
const mon = rloop.start({ metrics: { port: 0, ...metrics } });
let n = 0;
setInterval(() => {
  rloop.scope('alpha', () => spinAlpha(3) ?? allocAlpha(), { key: 'order-' + (n++ % 3) });
  rloop.scope('beta', () => spinBeta(1) ?? allocBeta());
}, 10);
process.on('message', (m) => {
  if (m === 'block') { process.send('blocking'); spinAlpha(6000); }
  if (m === 'capture') mon.capture({ durationMs: 200, json: process.argv[3] }).then(() => process.send('captured'));
  if (m.pprof) {
    const at = process.argv[3].replace(/\.json$/, '');
    const files = { json: process.argv[3], pprof: at + '.pb.gz', heapPprof: m.pprof.heapProfile ? at + '-heap.pb.gz' : false };
    mon.capture({ profile: true, ...m.pprof, ...files }).then(() => process.send('captured'), (e) => process.send('failed: ' + e.message));
    process.send('capturing');
  }
});
process.send({ port: mon.metrics.port });
`;
const script = path.join(dir, 'app.js');
fs.writeFileSync(script, APP);

/** Starts the app with these metrics options: { port, child, next() (its next message) }. */
async function app(metrics = {}) {
  const child = fork(script, [JSON.stringify(metrics), path.join(dir, 'report.json')], { stdio: ['ignore', 'ignore', 'pipe', 'ipc'] });
  const messages = [];
  let wake = null;
  child.on('message', (m) => { messages.push(m); wake?.(); });
  const next = async () => {
    while (messages.length === 0) await new Promise((r) => { wake = r; });
    return messages.shift();
  };
  const { port } = await next();
  return { port, child, next, url: (p) => `http://127.0.0.1:${port}${p}` };
}

const pprof = (...args) => new Promise((resolve, reject) => {
  execFile('go', ['tool', 'pprof', ...args], { env: { ...process.env, PPROF_TMPDIR: dir }, timeout: 60_000 }, (e, stdout, stderr) => (e ? reject(new Error(`${e.message}\n${stderr}`)) : resolve(stdout)));
});

let plain;
before(async () => {
  assert.ok(onPath('go'), 'go (Debian golang-go) is on PATH: .ci/run installs it');
  plain = await app();
});
after(() => plain?.child.kill());

test('go tool pprof fetches a profile of the asked seconds, labelled by scope', { timeout: 60_000 }, async () => {
  const started = performance.now();
  const tags = await pprof('-tags', plain.url('/debug/pprof/profile?seconds=2'));
  assert.match(tags, /scope: Total/);
  assert.match(tags, /: alpha$/m);
  assert.match(tags, /: beta$/m);
  assert.ok(performance.now() - started >= 2000, 'it profiled for the seconds asked');
  const top = await pprof('-top', '-tagfocus=scope=alpha', plain.url('/debug/pprof/profile?seconds=1'));
  assert.match(top, /spinAlpha/);
  assert.doesNotMatch(top, /spinBeta/);
});

test('go tool pprof fetches a heap profile: allocations labelled by scope', { timeout: 60_000 }, async () => {
  const tags = await pprof('-sample_index=alloc_space', '-tags', plain.url('/debug/pprof/heap?seconds=2'));
  assert.match(tags, /scope: Total/);
  assert.match(tags, /: alpha$/m);
  const top = await pprof('-sample_index=alloc_space', '-top', '-tagfocus=scope=alpha', plain.url('/debug/pprof/heap?seconds=1'));
  assert.match(top, /allocAlpha/);
  assert.doesNotMatch(top, /allocBeta/);
});

test('pulled profiles have no key label, while a capture\'s of the same seconds has: the endpoint exposes no keys', { timeout: 60_000 }, async () => {
  plain.child.send({ pprof: { durationMs: 4000 } });
  assert.equal(await plain.next(), 'capturing');
  const pulled = {};
  for (const kind of ['profile', 'heap']) {
    const r = await fetch(plain.url(`/debug/pprof/${kind}?seconds=1`));
    assert.equal(r.status, 200, kind);
    pulled[kind] = path.join(dir, `pulled-${kind}.pb.gz`);
    fs.writeFileSync(pulled[kind], Buffer.from(await r.arrayBuffer()));
  }
  assert.equal(await plain.next(), 'captured');
  const captured = path.join(dir, 'report');
  // The keys were in the timeline the pulled profiles read: the capture's files have them.
  assert.deepEqual(labelValues(`${captured}.pb.gz`, 'key'), ['order-0', 'order-1', 'order-2']);
  assert.match(await pprof('-tags', `${captured}.pb.gz`), /^ key: Total/m);
  for (const file of Object.values(pulled)) {
    assert.ok(labelValues(file, 'scope').includes('alpha'), `${file}: alpha, labelled by scope`);
    assert.deepEqual(labelValues(file, 'key'), [], file);
    assert.ok(!zlib.gunzipSync(fs.readFileSync(file)).includes('order-'), `${file}: no key among its strings`);
  }
  const tags = await pprof('-tags', pulled.profile);
  assert.match(tags, /: alpha$/m);
  assert.doesNotMatch(tags, /^ key:/m);
});

test('a heap profile pulled while a capture\'s runs: 409, and the capture keeps its own', { timeout: 60_000 }, async () => {
  plain.child.send({ pprof: { durationMs: 1500, heapProfile: true } });
  assert.equal(await plain.next(), 'capturing');
  const r = await fetch(plain.url('/debug/pprof/heap?seconds=1'));
  assert.equal(r.status, 409);
  assert.match(await r.text(), /capture's heap profile is being taken/);
  assert.equal((await fetch(plain.url('/debug/pprof/profile?seconds=1'))).status, 200, 'a CPU profile may be pulled meanwhile');
  assert.equal(await plain.next(), 'captured');
  const { heapProfile } = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
  assert.ok(heapProfile.bytes > 0 && heapProfile.functions.some((f) => f.url.endsWith('/app.js')), JSON.stringify(heapProfile.functions));
  assert.equal((await fetch(plain.url('/debug/pprof/heap?seconds=1'))).status, 200, 'and one once it is done');
});

/** The values of label `name` over a pprof file's samples, sorted. */
function labelValues(file, name) {
  const profile = Profile.decode(zlib.gunzipSync(fs.readFileSync(file)));
  const str = (i) => profile.stringTable.strings[Number(i)];
  return [...new Set(profile.sample.flatMap((s) => s.label.filter((l) => str(l.key) === name).map((l) => str(l.str))))].sort();
}

test('one at a time, bounded seconds, GET only: a clear 4xx otherwise', { timeout: 30_000 }, async () => {
  const first = fetch(plain.url('/debug/pprof/profile?seconds=2'));
  await new Promise((r) => setTimeout(r, 300));
  const busy = await fetch(plain.url('/debug/pprof/heap?seconds=1'));
  assert.equal(busy.status, 409, 'one at a time, of either kind');
  assert.match(await busy.text(), /one at a time/);
  for (const q of ['seconds=0', 'seconds=301', 'seconds=2.5', 'seconds=x']) {
    const r = await fetch(plain.url(`/debug/pprof/profile?${q}`));
    assert.equal(r.status, 400, q);
    assert.match(await r.text(), /seconds must be a whole number from 1 to 300/);
  }
  assert.equal((await fetch(plain.url('/debug/pprof/profile'), { method: 'HEAD' })).status, 405);
  assert.equal((await fetch(plain.url('/debug/pprof/heap?seconds=0'))).status, 400);
  assert.equal((await fetch(plain.url('/metrics'))).status, 200, 'scrapes are answered meanwhile');
  const done = await first;
  assert.equal(done.status, 200);
  const profile = Profile.decode(zlib.gunzipSync(Buffer.from(await done.arrayBuffer())));
  const str = (i) => profile.stringTable.strings[Number(i)];
  const scopes = new Set(profile.sample.flatMap((s) => s.label.filter((l) => str(l.key) === 'scope').map((l) => str(l.str))));
  assert.ok(scopes.has('alpha') && scopes.has('beta'), [...scopes].join(', '));
  assert.equal((await fetch(plain.url('/debug/pprof/profile?seconds=1'))).status, 200, 'the next one, once the first is done');
});

test('a loop blocked past the ask: 503, and the app goes on', { timeout: 30_000 }, async () => {
  plain.child.send('block');
  assert.equal(await plain.next(), 'blocking');
  const r = await fetch(plain.url('/debug/pprof/profile?seconds=1'));
  assert.equal(r.status, 503);
  assert.match(await r.text(), /event loop was blocked/);
  assert.equal((await fetch(plain.url('/debug/pprof/profile?seconds=1'))).status, 200, 'profiles again once the loop is free');
});

test('with a token: every path needs it, and no report holds it; pprof: false serves none', { timeout: 30_000 }, async () => {
  const guarded = await app({ token: TOKEN });
  try {
    for (const p of ['/metrics', '/debug/pprof/profile?seconds=1']) assert.equal((await fetch(guarded.url(p))).status, 401, p);
    const wrong = await fetch(guarded.url('/metrics'), { headers: { authorization: `Bearer ${TOKEN}x` } });
    assert.equal(wrong.status, 401);
    const ok = await fetch(guarded.url('/debug/pprof/profile?seconds=1'), { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(ok.status, 200);
    assert.deepEqual([...new Uint8Array(await ok.arrayBuffer()).subarray(0, 2)], [0x1f, 0x8b]);
    guarded.child.send('capture');
    assert.equal(await guarded.next(), 'captured');
    const report = fs.readFileSync(path.join(dir, 'report.json'), 'utf8');
    assert.ok(!report.includes(TOKEN), 'the token is in no report');
    const { metrics } = JSON.parse(report).meta.options;
    assert.deepEqual(Object.keys(metrics).sort(), ['host', 'path', 'port', 'pprof', 'topScopes'], 'the options are there, the token not');
  } finally {
    guarded.child.kill();
  }
  const none = await app({ pprof: false });
  try {
    assert.equal((await fetch(none.url('/debug/pprof/profile?seconds=1'))).status, 404);
  } finally {
    none.child.kill();
  }
});

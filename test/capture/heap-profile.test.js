'use strict';
// A capture's sampling heap profile: bytes allocated by function, and by scope with a CPU
// profile, against known work (two scopes allocating about 3 : 1, a function the scopes share);
// the bytes rloop allocates itself in no row; its pprof read by go tool pprof per scope label;
// one at a time per thread; bad options named.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const rloop = require('../..');
const { onPath } = require('../fixtures/helpers');
const { assertValidReport } = require('../fixtures/report');

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-heap-profile-'));
process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));

function allocAlpha() {
  const a = [];
  for (let i = 0; i < 3000; i++) a.push({ i, s: `a${i}` });
  return a.length;
}
function allocBeta() {
  const a = [];
  for (let i = 0; i < 1000; i++) a.push({ i, s: `b${i}` });
  return a.length;
}
function allocShared() {
  return Array.from({ length: 500 }, (_, i) => [i]).length;
}
// One stack of the app's for two scopes: what it allocates cannot be told apart by stack.
// Enough work that the CPU profile samples it in both.
function allocSameStack() {
  return Array.from({ length: 2000 }, (_, i) => ({ i })).length;
}
const inScope = (name) => rloop.scope(name, () => allocSameStack());

async function captured(options) {
  const mon = rloop.start();
  const work = setInterval(() => {
    rloop.scope('alpha', () => allocAlpha() + allocShared());
    rloop.scope('beta', () => allocBeta() + allocShared());
    inScope('gamma');
    inScope('delta');
  }, 2);
  try {
    return await mon.capture({ durationMs: 1000, heapStats: false, ...options });
  } finally {
    clearInterval(work);
    mon.stop();
  }
}

test('bytes by function and, with a CPU profile, by scope; code two scopes share on one stack said as such', { timeout: 30_000 }, async () => {
  const heapPprof = path.join(dir, 'heap.pb.gz');
  const report = await captured({ profile: true, heapProfile: { samplingIntervalBytes: 8192 }, heapPprof, json: path.join(dir, 'r.json') });
  assertValidReport(JSON.parse(fs.readFileSync(path.join(dir, 'r.json'), 'utf8')));
  const h = report.heapProfile;
  assert.equal(h.samplingIntervalBytes, 8192);
  assert.equal(h.pprof, heapPprof);
  assert.ok(h.samples > 100 && h.bytes > 10e6, `${h.samples} samples, ${h.bytes} bytes`);
  const fn = (name) => h.functions.find((f) => f.functionName === name);
  assert.ok(fn('allocAlpha') && fn('allocBeta') && fn('allocShared'), h.functions.map((f) => f.functionName).join(', '));
  const ratio = fn('allocAlpha').bytes / fn('allocBeta').bytes;
  assert.ok(ratio > 2 && ratio < 4.5, `alpha allocates 3 times beta's: ${ratio.toFixed(2)}`);
  assert.match(fn('allocAlpha').url, /^file:\/\/.*heap-profile\.test\.js$/);
  assert.ok(h.functions.every((f) => !/\/js\/(attribution|capture)\//.test(f.url)), 'rloop\'s own code is in no row');
  const byScope = Object.fromEntries(h.scopes.byScope.map((s) => [s.scope, s.bytes]));
  // Each scope's own allocator is that scope's; allocShared runs in both, but under a different
  // caller each time (the scopes' arrow functions), so its stacks are told apart too.
  assert.ok(byScope.alpha >= fn('allocAlpha').bytes * 0.95, `alpha ${byScope.alpha}, allocAlpha ${fn('allocAlpha').bytes}`);
  assert.ok(byScope.beta >= fn('allocBeta').bytes * 0.95 && byScope.beta < byScope.alpha);
  assert.ok(h.scopes.several >= fn('allocSameStack').bytes * 0.9, `several ${h.scopes.several}, allocSameStack ${fn('allocSameStack').bytes}`);
  assert.ok(!('gamma' in byScope) || byScope.gamma < fn('allocSameStack').bytes * 0.1, 'not split by a guess');
  const listed = h.scopes.byScope.reduce((s, x) => s + x.bytes, 0) + h.scopes.several + h.scopes.unsampled + h.rloopBytes;
  assert.ok(Math.abs(listed - h.bytes) <= h.scopes.byScope.length + 3, `every byte in one row: ${listed} of ${h.bytes}`);

  assert.ok(onPath('go'), 'go (Debian golang-go) is on PATH: .ci/run installs it');
  const tags = execFileSync('go', ['tool', 'pprof', '-sample_index=alloc_space', '-tags', heapPprof], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PPROF_TMPDIR: dir } });
  assert.match(tags, /scope: Total/);
  assert.match(tags, /: alpha$/m);
  const top = execFileSync('go', ['tool', 'pprof', '-sample_index=alloc_space', '-top', '-tagfocus=scope=beta', heapPprof], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PPROF_TMPDIR: dir } });
  assert.match(top, /allocBeta/);
  assert.doesNotMatch(top, /allocAlpha/);
});

test('without a CPU profile: by function only', { timeout: 30_000 }, async () => {
  const report = await captured({ heapProfile: true });
  assert.equal(report.heapProfile.scopes, null);
  assert.equal(report.heapProfile.samplingIntervalBytes, 32768);
  assert.ok(report.heapProfile.functions.some((f) => f.functionName === 'allocAlpha'));
  assert.equal(report.profile, null);
});

test('two captures asking at once: V8 samples for one, the other goes on without, says why, and neither fails', { timeout: 30_000 }, async () => {
  const mon = rloop.start();
  const errors = [];
  mon.on('error', (e) => errors.push(e.message));
  const work = setInterval(() => rloop.scope('alpha', () => allocAlpha()), 2);
  try {
    const first = mon.capture({ durationMs: 600, heapStats: false, heapProfile: true });
    const second = await mon.capture({ durationMs: 200, heapStats: false, heapProfile: true });
    assert.equal(second.heapProfile, null);
    assert.deepEqual(errors.map((m) => /^no heap profile: .*one at a time/.test(m)), [true], errors.join('; '));
    assert.ok((await first).heapProfile.functions.some((f) => f.functionName === 'allocAlpha'), 'the first kept its own to its end');
  } finally {
    clearInterval(work);
    mon.stop();
  }
});

test('bad heapProfile options: a TypeError or RangeError naming the option', async () => {
  const mon = rloop.start();
  try {
    await assert.rejects(mon.capture({ heapProfile: 'yes' }), (e) => e instanceof TypeError && /'heapProfile' must be true, false or \{ samplingIntervalBytes \}/.test(e.message));
    await assert.rejects(mon.capture({ heapProfile: { samplingIntervalBytes: 10 } }), (e) => e instanceof RangeError && /'heapProfile.samplingIntervalBytes'/.test(e.message));
    await assert.rejects(mon.capture({ heapProfile: { interval: 10 } }), (e) => e instanceof TypeError && /interval/.test(e.message));
  } finally {
    mon.stop();
  }
});

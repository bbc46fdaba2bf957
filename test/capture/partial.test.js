'use strict';
// The partial report is written when the capture's thread cannot run JS any more — its loop blocked
// when SIGTERM/SIGINT arrives, a worker terminated mid-capture. The addon finishes it
// (src/capture/report.rs), and the process ends exactly as it would without rloop.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { assertValidReport } = require('../fixtures/report');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-partial-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const APP = path.join(__dirname, '..', 'fixtures', 'partial-app.js');
const ROOT = path.join(__dirname, '..', '..');

/**
 * Runs the app until it prints `ready`, waits `holdMs`, then sends `signal` (if any); resolves
 * with how it ended, how long it was there before the signal, how long it took to end after it.
 */
function run(args, { signal = null, ready, holdMs = 800, env = {}, preload = false }) {
  const child = spawn(process.execPath, [...(preload ? ['-r', path.join(ROOT, 'register')] : []), APP, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  const killer = setTimeout(() => child.kill('SIGKILL'), 20000);
  return new Promise((resolve) => {
    let there;
    let sent;
    child.stdout.on('data', (d) => {
      stdout += d;
      if (there === undefined && stdout.includes(ready)) {
        there = performance.now();
        if (signal) setTimeout(() => { sent = performance.now(); child.kill(signal); }, holdMs);
      }
    });
    child.on('exit', (code, how) => {
      clearTimeout(killer);
      resolve({ code, signal: how, stdout, stderr, heldMs: (sent ?? performance.now()) - there, afterMs: performance.now() - (sent ?? performance.now()) });
    });
  });
}

function readReport(file) {
  const report = JSON.parse(fs.readFileSync(file, 'utf8'));
  assertValidReport(report);
  return report;
}

/** The report of a loop blocked in 'blocker' after 'work' ran, ended by `signal` `heldMs` in. */
function assertBlockedReport(r, signal, heldMs) {
  assert.strictEqual(r.meta.partial, true);
  assert.strictEqual(r.meta.reason, signal);
  assert.deepStrictEqual(r.meta.incomplete, { reason: `signal ${signal} while the loop was blocked`, missing: ['io.aggregates', 'heap'] });
  assert.ok(r.elu.windows.some((w) => w.scopes.some((s) => s.name === 'work')), 'the windows before the block');
  const ongoing = r.lag.events.filter((e) => e.ongoing);
  assert.strictEqual(ongoing.length, 1, JSON.stringify(r.lag.events));
  assert.strictEqual(ongoing[0].scope, 'blocker');
  assert.ok(ongoing[0].lagMs >= 0.9 * heldMs, `stall in progress ${ongoing[0].lagMs} ms, blocked ${heldMs.toFixed(0)} ms before the signal`);
  const blocker = r.elu.scopes.find((s) => s.name === 'blocker');
  assert.ok(blocker && blocker.busyMs >= 0.9 * heldMs, `busy time up to the signal: ${JSON.stringify(r.elu.scopes)}`);
  assert.ok(r.meta.durationMs >= 600 + heldMs - 100, `${r.meta.durationMs} ms`);
  assert.ok(r.elu.windows.length >= 5, `${r.elu.windows.length} windows`);
}

for (const signal of ['SIGTERM', 'SIGINT']) {
  test(`${signal} on a blocked loop: the process dies by it as without rloop, and the addon writes the partial report`, async () => {
    const plain = await run(['block', 'plain', path.join(tmp, 'plain.json')], { signal, ready: 'blocked' });
    const out = path.join(tmp, `blocked-${signal}.json`);
    const watched = await run(['block', 'json', out], { signal, ready: 'blocked' });
    assert.deepStrictEqual([watched.code, watched.signal], [plain.code, plain.signal]);
    assert.strictEqual(watched.signal, signal);
    assert.strictEqual(watched.stderr, plain.stderr);
    assert.ok(watched.afterMs < plain.afterMs + 1000, `ended ${watched.afterMs.toFixed(0)} ms after ${signal} (plain: ${plain.afterMs.toFixed(0)})`);
    assertBlockedReport(readReport(out), signal, watched.heldMs);
    assert.deepStrictEqual(fs.readdirSync(tmp).filter((f) => f.endsWith('.tmp')), [], 'no temporary file left');
  });
}

test('the addon\'s report holds the slow I/O events that had ended, redacted as JS has them', async () => {
  const out = path.join(tmp, 'io.json');
  const watched = await run(['block', 'io', out], { signal: 'SIGTERM', ready: 'blocked' });
  assert.strictEqual(watched.signal, 'SIGTERM');
  const r = readReport(out);
  assert.deepStrictEqual(r.meta.incomplete.missing, ['io.aggregates', 'heap']);
  const slow = r.io.events.filter((e) => e.type === 'http');
  assert.strictEqual(slow.length, 1, JSON.stringify(r.io.events));
  assert.strictEqual(slow[0].method, 'GET');
  assert.match(slow[0].target, /^127\.0\.0\.1:\d+\/slow/);
  assert.ok(slow[0].durationMs >= 150, `${slow[0].durationMs} ms`);
  assert.ok(!JSON.stringify(r).includes('S3CR3T'), 'the token is redacted');
  assert.strictEqual(r.io.dropped, 0);
});

test('zero-code: SIGTERM on a blocked loop writes the report, and rloop report renders it', async () => {
  const out = path.join(tmp, 'register.json');
  const watched = await run(['block', 'register', out], { signal: 'SIGTERM', ready: 'blocked', preload: true, env: { RLOOP_JSON: out, RLOOP_WINDOW_MS: '100' } });
  assert.strictEqual(watched.signal, 'SIGTERM');
  assert.strictEqual(watched.stderr, '');
  const r = readReport(out);
  assertBlockedReport(r, 'SIGTERM', watched.heldMs);
  const html = path.join(tmp, 'register.html');
  const cli = spawnSync(process.execPath, [path.join(ROOT, 'cli', 'rloop.js'), 'report', out, '--html', html], { encoding: 'utf8' });
  assert.strictEqual(cli.status, 0, cli.stderr);
  const page = fs.readFileSync(html, 'utf8');
  assert.match(page, /partial: SIGTERM/);
  assert.match(page, /signal SIGTERM while the loop was blocked; not in this report: io.aggregates, heap/);
  assert.match(page, /still going on/);
});

test('only html asked: the JSON goes beside it, for rloop report', async () => {
  const out = path.join(tmp, 'only.html');
  const watched = await run(['block', 'html', out], { signal: 'SIGTERM', ready: 'blocked' });
  assert.strictEqual(watched.signal, 'SIGTERM');
  assert.ok(!fs.existsSync(out), 'no HTML without JS');
  assertBlockedReport(readReport(path.join(tmp, 'only.json')), 'SIGTERM', watched.heldMs);
});

test('a report the addon cannot write: said on stderr as register says it, and the signal still ends the process', async () => {
  const dir = path.join(tmp, 'gone');
  fs.mkdirSync(dir);
  const out = path.join(dir, 'r.json');
  const watched = await run(['block', 'register-gone', out], { signal: 'SIGTERM', ready: 'blocked', preload: true, env: { RLOOP_JSON: out } });
  assert.strictEqual(watched.signal, 'SIGTERM');
  assert.match(watched.stderr, /^rloop: report not written: No such file or directory \(os error 2\), open '.*r\.json'\n$/);
});

for (const how of ['blocked', 'idle']) {
  test(`a worker terminated mid-capture (${how}) writes its partial report`, async () => {
    const out = path.join(tmp, `worker-${how}.json`);
    const ended = await run(['worker', how, out], { ready: 'terminated' });
    assert.deepStrictEqual([ended.code, ended.signal, ended.stderr], [0, null, '']);
    const r = readReport(out);
    assert.strictEqual(r.meta.partial, true);
    assert.strictEqual(r.meta.reason, 'terminated');
    assert.deepStrictEqual(r.meta.incomplete, { reason: 'worker terminated mid-capture', missing: ['io.aggregates', 'heap'] });
    assert.ok(r.meta.thread > 0, 'the worker\'s thread');
    assert.ok(r.elu.windows.some((w) => w.scopes.some((s) => s.name === 'work')), JSON.stringify(r.elu.windows.slice(0, 2)));
    // Terminating stops the worker's JS; its loop may still reach the idle mark, which ends the stall.
    if (how === 'blocked') {
      const stalls = r.lag.events.filter((e) => e.scope === 'blocker');
      assert.strictEqual(stalls.length, 1, JSON.stringify(r.lag.events));
      assert.ok(stalls[0].lagMs >= 400, `${stalls[0].lagMs} ms`);
    }
  });
}

test('a signal on responsive loops: each capturing thread\'s JS writes its report', async () => {
  const out = path.join(tmp, 'both.json');
  const watched = await run(['both', '-', out], { signal: 'SIGTERM', ready: 'ready', holdMs: 300 });
  assert.deepStrictEqual([watched.signal, watched.stderr], ['SIGTERM', '']);
  const main = readReport(out);
  assert.strictEqual(main.meta.reason, 'SIGTERM');
  assert.strictEqual(main.meta.incomplete, undefined, 'written by JS, heap and all');
  assert.ok(main.heap.end.at > main.heap.start.at);
  const worker = readReport(`${out}.worker.json`);
  assert.strictEqual(worker.meta.reason, 'SIGTERM');
  assert.ok(worker.meta.thread > 0);
  assert.strictEqual(worker.meta.incomplete, undefined, 'written by the worker\'s JS');
  assert.ok(worker.elu.windows.some((w) => w.scopes.some((s) => s.name === 'work')));
});

for (const how of ['idle', 'blocked']) {
  test(`only a worker captures (${how}): SIGTERM writes its report and ends the process as without rloop`, async () => {
    const plain = await run(['worker-signal', 'plain', '-'], { signal: 'SIGTERM', ready: 'ready', holdMs: 300 });
    const out = path.join(tmp, `worker-only-${how}.json`);
    const watched = await run(['worker-signal', how, out], { signal: 'SIGTERM', ready: 'ready', holdMs: 300 });
    assert.deepStrictEqual([watched.code, watched.signal, watched.stderr], [plain.code, plain.signal, plain.stderr]);
    assert.strictEqual(watched.signal, 'SIGTERM');
    assert.ok(watched.afterMs < plain.afterMs + 1000, `ended ${watched.afterMs.toFixed(0)} ms after SIGTERM (plain: ${plain.afterMs.toFixed(0)})`);
    const r = readReport(out);
    assert.strictEqual(r.meta.reason, 'SIGTERM');
    assert.ok(r.meta.thread > 0, 'the worker\'s thread');
    assert.ok(r.elu.windows.some((w) => w.scopes.some((s) => s.name === 'work')), JSON.stringify(r.elu.windows.slice(0, 2)));
    if (how === 'idle') {
      assert.strictEqual(r.meta.incomplete, undefined, 'written by the worker\'s JS');
    } else {
      assert.deepStrictEqual(r.meta.incomplete, { reason: 'signal SIGTERM while the loop was blocked', missing: ['io.aggregates', 'heap'] });
      assert.ok(r.lag.events.some((e) => e.ongoing && e.scope === 'blocker'), JSON.stringify(r.lag.events));
    }
  });
}

test('only a worker captures, the main thread listens for SIGTERM: its listener runs, the process exits as without rloop', async () => {
  const plain = await run(['worker-graceful', 'plain', '-'], { signal: 'SIGTERM', ready: 'ready', holdMs: 300 });
  const out = path.join(tmp, 'worker-graceful.json');
  const watched = await run(['worker-graceful', 'idle', out], { signal: 'SIGTERM', ready: 'ready', holdMs: 300 });
  assert.deepStrictEqual([watched.code, watched.signal, watched.stdout, watched.stderr], [0, null, 'ready\ngraceful\n', '']);
  assert.deepStrictEqual([watched.code, watched.signal, watched.stdout, watched.stderr], [plain.code, plain.signal, plain.stdout, plain.stderr]);
  assert.ok(watched.afterMs < plain.afterMs + 300, `exited ${watched.afterMs.toFixed(0)} ms after SIGTERM (plain: ${plain.afterMs.toFixed(0)})`);
  assert.strictEqual(readReport(out).meta.reason, 'terminated', 'the exit terminated the worker mid-capture');
});

'use strict';
// `rloop attach`: real apps in child processes, attached through their inspector on 127.0.0.1.
// What the capture saw (the apps' known scopes, stalls and slow I/O), what the terminal shows,
// and that leaving takes every hook, global and listener out of the app and closes the
// inspector rloop opened (asked from inside the app over IPC).

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { setTimeout: sleep } = require('node:timers/promises');
const { listening } = require('../../cli/attach/inspector');
const { assertValidReport } = require('../fixtures/report');
const { FIXTURES, startApp, ask, rloop, seen, tmpDir, assertLeftNothing } = require('../fixtures/attach-helpers');

const CJS = path.join(FIXTURES, 'app.cjs');

const scopeOf = (report, name) => report.elu.scopes.find((s) => s.name === name);

test('attach to a CommonJS app: its scopes, stalls with stacks and slow I/O, streamed and reported; leaving leaves nothing', async (t) => {
  const dir = tmpDir(t, 'rloop-attach-');
  const app = await startApp(CJS);
  t.after(() => app.kill());
  t.after(() => { if (app.exitCode !== null && app.exitCode !== 0) console.log(app.output); });
  const inspectorsBefore = listening(app.pid);
  const json = path.join(dir, 'r.json');
  const html = path.join(dir, 'r.html');
  const run = rloop(['attach', app.pid, '-d', 4, '--json', json, '--html', html]);
  // While attached, rloop's hooks are on in the app: the check below can fail.
  await seen(run.child.stderr, /capturing/);
  const during = await ask(app, 'state');
  assert.strictEqual(during.now.monitored, 1);
  assert.ok(during.now.asyncHooks[5] > 0, `async hooks enabled while attached: ${during.now.asyncHooks}`);
  const r = await run;
  assert.strictEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /attached to PID \d+ \(Node v[\d.]+\), rloop from the app's own install; capturing 4 s/);

  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assertValidReport(report);
  assert.strictEqual(report.meta.pid, app.pid);
  assert.strictEqual(report.meta.partial, false);
  // 'parse' 5 ms every 50 ms, 'stall' 120 ms every second: lower bounds a loaded machine keeps.
  const parse = scopeOf(report, 'parse');
  const stall = scopeOf(report, 'stall');
  assert.ok(parse && parse.calls >= 20 && parse.busyMs >= 100, JSON.stringify(parse));
  assert.ok(stall && stall.calls >= 2 && stall.busyMs >= 2 * 115, JSON.stringify(stall));
  const stalls = report.lag.events.filter((e) => e.scope === 'stall');
  assert.ok(stalls.length >= 2 && stalls.every((e) => e.lagMs >= 110), JSON.stringify(stalls.map((e) => e.lagMs)));
  assert.ok(stalls.some((e) => e.stack?.some((f) => f.functionName === 'stallWork')), 'a stall names the blocking function');
  // Each request takes 700 ms; one still in flight when the capture ends is listed as pending.
  const slow = report.io.events.filter((e) => e.type === 'http' && e.scope === 'client' && e.state !== 'pending');
  assert.ok(slow.length >= 1 && slow.every((e) => e.durationMs >= 600), JSON.stringify(slow));
  // Automatic scopes are on, as in zero-code: the app's own server, which it never scoped, shows by route.
  const route = scopeOf(report, 'GET /');
  assert.ok(route && route.calls >= 1, JSON.stringify(report.elu.scopes.map((s) => s.name)));
  // The profile names the app's code (V8 may inline spin into stallWork there).
  const heavy = report.profile.analysis.heavyFunctions;
  assert.ok(heavy.some((f) => ['spin', 'stallWork'].includes(f.functionName) && f.url.endsWith('/app.cjs')), JSON.stringify(heavy.slice(0, 5)));
  assert.match(fs.readFileSync(html, 'utf8'), /^<!doctype html>/);

  // Streamed while it happened, then the report; plain text when piped.
  assert.match(r.stdout, /^⚠ lag \d+ ms {2}scope stall {2}at spin .*app\.cjs:\d+/m);
  assert.match(r.stdout, /^⏱ slow I\/O http GET 127\.0\.0\.1:\d+\/ 200 in \d+ ms {2}from .*app\.cjs:\d+ {2}scope client/m);
  assert.ok(r.stdout.indexOf('⚠ lag') < r.stdout.indexOf('Busy time by scope'));
  for (const heading of ['Diagnosis', 'Busy time by scope', 'Heavy functions', 'Lag: ', 'Slow I/O: ', 'Memory']) assert.ok(r.stdout.includes(`\n${heading}`), heading);
  assert.match(r.stdout, /^ {2}parse +[█·]+ +[\d.]+ % +[\d.,]+ ms {2}\d+ calls$/m);
  assert.match(r.stdout, /^ {2}heap used [\d.]+ MB → [\d.]+ MB/m);
  assert.doesNotMatch(r.stdout, /\x1b\[/);
  await assertLeftNothing(app, inspectorsBefore);
  assert.strictEqual((await ask(app, 'state')).probed, 0, "rloop sent the app's own server no request");
});

test('attach twice, at once and one after the other: one monitor shared, the last to leave removes it', async (t) => {
  const app = await startApp(CJS);
  t.after(() => app.kill());
  t.after(() => { if (app.exitCode !== null && app.exitCode !== 0) console.log(app.output); });
  const inspectorsBefore = listening(app.pid);
  const first = rloop(['attach', app.pid, '-d', 8, '--no-profile', '--no-auto-scopes']);
  await seen(first.child.stderr, /capturing/);
  const second = await rloop(['attach', app.pid, '-d', 1, '--no-profile']);
  assert.strictEqual(second.code, 0, second.stderr);
  assert.match(second.stderr, /another rloop attach is running there: its monitor is shared/);
  const during = await ask(app, 'state');
  assert.strictEqual(during.now.monitored, 1, 'the first attach still runs its monitor');
  const a = await first;
  assert.strictEqual(a.code, 0, a.stderr);
  assert.match(a.stdout, /^ {2}stall /m);
  assert.doesNotMatch(a.stdout, /^ {2}GET \/ /m, '--no-auto-scopes: no route scope');
  await assertLeftNothing(app, inspectorsBefore);
  const again = await rloop(['attach', app.pid, '-d', 1, '--no-profile']);
  assert.strictEqual(again.code, 0, again.stderr);
  assert.match(again.stderr, /rloop from the app's own install/);
  await assertLeftNothing(app, inspectorsBefore);
});

test('the target exiting mid-capture: exit code 2 and the partial report written', async (t) => {
  const dir = tmpDir(t, 'rloop-attach-exit-');
  const app = await startApp(CJS);
  t.after(() => app.kill());
  t.after(() => { if (app.exitCode !== null && app.exitCode !== 0) console.log(app.output); });
  const json = path.join(dir, 'partial.json');
  const run = rloop(['attach', app.pid, '-d', 30, '--json', json]);
  await seen(run.child.stderr, /capturing/);
  await sleep(1500);
  app.send('exit');
  const r = await run;
  assert.strictEqual(r.code, 2, r.stderr);
  assert.match(r.stderr, /the target exited mid-capture; the partial report holds what was collected/);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assertValidReport(report);
  assert.strictEqual(report.meta.partial, true);
  assert.strictEqual(report.meta.reason, 'exit');
  assert.ok(scopeOf(report, 'parse')?.calls > 0);
  assert.match(r.stdout, /partial \(exit\)/);
  assert.deepStrictEqual(await app.exited, { code: 0, signal: null }, 'the app exits as it would have');
});

test('the port SIGUSR1 would open held by another process (a second attach at once): exit 1, said, and the target not signalled', async (t) => {
  const holder = http.createServer().listen(0, '127.0.0.1');
  await once(holder, 'listening');
  t.after(() => holder.close());
  const { port } = holder.address();
  const app = await startApp(CJS, { inspectPort: port });
  t.after(() => app.kill());
  const inspectorsBefore = listening(app.pid);
  const r = await rloop(['attach', app.pid, '-d', 1, '--no-profile']);
  assert.strictEqual(r.code, 1, r.stderr);
  assert.match(r.stderr, new RegExp(`^rloop: PID ${app.pid} opens its inspector on port ${port}, which another process holds .*not signalled`, 'm'));
  await sleep(300);
  assert.doesNotMatch(app.output, /inspector|address already in use/i, "nothing on the app's stderr");
  assert.deepStrictEqual(listening(app.pid), inspectorsBefore);
  // Once it is free, the same attach opens the inspector there, and closes it after.
  holder.close();
  await once(holder, 'close');
  const again = await rloop(['attach', app.pid, '-d', 1, '--no-profile']);
  assert.strictEqual(again.code, 0, again.stderr);
  await assertLeftNothing(app, inspectorsBefore);
});

test('clear messages, exit 1: no such PID, a process that is not Node (left alive), a port that is not an inspector', async (t) => {
  const gone = spawn('true');
  await once(gone, 'exit');
  const r1 = await rloop(['attach', gone.pid]);
  assert.strictEqual(r1.code, 1);
  assert.match(r1.stderr, new RegExp(`^rloop: no process with PID ${gone.pid}\\n$`));

  const sleeper = spawn('sleep', ['30']);
  t.after(() => sleeper.kill());
  const r2 = await rloop(['attach', sleeper.pid]);
  assert.strictEqual(r2.code, 1);
  assert.match(r2.stderr, /is not a Node\.js process that can open its inspector: SIGUSR1 would kill it/);
  await sleep(200);
  assert.strictEqual(sleeper.exitCode, null, 'not signalled');
  assert.strictEqual(sleeper.signalCode, null, 'not signalled');

  const server = http.createServer((req, res) => res.end('hello')).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => server.close());
  const { port } = server.address();
  const r3 = await rloop(['attach', '--port', port]);
  assert.strictEqual(r3.code, 1);
  assert.match(r3.stderr, /127\.0\.0\.1:\d+ answers, but is not a Node\.js inspector/);
  server.close();
  await once(server, 'close');
  const r4 = await rloop(['attach', '--port', port]);
  assert.strictEqual(r4.code, 1);
  assert.match(r4.stderr, /nothing answers at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/);

  const r5 = await rloop(['attach', 'abc']);
  assert.strictEqual(r5.code, 1);
  assert.match(r5.stderr, /--pid must be a number/);
  const r6 = await rloop(['attach', '1', '-d', '0']);
  assert.match(r6.stderr, /--duration must be between 1ms and 604800000ms, got "0"/);
});

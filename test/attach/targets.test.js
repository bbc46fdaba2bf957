'use strict';
// `rloop attach` beyond one CommonJS main thread: an ES module app without rloop installed (the
// command's own copy is loaded), a worker thread picked with --target through an inspector the
// app opened itself (--port: left open), repeated captures with --watch and Ctrl-C, --compare.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { listening } = require('../../cli/attach/inspector');
const { assertValidReport } = require('../fixtures/report');
const { topFrame } = require('../../js/own');
const { FIXTURES, startApp, ask, rloop, seen, tmpDir, assertLeftNothing } = require('../fixtures/attach-helpers');

const scopeOf = (report, name) => report.elu.scopes.find((s) => s.name === name);

test('an ES module app without rloop installed: the command loads its own copy, and takes it out again', async (t) => {
  const dir = tmpDir(t, 'rloop-attach-esm-');
  for (const f of ['app.mjs', 'state.cjs']) fs.copyFileSync(path.join(FIXTURES, f), path.join(dir, f));
  const app = await startApp(path.join(dir, 'app.mjs'));
  t.after(() => app.kill());
  const inspectorsBefore = listening(app.pid);
  const json = path.join(dir, 'r.json');
  const r = await rloop(['attach', app.pid, '-d', 3, '--json', json]);
  assert.strictEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /rloop from this command; capturing 3 s/);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assertValidReport(report);
  // spinEsm: 100 ms every 500 ms, named in stalls (its innermost app frame: from a profile, Node's
  // performance.now() it calls may be above it).
  // V8 may inline spinEsm into the timer's arrow, which the profile then names (its frame in app.mjs).
  const blocker = (e) => topFrame(e.stack)?.url.endsWith('/app.mjs') && topFrame(e.stack).functionName;
  assert.ok(report.lag.events.some((e) => e.lagMs >= 90 && ['spinEsm', '(anonymous)'].includes(blocker(e))), JSON.stringify(report.lag.events.map((e) => [e.lagMs, blocker(e)])));
  // The profile names the app's code (V8 may inline spinEsm into its caller there).
  assert.ok(report.profile.analysis.heavyFunctions.some((f) => f.url.endsWith('/app.mjs') && f.selfMs > 0), 'the profile names app.mjs');
  // The line ends with how much of the stall the thread ran, where it is known.
  assert.match(r.stdout, /^⚠ lag \d+(\.\d+)? ms {2}scope \(unattributed\) {2}at (spinEsm|\(anonymous\)) .*app\.mjs:\d+( {2}\(.*\))?$/m);
  await assertLeftNothing(app, inspectorsBefore);
});

test('a worker thread: --list-targets, then --target 1 through the inspector the app opened (--port), which stays open', async (t) => {
  const dir = tmpDir(t, 'rloop-attach-worker-');
  // The app's own inspector, open before rloop came: rloop must leave it open.
  const app = await startApp(path.join(FIXTURES, 'worker-app.cjs'), { inspect: true });
  t.after(() => app.kill());
  const [inspector] = listening(app.pid);
  assert.ok(inspector, 'an inspector port');
  const list = await rloop(['attach', '--port', inspector.port, '--list-targets']);
  assert.strictEqual(list.code, 0, list.stderr);
  assert.match(list.stdout, /^0 {2}main thread\n1 {2}worker 1 {2}.*worker-app\.cjs\n$/);

  const json = path.join(dir, 'w.json');
  const r = await rloop(['attach', '--port', inspector.port, '--target', 1, '-d', 2, '--json', json]);
  assert.strictEqual(r.code, 0, r.stderr);
  assert.match(r.stderr, /\(Node v[\d.]+, worker thread 1\)/);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assertValidReport(report);
  assert.strictEqual(report.meta.thread, 1);
  const job = scopeOf(report, 'worker-job');
  assert.ok(job && job.calls >= 5 && job.busyMs >= 5 * 18, JSON.stringify(job));
  assert.strictEqual(scopeOf(report, 'main-work'), undefined, "the main thread's scope is not the worker's");
  assert.match(r.stdout, /^rloop PID \d+, worker thread 1,/m);
  assert.deepStrictEqual(listening(app.pid), [inspector], 'the inspector the app had is still open');
  const { now } = await ask(app, 'state');
  assert.strictEqual(now.monitored, 0, 'no thread monitored after leaving');

  const bad = await rloop(['attach', '--port', inspector.port, '--target', 2]);
  assert.strictEqual(bad.code, 1);
  assert.match(bad.stderr, /no target 2: the process has 1 worker/);
});

test('--watch: a capture after another, each written; Ctrl-C writes what the running one collected; --compare', async (t) => {
  const dir = tmpDir(t, 'rloop-attach-watch-');
  const app = await startApp(path.join(FIXTURES, 'app.cjs'));
  t.after(() => app.kill());
  const inspectorsBefore = listening(app.pid);
  const json = path.join(dir, 'r-{n}.json');
  const run = rloop(['attach', app.pid, '--watch', '-d', 1, '--no-profile', '--json', json]);
  await seen(run.child.stderr, /wrote .*r-2\.json/);
  await sleep(300);
  run.child.kill('SIGINT');
  const r = await run;
  assert.strictEqual(r.code, 0, r.stderr);
  const files = fs.readdirSync(dir).sort();
  assert.ok(files.length >= 3, files.join());
  const reports = files.map((f) => JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')));
  for (const rep of reports) assertValidReport(rep);
  assert.deepStrictEqual(reports.slice(0, -1).map((rep) => rep.meta.partial), reports.slice(0, -1).map(() => false));
  assert.strictEqual(reports.at(-1).meta.reason, 'stopped');
  assert.ok(reports.every((rep) => scopeOf(rep, 'parse')));
  assert.strictEqual((r.stdout.match(/^rloop PID/mg) ?? []).length, files.length);

  // Straight after leaving, while the inspector's close is pending: the next attach takes it over.
  const cmp = await rloop(['attach', app.pid, '-d', 1, '--no-profile', '--compare', path.join(dir, files[0])]);
  assert.strictEqual(cmp.code, 0, cmp.stderr);
  await assertLeftNothing(app, inspectorsBefore);
  assert.match(cmp.stdout, /\nverdict: (NO CHANGE|IMPROVED|REGRESSED|MIXED)\n(.*\n)* {2}lag +longest stall \d+ ms -> \d+ ms/);
});

'use strict';
// rloop is invisible to the app's own async hooks and AsyncLocalStorage: preloaded (zero-code
// or start() as an app's first line), it creates no async resource the app could see before
// it needs one, none at exit, and its hooks never throw. Each case is a cause found by running
// Node's own async_hooks tests with rloop preloaded.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { assertValidReport } = require('../fixtures/report');

const ROOT = path.join(__dirname, '..', '..');
const APP = path.join(__dirname, '..', 'fixtures', 'strict-hooks-app.js');
const START = path.join(__dirname, '..', 'fixtures', 'start-preload.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-invisible-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function run(args, env = {}) {
  return spawnSync(process.execPath, args, {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 30000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
}

test('an app hook as strict as Node\'s init-hooks.js sees nothing of preloaded rloop, nor at exit', () => {
  const plain = run([APP]);
  assert.strictEqual(plain.stdout, 'ok\n', plain.stderr);
  for (const [mode, args, env] of [
    ['-r rloop/register', ['-r', path.join(ROOT, 'register')], { RLOOP_JSON: path.join(tmp, 'r-{pid}.json') }],
    ['start() in a preload', ['-r', START], { RLOOP_TEST_START: JSON.stringify({ windowMs: 100 }) }],
  ]) {
    const r = run([...args, APP], env);
    assert.strictEqual(r.stdout, 'ok\n', `${mode}: the app's hook saw rloop\n${r.stdout}${r.stderr}`);
    assert.strictEqual(r.stderr, '', mode);
    assert.strictEqual(r.status, 0, `${mode}: an app hook that throws during exit would change the exit code`);
    if (mode === '-r rloop/register') {
      const report = JSON.parse(fs.readFileSync(path.join(tmp, `r-${r.pid}.json`), 'utf8'));
      assertValidReport(report);
      assert.strictEqual(report.meta.reason, 'exit');
      // The app's first stall, with its stack: the sampler that took it made nothing the hook saw.
      assert.ok(report.lag.events.some((e) => e.lagMs >= 140 && e.stack?.[0]?.functionName === 'spin'), JSON.stringify(report.lag.events));
    }
  }
});

test('before() of a resource rloop never saw, with no execution resource, does not throw', () => {
  // Node emits before/after for bare asyncIds in places (and its own tests do, through internals).
  const script = `require(${JSON.stringify(ROOT)}).start({});
    const internal = require('internal/async_hooks');
    internal.emitBefore(123456789, 1);
    internal.emitAfter(123456789);
    console.log('ok');`;
  const r = run(['--expose-internals', '-e', script]);
  assert.strictEqual(r.stderr, '');
  assert.strictEqual(r.stdout, 'ok\n');
  assert.strictEqual(r.status, 0);
});

test('dns.promises.lookup creates no async resource more with rloop, and gives what it gives without', (t) => {
  // In a network namespace of its own: 'localhost' comes from /etc/hosts, no resolver is reached.
  const probe = spawnSync('unshare', ['-rn', 'true']);
  if (probe.status !== 0) return t.skip('needs unshare -rn (a user and network namespace)');
  const app = path.join(__dirname, '..', 'fixtures', 'dns-hooks-app.js');
  const inNamespace = (args) => spawnSync('unshare', ['-rn', process.execPath, ...args], { encoding: 'utf8', timeout: 30000 });
  const plain = inNamespace([app]);
  const pidless = (text) => text.replace(/\(node:\d+\)/g, '(node)'); // Node 20's DEP0118, for the lookup of ''
  const without = JSON.parse(plain.stdout);
  assert.ok(without.inits.PROMISE >= 20, JSON.stringify(without.inits));
  assert.ok(without.results.some(([args, r]) => args[0] === 'localhost' && r.address === '127.0.0.1'), plain.stdout);
  const watched = inNamespace(['-r', START, app]);
  assert.strictEqual(pidless(watched.stderr), pidless(plain.stderr));
  assert.deepStrictEqual(JSON.parse(watched.stdout), without);
});

// Node calls a hook disabled inside another hook's callback for the rest of that callback's event:
// rloop stopped there (by the app, or by an attach's command, which lands as an interrupt) must
// throw nothing from its hooks. On Node ≥ 24 its `before` threw (its store gone): the app died.
test("stop() inside an app's async hook callback, rloop's hooks still called in that event: the app runs on", () => {
  const script = `const { createHook } = require('node:async_hooks');
    const rloop = require(${JSON.stringify(ROOT)});
    let mon = null;
    let stops = 0;
    // The app's hook is enabled first, so Node calls it before rloop's in each event.
    createHook({ init() { if (stops === 1) stop(); }, before() { if (stops === 0) stop(); } }).enable();
    const stop = () => { stops++; mon.stop(); };
    mon = rloop.start({ autoScopes: { timers: true } });
    setTimeout(() => {
      rloop.scope('x', () => {
        mon = rloop.start();
        setTimeout(() => { rloop.scope('y', () => {}); console.log('ok', stops); }, 1);
      });
    }, 1);`;
  const r = run(['-e', script]);
  assert.strictEqual(r.stderr, '');
  assert.strictEqual(r.stdout, 'ok 2\n');
  assert.strictEqual(r.status, 0);
});

// js/attempt.js: what rloop runs inside the app's callbacks never throws there, and counts what it swallowed.
test("rloop's own work that throws as the loop wakes is swallowed and counted: the app runs on, and the capture's report says how many", () => {
  const json = path.join(tmp, 'swallowed.json');
  const script = `const rloop = require(${JSON.stringify(ROOT)});
    const { wakeAt } = require(${JSON.stringify(path.join(ROOT, 'js', 'attribution', 'wakers'))});
    const mon = rloop.start({});
    const done = mon.capture({ durationMs: 200, json: ${JSON.stringify(json)} });
    let ran = 0;
    wakeAt(() => { throw new Error('rloop\\'s own'); }); // runs as the loop wakes, before the app's next callback
    setImmediate(() => { ran++; });
    setTimeout(() => { ran++; }, 20);
    const alive = setTimeout(() => {}, 5000); // the capture's own timer keeps no process alive
    done.finally(() => clearTimeout(alive)).then((report) => console.log('ok', ran, report.meta.swallowed));`;
  const r = run(['-e', script]);
  assert.strictEqual(r.stderr, '');
  assert.strictEqual(r.stdout, 'ok 2 1\n');
  assert.strictEqual(r.status, 0);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assertValidReport(report);
  assert.strictEqual(report.meta.swallowed, 1);
});

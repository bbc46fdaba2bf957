'use strict';
// The two ways the scope travels (js/hooks.js): by AsyncContextFrame where AsyncLocalStorage
// runs on it (Node ≥ 24 by default), else by tagging each resource in an init hook. Each Node
// line runs the whole suite in its default mode; here the attribution tests run once more in
// the other one, and the app's own AsyncLocalStorage sees the same with rloop as without.

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { AsyncLocalStorage } = require('node:async_hooks');
const rloop = require('..');
const hooks = require('../js/hooks');

const ROOT = path.join(__dirname, '..');
const MAJOR = Number(process.versions.node.split('.')[0]);
// The flag that turns the other mode on, per line: Node 20 has only the init hook.
const OTHER = MAJOR >= 24 ? '--no-async-context-frame' : MAJOR === 22 ? '--experimental-async-context-frame' : null;
const NESTED = 'RLOOP_TEST_OTHER_MODE'; // set in the run in the other mode: it must not start one more
const IN_OTHER_MODE = process.env[NESTED] === '1';

/** Whether a fresh Node with `flags` (and nothing from NODE_OPTIONS) carries the scope by frames. */
function framesWith(flags) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const script = `console.log(require(${JSON.stringify(path.join(ROOT, 'js', 'hooks'))}).FRAMES)`;
  const r = spawnSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', env });
  assert.strictEqual(r.status, 0, r.stderr);
  return r.stdout.trim() === 'true';
}

test('the scope travels by AsyncContextFrame exactly where AsyncLocalStorage does', () => {
  const flagged = process.execArgv.includes(OTHER) || (process.env.NODE_OPTIONS ?? '').includes(OTHER);
  assert.strictEqual(hooks.FRAMES, (MAJOR >= 24) !== flagged, `Node ${process.version}, ${OTHER} ${flagged ? 'on' : 'off'}`);
  assert.strictEqual(framesWith([]), MAJOR >= 24);
  if (OTHER !== null) assert.strictEqual(framesWith([OTHER]), MAJOR < 24);
});

/** What the app's store holds along a scope(): set around it, inside it, across an await. */
async function appStores() {
  const als = new AsyncLocalStorage();
  const seen = [];
  await als.run('outer', async () => {
    rloop.scope('s', () => {
      seen.push(als.getStore());
      als.enterWith('entered'); // lasts past the scope's end, as past any function's
    });
    seen.push(als.getStore());
    const prev = rloop.enter('e');
    als.enterWith('inside enter');
    rloop.restore(prev);
    seen.push(als.getStore());
    await rloop.scope('a', async () => {
      await new Promise((resolve) => setImmediate(resolve));
      seen.push(als.getStore());
      await als.run('inner', () => new Promise((resolve) => setTimeout(() => resolve(seen.push(als.getStore())), 1)));
    });
    seen.push(als.getStore());
  });
  seen.push(als.getStore());
  return seen;
}

test("the app's AsyncLocalStorage sees what it sees without rloop", async () => {
  const without = await appStores();
  assert.deepStrictEqual(without, ['outer', 'entered', 'inside enter', 'inside enter', 'inner', 'inside enter', undefined]);
  const mon = rloop.start({ lag: false, io: false });
  try {
    assert.deepStrictEqual(await appStores(), without);
  } finally {
    mon.stop();
  }
});

/** The scope current() names in callbacks of every kind, each started in a scope of its own. */
async function scopesSeen() {
  const fs = require('node:fs');
  const net = require('node:net');
  const { AsyncResource } = require('node:async_hooks');
  const seen = {};
  const at = (what) => (seen[what] = rloop.current().scope);
  const done = [];
  const wait = (register) => done.push(new Promise(register));
  rloop.scope('timer', () => wait((r) => setTimeout(() => r(at('timer')), 1)));
  rloop.scope('immediate', () => wait((r) => setImmediate(() => process.nextTick(() => r(at('nextTick in immediate'))))));
  rloop.scope('promise', () => wait((r) => Promise.resolve().then(() => r(at('promise')))));
  rloop.scope('microtask', () => wait((r) => queueMicrotask(() => r(at('queueMicrotask')))));
  rloop.scope('fs', () => wait((r) => fs.stat(__filename, () => r(at('fs')))));
  let resource;
  rloop.scope('resource', () => (resource = new AsyncResource('Queue')));
  wait((r) => rloop.scope('caller', () => setImmediate(() => r(resource.runInAsyncScope(() => at('AsyncResource'))))));
  const prev = rloop.enter('entered');
  wait((r) => setImmediate(() => r(at('after enter()'))));
  rloop.restore(prev);
  wait((r) => setImmediate(() => r(at('after restore()'))));
  // A connection accepted by a server listening since a scope: its socket's data, and what that starts.
  const server = net.createServer((socket) => socket.on('data', () => {
    at('data');
    setImmediate(() => {
      at('immediate in data');
      socket.end();
    });
  }));
  await new Promise((resolve) => rloop.scope('server', () => server.listen(0, '127.0.0.1', resolve)));
  const client = net.connect(server.address().port, '127.0.0.1', () => client.end('x'));
  await new Promise((resolve) => client.on('close', resolve));
  server.close();
  await Promise.all(done);
  return seen;
}

test('every kind of callback runs in the scope that started it', async () => {
  const mon = rloop.start({ lag: false, io: false });
  try {
    assert.deepStrictEqual(await scopesSeen(), {
      timer: 'timer',
      'nextTick in immediate': 'immediate',
      promise: 'promise',
      queueMicrotask: 'microtask',
      fs: 'fs',
      AsyncResource: 'resource',
      'after enter()': 'entered',
      'after restore()': null,
      data: 'server',
      'immediate in data': 'server',
    });
  } finally {
    mon.stop();
  }
});

test('the attribution tests pass in the other mode too', (t) => {
  if (IN_OTHER_MODE) return assert.strictEqual(hooks.FRAMES, MAJOR < 24, 'this run is the other mode');
  if (OTHER === null) return assert.strictEqual(hooks.FRAMES, false, 'Node 20 has one mode: the init hook');
  const files = ['attribution', 'api', 'auto-scopes', 'frames'].map((f) => path.join(__dirname, `${f}.test.js`));
  const env = { ...process.env, NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${OTHER}`.trim(), [NESTED]: '1' };
  delete env.NODE_TEST_CONTEXT; // else it reports to this runner in its own protocol, not as text
  const args = ['--expose-gc', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files];
  const r = spawnSync(process.execPath, args, { cwd: ROOT, env, encoding: 'utf8', timeout: 600e3 });
  t.diagnostic(`${OTHER}: ${/ℹ pass \d+/.exec(r.stdout)?.[0]}, ${/ℹ fail \d+/.exec(r.stdout)?.[0]}`);
  assert.strictEqual(r.status, 0, `${OTHER}:\n${r.stdout.slice(-6000)}${r.stderr}`);
  assert.match(r.stdout, /ℹ fail 0/);
});

'use strict';
// The two ways the scope travels (js/attribution/hooks.js): by AsyncContextFrame where AsyncLocalStorage
// runs on it (Node ≥ 24 by default), else by tagging each resource in an init hook. The mode
// follows Node's own, flag for flag, and the app's own AsyncLocalStorage sees the same with
// rloop as without. test/plan.js runs the attribution tests in both modes.

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { AsyncLocalStorage } = require('node:async_hooks');
const rloop = require('../..');
const hooks = require('../../js/attribution/hooks');

const ROOT = path.join(__dirname, '..', '..');
const MAJOR = Number(process.versions.node.split('.')[0]);
// The flag that turns the other mode on, per line: Node 20 has only the init hook.
const OTHER = MAJOR >= 24 ? '--no-async-context-frame' : MAJOR === 22 ? '--experimental-async-context-frame' : null;

/** Whether a fresh Node with `flags` (and nothing from NODE_OPTIONS) carries the scope on context frames. */
function framesWith(flags) {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const script = `console.log(require(${JSON.stringify(path.join(ROOT, 'js', 'attribution', 'hooks'))}).CONTEXT_FRAMES)`;
  const r = spawnSync(process.execPath, [...flags, '-e', script], { encoding: 'utf8', env });
  assert.strictEqual(r.status, 0, r.stderr);
  return r.stdout.trim() === 'true';
}

test('the scope travels by AsyncContextFrame exactly where AsyncLocalStorage does', () => {
  const flagged = process.execArgv.includes(OTHER) || (process.env.NODE_OPTIONS ?? '').includes(OTHER);
  assert.strictEqual(hooks.CONTEXT_FRAMES, (MAJOR >= 24) !== flagged, `Node ${process.version}, ${OTHER} ${flagged ? 'on' : 'off'}`);
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

// js/attribution/context-frames.js context(): a callback finds its scope on the frame rloop made (the frames it
// makes carry their context), else in rloop's store of the frame the app made from one of
// rloop's. A frame of an earlier monitor, carrying its context, means nothing to the next.
test("a frame the app made inside a scope still reads the scope; one of an earlier monitor none", async () => {
  const als = new AsyncLocalStorage();
  const seen = {};
  const at = (name, resolve) => () => resolve((seen[name] = rloop.current().scope));
  const mon = rloop.start({ lag: false, io: false });
  let late;
  try {
    await new Promise((resolve) => rloop.scope('s', () => als.run('app', () => setImmediate(at('app frame', resolve)))));
    await new Promise((resolve) => rloop.scope('s', () => setImmediate(at("rloop's frame", resolve))));
    late = new Promise((resolve) => rloop.scope('old', () => setTimeout(at('earlier monitor', resolve), 50)));
  } finally {
    mon.stop();
  }
  const next = rloop.start({ lag: false, io: false });
  try {
    rloop.scope('other', () => {}); // the next monitor's first scope takes the slot 'old' had
    await late;
  } finally {
    next.stop();
  }
  assert.deepStrictEqual(seen, { 'app frame': 's', "rloop's frame": 's', 'earlier monitor': null });
});

// js/attribution/context-frames.js: with Node's AsyncContextFrame class learnt (from a frame a resource carries), an
// entry reuses the frame it made from the same frame before, and a restore() puts back the frame
// its entry replaced, instead of copying the frame each time. A timer keeps the frame it was
// created in: that shows which frame was in force.
const NO_CONTEXT_FRAMES = !hooks.CONTEXT_FRAMES && 'the scope travels by the init hook here: no context frame is entered';
const frameOf = (timer) => timer[Object.getOwnPropertySymbols(timer).find((s) => s.description === 'kAsyncContextFrame')];

/** `fn()` in a callback whose resource carries a frame (a scope's immediate), as Node-RED's deliveries run. */
function inFramedCallback(fn) {
  return new Promise((resolve, reject) => rloop.scope('host', () => setImmediate(() => {
    try {
      rloop.scope('learn', () => {}); // where js/attribution/context-frames.js learns the class
      resolve(fn());
    } catch (e) {
      reject(e);
    }
  })));
}

test('an entry copies no frame where the copy would change nothing', { skip: NO_CONTEXT_FRAMES }, async () => {
  const mon = rloop.start({ lag: false, io: false });
  const timers = [];
  const ran = [];
  const timer = (what) => {
    const t = setTimeout(() => ran.push([what, rloop.current().scope]), 1);
    timers.push(t);
    return frameOf(t);
  };
  try {
    const seen = await inFramedCallback(() => {
      const before = timer('before');
      const inA = ['a, first', 'a, second', 'a, third'].map((what) => rloop.scope('a', () => timer(what)));
      const afterScopes = timer('after the scopes');
      const prev = rloop.enter('b');
      const inB = timer('b');
      rloop.restore(prev);
      return { before, inA, afterScopes, inB, afterRestore: timer('after restore') };
    });
    assert.notStrictEqual(seen.inA[0], seen.inA[1], 'a scope entered once from a frame keeps no frame');
    assert.strictEqual(seen.inA[1], seen.inA[2], "the frame made for 'a' from this frame on its second entry, reused");
    assert.notStrictEqual(seen.inA[1], seen.before);
    assert.strictEqual(seen.afterScopes, seen.before, 'each scope() put back the frame it replaced');
    assert.notStrictEqual(seen.inB, seen.before);
    assert.strictEqual(seen.afterRestore, seen.before, 'restore() put back the frame enter() replaced');
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepStrictEqual(ran, [['before', 'host'], ['a, first', 'a'], ['a, second', 'a'], ['a, third', 'a'], ['after the scopes', 'host'], ['b', 'b'], ['after restore', 'host']]);
    // The same in every kind of callback, and the app's stores as without rloop, from frames seen before.
    const stores = await appStores();
    assert.deepStrictEqual(await inFramedCallback(appStores), stores);
    assert.deepStrictEqual(await inFramedCallback(appStores), stores);
  } finally {
    timers.forEach(clearTimeout);
    mon.stop();
  }
});

// A fresh process whose only async work is awaits: no timer, immediate or tick to learn the
// class from, and the test runner may have entered a store here. Learnt as the monitor starts,
// entries reuse frames from the first one on (before, each scope() copied two frames: the names
// scenario of bench/memory.js grew V8's young generation by 23 MB on Node 24 and 26).
test('the class is learnt as the monitor starts, in an app of awaits only', { skip: NO_CONTEXT_FRAMES }, () => {
  const script = `const rloop = require(${JSON.stringify(ROOT)});
    const frameOf = ${frameOf};
    const mon = rloop.start({ lag: false, io: false });
    (async () => {
      await null;
      const frameIn = () => rloop.scope('a', () => {
        const t = setTimeout(() => {});
        const f = frameOf(t); // before clearTimeout(), which drops it
        clearTimeout(t);
        return f;
      });
      const [, second, third] = [frameIn(), frameIn(), frameIn()];
      console.log(JSON.stringify({ framed: typeof second === 'object', reused: second === third }));
      mon.stop();
    })();`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.strictEqual(r.status, 0, r.stderr);
  assert.deepStrictEqual(JSON.parse(r.stdout), { framed: true, reused: true });
});

// How it is learnt (AsyncResource's constructor, stopped at its first store) must not show: an
// app's hook enabled before start() sees no resource, and no asyncId is taken.
test("start() makes no async resource an app's hook sees, nor takes an asyncId", () => {
  const script = `const { createHook, AsyncResource } = require('node:async_hooks');
    const rloop = require(${JSON.stringify(ROOT)});
    const seen = [];
    createHook({ init(id, type) { seen.push(type); }, before() {}, after() {} }).enable();
    const first = new AsyncResource('app').asyncId();
    const mon = rloop.start({ lag: false, io: false });
    const next = new AsyncResource('app').asyncId();
    mon.stop();
    console.log(JSON.stringify({ seen, step: next - first }));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.strictEqual(r.status, 0, r.stderr);
  assert.deepStrictEqual(JSON.parse(r.stdout), { seen: ['app', 'app'], step: 1 });
});

test("an app's store changed inside an entry stays changed past it, as without rloop", { skip: NO_CONTEXT_FRAMES }, async () => {
  const als = new AsyncLocalStorage();
  const run = () => inFramedCallback(() => als.run('app', () => {
    const seen = [];
    rloop.scope('a', () => als.disable()); // deletes the store from the frame in force
    seen.push(als.getStore());
    als.enterWith('again');
    const prev = rloop.enter('b');
    als.enterWith('inside');
    rloop.restore(prev);
    seen.push(als.getStore());
    return seen;
  }));
  const without = await new Promise((resolve) => setImmediate(() => resolve(als.run('app', () => {
    const seen = [];
    als.disable();
    seen.push(als.getStore());
    als.enterWith('again');
    als.enterWith('inside');
    seen.push(als.getStore());
    return seen;
  }))));
  assert.deepStrictEqual(without, [undefined, 'inside']);
  const mon = rloop.start({ lag: false, io: false });
  try {
    assert.deepStrictEqual(await run(), without);
    assert.deepStrictEqual(await run(), without);
  } finally {
    mon.stop();
  }
});

test("entries keep no frame of the app's alive past their end", { skip: NO_CONTEXT_FRAMES }, async () => {
  const als = new AsyncLocalStorage();
  const collected = async (refs) => {
    await new Promise((resolve) => setImmediate(resolve)); // WeakRef targets stay until the job ends
    global.gc();
    return refs.map((r) => r.deref() === undefined);
  };
  const mon = rloop.start({ lag: false, io: false });
  try {
    // Each entry ended by its restore.
    const ended = await inFramedCallback(() => [1, 2, 3].map((i) => {
      const data = { i, payload: new Array(1000).fill(i) };
      als.run(data, () => {
        rloop.scope('a', () => {});
        rloop.restore(rloop.enter('b'));
      });
      return new WeakRef(data);
    }));
    assert.deepStrictEqual(await collected(ended), [true, true, true]);
    // An entry the callback's end leaves (Node puts the frame back), until the next entry.
    const left = await inFramedCallback(() => {
      const data = { payload: new Array(1000).fill(0) };
      als.run(data, () => rloop.enter('left entered'));
      rloop.scope('a', () => {});
      return [new WeakRef(data)];
    });
    assert.deepStrictEqual(await collected(left), [true]);
  } finally {
    mon.stop();
  }
});

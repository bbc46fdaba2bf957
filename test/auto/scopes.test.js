'use strict';
// Automatic scopes in-process: the option, names, the app's own scope winning, the cap on names.

const test = require('node:test');
const assert = require('node:assert');
const http = require('node:http');
const { once } = require('node:events');
const rloop = require('../..');
const { collapse } = require('../../js/auto/http');
const { busy } = require('../fixtures/helpers');

async function server(handler) {
  const s = http.createServer(handler);
  s.listen(0, '127.0.0.1');
  await once(s, 'listening');
  return s;
}

function get(port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      res.resume();
      res.on('end', resolve);
    }).on('error', reject);
  });
}

const scopeOf = (m, name) => m.totals().scopes.find((s) => s.name === name);

test('autoScopes: true, false or { http, timers }; anything else is a TypeError naming it', () => {
  for (const [value, message] of [
    [1, /option 'autoScopes' must be true, false or \{ http, timers \}, got the number 1/],
    ['http', /option 'autoScopes' must be .*got the string "http"/],
    [null, /option 'autoScopes' must be .*got null/],
    [{ http: 'yes' }, /option 'autoScopes.http' must be true or false/],
    [{ cpu: true }, /unknown 'autoScopes' option 'cpu' \(known: http, timers\)/],
  ]) {
    assert.throws(() => rloop.start({ autoScopes: value }), (e) => e instanceof TypeError && message.test(e.message));
  }
  assert.strictEqual(rloop.monitor(), null);
  const m = rloop.start();
  assert.deepStrictEqual(m.autoScopes(), { http: null, timers: null }, 'off unless asked for');
  m.stop();
  const both = rloop.start({ autoScopes: true });
  assert.deepStrictEqual(both.autoScopes(), { http: { routes: 0, overflowed: 0 }, timers: { sites: 0, overflowed: 0 } });
  both.stop();
});

test('identifiers in paths collapse to :id; words stay', () => {
  assert.strictEqual(collapse('/users/42/posts/7'), '/users/:id/posts/:id');
  assert.strictEqual(collapse('/docs/3f2504e0-4f89-41d3-9a0c-0305e82c3301'), '/docs/:id');
  assert.strictEqual(collapse('/blob/9f86d081884c7d65'), '/blob/:id');
  assert.strictEqual(collapse('/reset/eyJhbGciOiJIUzI1NiJ9abc123'), '/reset/:id');
  assert.strictEqual(collapse('/api/v2/users/profile'), '/api/v2/users/profile');
  assert.strictEqual(collapse('/faced/decade'), '/faced/decade', 'hex letters without a digit are words');
});

test("the app's own scope inside a request wins, and time stays exclusive", async () => {
  const m = rloop.start({ autoScopes: { http: true } });
  try {
    let own = 0;
    let inner = 0;
    const s = await server((req, res) => {
      own += busy(10);
      inner += rloop.scope('db', () => busy(60));
      setTimeout(() => {
        own += busy(5); // the route's, as what it starts
        res.end();
      }, 1);
    });
    for (let i = 0; i < 5; i++) await get(s.address().port, `/orders/${i}?q=1`);
    s.close();
    const route = scopeOf(m, 'GET /orders/:id');
    const db = scopeOf(m, 'db');
    assert.ok(Math.abs(db.busyMs - inner) < 15, `db: ${db.busyMs} ms, its work ${inner} ms`);
    // The route's own work and its HTTP handling, none of db's.
    assert.ok(route.busyMs >= own - 2 && route.busyMs < own + inner / 2, `route: ${route.busyMs} ms, its work ${own} ms`);
  } finally {
    m.stop();
  }
});

test('a server opened inside an app scope keeps charging it; its slow requests keep that scope and know their route', async () => {
  const m = rloop.start({ autoScopes: true, ioThresholdMs: 0 });
  const slow = [];
  m.on('slowIO', (e) => e.type === 'http-in' && slow.push(e));
  try {
    const s = await rloop.scope('api', () => server((req, res) => res.end(String(busy(10)))));
    for (let i = 0; i < 3; i++) await get(s.address().port, `/x/${i}`);
    s.close();
    assert.ok(scopeOf(m, 'api').busyMs >= 30);
    assert.strictEqual(scopeOf(m, 'GET /x/:id'), undefined);
    assert.deepStrictEqual(slow.map((e) => [e.target, e.route, e.scope, e.key]), [0, 1, 2].map((i) => [`/x/${i}`, '/x/:id', 'api', null]));
  } finally {
    m.stop();
  }
});

test('names past the cap go to one scope, and are counted', async () => {
  const m = rloop.start({ autoScopes: { http: true } });
  try {
    const s = await server((req, res) => res.end());
    for (let i = 0; i < 505; i++) await get(s.address().port, `/page/p${i}`);
    await get(s.address().port, '/page/p504'); // a path seen before (its name remembered) counts again
    await get(s.address().port, '/page/p3');
    s.close();
    assert.deepStrictEqual(m.autoScopes().http, { routes: 500, overflowed: 6 });
    assert.strictEqual(scopeOf(m, 'HTTP (other routes)').calls >= 5, true);
  } finally {
    m.stop();
  }
});

test('while a capture runs, a timer created outside any scope is named where, one in an app scope stays in it', async () => {
  const m = rloop.start({ autoScopes: { timers: true } });
  try {
    await new Promise((resolve) => setTimeout(() => resolve(busy(5)), 1));
    assert.deepStrictEqual(m.totals().scopes, [], 'no capture: timers are not named');
    const capture = m.capture({ durationMs: 60000 });
    const line = Number(new Error().stack.split('\n')[1].match(/:(\d+):\d+\)?$/)[1]) + 1;
    const outside = new Promise((resolve) => setTimeout(() => resolve(busy(5)), 1));
    await rloop.scope('job', () => new Promise((resolve) => setTimeout(() => resolve(busy(5)), 1)));
    await outside;
    const names = m.totals().scopes.map((s) => s.name);
    assert.deepStrictEqual(names.sort(), ['job', `setTimeout at test/auto/scopes.test.js:${line}`], "rloop's own capture timer is not the app's");
    assert.deepStrictEqual(m.autoScopes().timers, { sites: 1, overflowed: 0 });
    m.stop();
    const report = await capture;
    assert.ok(report.elu.scopes.some((s) => s.name.startsWith('setTimeout at test/auto/scopes.test.js:')));
  } finally {
    m.stop();
  }
  const after = rloop.start();
  await new Promise((resolve) => setTimeout(resolve, 1));
  assert.deepStrictEqual(after.totals().scopes, [], 'no timer is named after stop()');
  after.stop();
});

test('a message of another shape on the channels rloop reads never throws into the app', async () => {
  const dc = require('node:diagnostics_channel');
  const m = rloop.start({ autoScopes: { http: true } });
  const uncaught = [];
  const onUncaught = (e) => uncaught.push(e);
  process.on('uncaughtException', onUncaught);
  try {
    dc.channel('http.server.request.start').publish({ request: { url: '/x/1', method: 'GET' }, socket: null, server: undefined });
    dc.channel('http.server.response.finish').publish(null);
    dc.channel('tracing:fastify.request.handler:start').publish(undefined);
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.deepStrictEqual(uncaught, []);
  } finally {
    process.off('uncaughtException', onUncaught);
    m.stop();
  }
});

test('an Express request in flight when the monitor stops routes as ever', async () => {
  const express = require('express');
  const m = rloop.start({ autoScopes: { http: true } });
  const app = express();
  app.use((req, res, next) => {
    m.stop(); // before the router sets req.route
    next();
  });
  app.get('/items/:id', (req, res) => res.end(req.route.path));
  const s = app.listen(0, '127.0.0.1');
  await once(s, 'listening');
  const body = await new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port: s.address().port, path: '/items/7', agent: false }, (res) => {
      let b = '';
      res.on('data', (d) => (b += d));
      res.on('end', () => resolve(b));
    }).on('error', reject);
  });
  s.close();
  assert.strictEqual(body, '/items/:id');
});

test('a request routed after its key\'s slot went to newer requests: the rest of it is its route\'s', async () => {
  const express = require('express');
  // Every key of a window listed (worstKeys), so the late key's parts add up across windows.
  const m = rloop.start({ autoScopes: { http: true }, keySlots: 16, worstKeys: 32 });
  try {
    const app = express();
    let arrived;
    const lateArrived = new Promise((resolve) => { arrived = resolve; });
    let release;
    const others = new Promise((resolve) => { release = resolve; });
    let started = 0;
    app.use((req, res, next) => {
      if (req.url === '/late/0') {
        arrived();
        others.then(next); // routed once 20 newer requests took every key slot, its own too
      } else {
        if (++started === 20) release();
        next();
      }
    });
    let work = 0;
    app.get('/late/:n', (req, res) => {
      if (req.params.n === '0') work = busy(40);
      res.end();
    });
    const s = app.listen(0, '127.0.0.1');
    await once(s, 'listening');
    const late = get(s.address().port, '/late/0');
    await lateArrived; // its key holds the ring's first slot
    await Promise.all(Array.from({ length: 20 }, (_, i) => get(s.address().port, `/late/${i + 1}`)));
    await late;
    s.close();
    // Its key, '/late/0 #1', bound again under the route: the late work is in the route's windows.
    const windows = [...m.history(), m.liveWindow()];
    const keyed = windows.flatMap((w) => w.scopes).filter((x) => x.name === 'GET /late/:n').flatMap((x) => x.keys?.worst ?? []);
    const lateKeyMs = keyed.filter((k) => k.key === '/late/0 #1').reduce((sum, k) => sum + k.busyMs, 0);
    const seen = JSON.stringify({ totals: m.totals(), windows: windows.map((w) => w.scopes) });
    const route = scopeOf(m, 'GET /late/:n');
    assert.ok(work >= 40 && route?.busyMs >= work, `the route: ${route?.busyMs} ms, the late request's work ${work} ms; ${seen}`);
    assert.ok(lateKeyMs >= work, `the late request's key under its route: ${lateKeyMs} ms, its work ${work} ms; ${seen}`);
  } finally {
    m.stop();
  }
});

/** What an Express app sees of its request: own properties (before and after routing) and req.route. */
async function expressSees(pkg) {
  const express = require(pkg);
  const app = express();
  const seen = {};
  const shape = (req) => Object.entries(Object.getOwnPropertyDescriptors(req)).map(([k, d]) => `${k} ${d.enumerable} ${d.writable} ${'get' in d}`);
  app.use((req, res, next) => {
    seen.before = { shape: shape(req), own: Object.hasOwn(req, 'route'), route: req.route };
    next();
  });
  app.get('/items/:id', (req, res) => {
    seen.after = { shape: shape(req), keys: JSON.stringify(Object.keys(req)), route: req.route.path, isRoute: req.route instanceof express.Route };
    res.end();
  });
  const s = app.listen(0, '127.0.0.1');
  await once(s, 'listening');
  await get(s.address().port, '/items/7');
  s.close();
  return { seen, app };
}

for (const pkg of ['express', 'express4']) {
  test(`${pkg}: a request looks to the app as without rloop, and still gets its route's name`, async () => {
    const { seen: without } = await expressSees(pkg);
    const m = rloop.start({ autoScopes: { http: true } });
    let within;
    let app;
    try {
      ({ seen: within, app } = await expressSees(pkg));
      assert.ok(Object.hasOwn(app.request, 'route'), 'the accessor is on the app\'s request prototype');
      assert.ok(scopeOf(m, 'GET /items/:id'), `named by the template: ${m.totals().scopes.map((x) => x.name)}`);
    } finally {
      m.stop();
    }
    assert.deepStrictEqual(within, without);
    assert.ok(without.after.shape.includes('route true true false'), 'Express made req.route an own, enumerable property');
    assert.ok(!without.before.own && without.after.isRoute, JSON.stringify(without));
    assert.ok(!Object.hasOwn(app.request, 'route'), 'stop() takes the accessor away');
  });
}

'use strict';
// Automatic HTTP scopes on apps that know nothing of rloop, run zero-code: each request is
// charged to its route (the framework's template, or the path with ids collapsed), and what the
// route's work costs is what its scope shows.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const http = require('node:http');
const crypto = require('node:crypto');
const { spawn } = require('node:child_process');
const { once } = require('node:events');
const { setTimeout: sleep } = require('node:timers/promises');
const { assertValidReport } = require('../fixtures/report');

const ROOT = path.join(__dirname, '..', '..');
const APP = path.join(__dirname, '..', 'fixtures', 'auto-http-app.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-auto-http-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

const LOAD_MS = 5000;
const DELAY_MS = 2500; // the capture starts after the app is warm: first use compiles code
const TOLERANCE = 3; // ELU points

/** The local server the slow route awaits: it answers after 40 ms. */
async function slowServer() {
  const server = http.createServer((req, res) => setTimeout(() => res.end('late'), 40));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server;
}

function get(port, urlPath, agent) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: urlPath, agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve(body));
    }).on('error', reject);
  });
}

/**
 * Runs the app zero-code; warms each route up before the capture starts, then loads each for
 * LOAD_MS (ids vary per request). Gives the report and the work the app measured meanwhile.
 */
async function run(kind, prefix) {
  const slow = await slowServer();
  const json = path.join(tmp, `${kind}.json`);
  const app = spawn(process.execPath, ['-r', path.join(ROOT, 'register'), APP, kind], {
    cwd: tmp,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, SLOW_PORT: String(slow.address().port), RLOOP_JSON: json, RLOOP_DELAY: String(DELAY_MS) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  app.stderr.on('data', (d) => (stderr += d));
  const [first] = await once(app.stdout, 'data');
  const port = Number(String(first).trim());
  const listening = Date.now(); // rloop started before the app: its capture starts by DELAY_MS from now
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  const ids = {
    slow: () => String(Math.floor(Math.random() * 1e6)),
    json: () => crypto.randomUUID(),
    cpu: () => crypto.randomBytes(12).toString('hex'),
  };
  const url = (route) => `${prefix[route]}/${route}/${ids[route]()}?token=secret`;
  for (const route of Object.keys(ids)) for (let i = 0; i < 2; i++) await get(port, url(route), agent);
  await sleep(DELAY_MS + 200 - (Date.now() - listening));
  await get(port, '/reset', agent);
  const end = Date.now() + LOAD_MS;
  const loop = async (route) => {
    while (Date.now() < end) {
      await get(port, url(route), agent);
      await sleep(600);
    }
  };
  await Promise.all(Object.keys(ids).map(loop));
  const { work, lostMs } = JSON.parse(await get(port, '/quit', agent));
  agent.destroy();
  const [code] = await once(app, 'exit');
  slow.close();
  assert.strictEqual(code, 0, stderr);
  assert.strictEqual(stderr, '');
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assertValidReport(report);
  return { report, work, lostMs };
}

/**
 * Each route's scope within TOLERANCE ELU points of the work it measured, and of the time the
 * busy loop lost the CPU outside that work: a route's framework code descheduled is charged to
 * the route, which is right, but its work never measured it (a shared 2-core machine lost 400 ms
 * of 8 s there).
 */
function assertRoutes({ report, work, lostMs }, names) {
  const duration = report.meta.durationMs;
  const points = (ms) => (ms / duration) * 100;
  const seen = report.elu.scopes.map((s) => `${s.name} ${s.busyMs.toFixed(0)} ms`).join(', ') + ` work ${JSON.stringify(work)} unattributed ${report.elu.unattributed.busyMs.toFixed(0)} in ${duration}, CPU lost outside work ${lostMs.toFixed(0)} ms`;
  for (const [route, name] of Object.entries(names)) {
    const scope = report.elu.scopes.find((s) => s.name === name);
    assert.ok(scope, `${name} is a scope (scopes: ${seen})`);
    assert.ok(work[route] > 100, `${route} did its work: ${JSON.stringify(work)} in ${duration} ms`);
    const diff = points(scope.busyMs) - points(work[route]);
    const tolerance = TOLERANCE + points(lostMs);
    assert.ok(Math.abs(diff) <= tolerance, `${name}: ${points(scope.busyMs).toFixed(1)} points, its work ${points(work[route]).toFixed(1)}, tolerance ${tolerance.toFixed(1)} (scopes: ${seen})`);
  }
  assert.ok(!JSON.stringify(report).includes('secret'), 'query strings never reach the report');
  const ids = /[\da-f]{8}-[\da-f]{4}-|\/\d{3,}|[\da-f]{24}/;
  for (const s of report.elu.scopes) assert.doesNotMatch(s.name, ids, 'ids are collapsed in names');
}

test('node:http, zero-code: each route its own scope, ids collapsed, within 3 points of its work', async () => {
  const result = await run('http', { slow: '', json: '', cpu: '' });
  assertRoutes(result, { slow: 'GET /slow/:id', json: 'GET /json/:id', cpu: 'GET /cpu/:id' });
});

test('Express 5: the route templates of the app and its mounted router are the names', async () => {
  const result = await run('express', { slow: '/api', json: '/api', cpu: '' });
  assertRoutes(result, { slow: 'GET /api/slow/:request', json: 'GET /api/json/:doc', cpu: 'GET /cpu/:n' });
});

test('Express 4: the same', async () => {
  const result = await run('express4', { slow: '/api', json: '/api', cpu: '' });
  assertRoutes(result, { slow: 'GET /api/slow/:request', json: 'GET /api/json/:doc', cpu: 'GET /cpu/:n' });
});

test('Fastify 5: the route templates, with their prefix, are the names', async () => {
  const result = await run('fastify', { slow: '/api', json: '/api', cpu: '' });
  assertRoutes(result, { slow: 'GET /api/slow/:request', json: 'GET /api/json/:doc', cpu: 'GET /cpu/:n' });
});

test('Koa with @koa/router: no template is cheap to get, so the collapsed paths are the names', async () => {
  const result = await run('koa', { slow: '/api', json: '/api', cpu: '' });
  assertRoutes(result, { slow: 'GET /api/slow/:id', json: 'GET /api/json/:id', cpu: 'GET /cpu/:id' });
});

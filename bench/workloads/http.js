'use strict';
// A node:http server with five routes, each handled in its own scope, under a load generator
// in another process on 127.0.0.1. The measure is the server's CPU time (user + system, all
// its threads) per request over the timed phase, so the load generator's speed hardly matters.

const http = require('node:http');
const path = require('node:path');
const { fork } = require('node:child_process');
const { once } = require('node:events');

const ROUTES = ['/r0', '/r1', '/r2', '/r3', '/r4'];
const CONCURRENCY = 8;
const WARMUP = 0.1;

function handle(req, res) {
  const body = JSON.stringify({ route: req.url, at: Date.now() });
  res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

async function run(cfg, requests) {
  const server = http.createServer((req, res) => {
    if (ROUTES.includes(req.url)) cfg.scope(req.url, () => handle(req, res));
    else res.writeHead(404).end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const warm = Math.max(1, Math.round(requests * WARMUP));
  const args = [server.address().port, warm, requests, CONCURRENCY, ROUTES.length].map(String);
  const gen = fork(path.join(__dirname, 'loadgen.js'), args, { execArgv: [] });
  const exited = once(gen, 'exit');

  await once(gen, 'message'); // warmed up
  global.gc();
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  gen.send('go');
  const [done] = await once(gen, 'message');
  const cpu = process.cpuUsage(cpu0);
  const wallNs = Number(process.hrtime.bigint() - t0);
  server.close();
  const [code] = await exited;
  if (code !== 0 || done.failed !== 0) throw new Error(`load generator: exit ${code}, ${done.failed} failed requests`);
  return { events: requests, ns: (cpu.user + cpu.system) * 1000, wallNs, clientNs: done.ns };
}

module.exports = {
  name: 'http',
  describe: (events) =>
    `node:http, ${ROUTES.length} routes as scopes, ${events.toLocaleString('en')} keep-alive requests ` +
    `(${CONCURRENCY} concurrent) from another process, server CPU`,
  unit: 'ns/request',
  events: 2e4,
  scopes: ROUTES,
  target: { overheadNs: 3000, ratio: 4 },
  run,
};

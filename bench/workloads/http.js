'use strict';
// A node:http server with five routes, each handled in its own scope, under a load generator
// in another process on 127.0.0.1. The measure is the server's CPU time (user + system, all
// its threads) per request, so the load generator's speed hardly matters.

const http = require('node:http');
const path = require('node:path');
const { fork } = require('node:child_process');
const { once } = require('node:events');
const { BATCHES } = require('./batches');

const ROUTES = ['/r0', '/r1', '/r2', '/r3', '/r4'];
const CONCURRENCY = 8;
const WARMUP_BATCHES = 5; // http's JIT settles after some thousand requests, not one batch

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
  // Under valgrind the server runs 30–50× slower: a keep-alive socket idle past Node's 5 s while
  // the batches are handed over would be closed as the load generator reuses it.
  server.keepAliveTimeout = 600e3;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const perBatch = Math.max(1, Math.round(requests / BATCHES));
  const args = [server.address().port, perBatch * WARMUP_BATCHES, perBatch, BATCHES, CONCURRENCY, ROUTES.length];
  const gen = fork(path.join(__dirname, 'loadgen.js'), args.map(String), { execArgv: [] });
  const exited = once(gen, 'exit');

  await once(gen, 'message'); // warmed up
  const batches = [];
  let failed = 0;
  for (let b = 0; b < BATCHES; b++) {
    const cpu0 = process.cpuUsage();
    gen.send('go');
    const [done] = await once(gen, 'message');
    const cpu = process.cpuUsage(cpu0);
    batches.push((cpu.user + cpu.system) * 1000);
    failed += done.failed;
  }
  server.close();
  const [code] = await exited;
  if (code !== 0 || failed !== 0) throw new Error(`load generator: exit ${code}, ${failed} failed requests`);
  return { events: perBatch * BATCHES, warmupEvents: perBatch * WARMUP_BATCHES, batches };
}

module.exports = {
  name: 'http',
  describe: (events) =>
    `node:http, ${ROUTES.length} routes as scopes, ${events.toLocaleString('en')} keep-alive requests ` +
    `(${CONCURRENCY} concurrent) from another process, server CPU`,
  unit: 'ns/request',
  events: 2e4,
  scopes: ROUTES,
  target: { overheadNs: 3000, ratio: 4, fullShare: 0.03 },
  configs: ['nohook', 'hooks3', 'hooks4', 'purejs', 'rloop', 'full', 'autohttp'],
  run,
};

'use strict';
// The app bench/metrics.js scrapes: rloop's endpoint and, beside it, prom-client's default
// metrics served by the app's own http server. States on request: idle, busy (5 ms callbacks
// back to back, the loop turning between them), blocked (one long callback).

const http = require('node:http');
const { performance } = require('node:perf_hooks');
const promClient = require('prom-client');
const rloop = require('..');

const mon = rloop.start({ metrics: { port: 0 } });
promClient.collectDefaultMetrics();
const server = http.createServer(async (req, res) => {
  const body = await promClient.register.metrics();
  res.setHeader('Content-Type', promClient.register.contentType);
  res.end(body);
});

function spin(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

let busy = false;
function work() {
  if (!busy) return;
  rloop.scope('work', () => spin(5));
  setImmediate(work);
}

process.on('message', (m) => {
  if (m.state === 'busy') {
    busy = true;
    setImmediate(work);
  } else if (m.state === 'idle') busy = false;
  else if (m.state === 'blocked') {
    process.send({ blocking: true });
    rloop.scope('blocker', () => spin(m.ms));
  }
  if (m.mark) process.send({ activeMs: performance.eventLoopUtilization().active });
  else if (m.state) process.send({ state: m.state });
});
server.listen(0, '127.0.0.1', () => process.send({ rloop: mon.metrics.port, prom: server.address().port }));

'use strict';
// A small app with three scopes — two HTTP routes and a background job — under a load
// generator on 127.0.0.1. Prints live per-scope ELU each second, then the totals.

const http = require('node:http');
const rloop = require('..');

const SECONDS = Number(process.env.DEMO_SECONDS || 6);

function spin(ms) {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

const routes = {
  '/users': () => spin(2), // a cheap route
  '/report': () => spin(8), // an expensive one
};

const mon = rloop.start({ windowMs: 1000 });

const server = http.createServer((req, res) => {
  const handler = routes[req.url];
  if (!handler) return res.writeHead(404).end();
  rloop.scope(`route:${req.url}`, () => {
    handler();
    setImmediate(() => res.end('ok'));
  }, { key: `${req.method} ${req.url} #${req.headers['x-id']}` });
});

// A background job: 50 ms of work every 500 ms, through a timer and a promise.
const job = setInterval(() => rloop.scope('job:cleanup', () => {
  spin(30);
  Promise.resolve().then(() => spin(20));
}), 500);

const pct = (x) => `${(x * 100).toFixed(1).padStart(5)} %`;
mon.on('window', (w) => {
  const parts = w.scopes.map((s) => `${s.name} ${pct(s.elu)}${s.keys ? ` (p99 ${s.keys.p99Ms.toFixed(1)} ms)` : ''}`);
  console.log(`thread ${pct(w.thread.elu)} | ${parts.join(' | ')} | unattributed ${pct(w.unattributed.elu)}`);
});

server.listen(0, '127.0.0.1', () => {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  let id = 0;
  const fire = () => {
    const url = id % 4 === 0 ? '/report' : '/users';
    http
      .get({ host: '127.0.0.1', port: server.address().port, path: url, agent, headers: { 'x-id': id++ } }, (res) => res.resume())
      .on('error', () => {}); // requests still in flight when the demo ends
  };
  const load = setInterval(fire, 10);
  setTimeout(() => {
    clearInterval(load);
    clearInterval(job);
    agent.destroy();
    server.close();
    const t = mon.totals();
    mon.stop();
    console.log('\ntotals since start:');
    for (const s of t.scopes) console.log(`  ${s.name.padEnd(16)} ${s.busyMs.toFixed(0).padStart(6)} ms busy in ${s.calls} callbacks`);
    console.log(`  ${'(unattributed)'.padEnd(16)} ${t.unattributed.busyMs.toFixed(0).padStart(6)} ms`);
  }, SECONDS * 1000 + 100);
});

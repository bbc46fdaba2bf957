'use strict';
// Scrape cost and latency: rloop's endpoint (a Rust thread) against prom-client's default
// metrics served by the app's own loop, scraped in turn from this process, the app idle,
// busy (5 ms callbacks back to back) and blocked (a 3 s callback). Cost on the event loop:
// the app's loop active time over `--scrapes` scrapes, less the same span unscraped.
//
//   node bench/metrics.js [--rounds N] [--scrapes N]

const path = require('node:path');
const http = require('node:http');
const { fork } = require('node:child_process');
const { parseArgs } = require('node:util');
const { summarize } = require('./stats');

const { values: o } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, scrapes: { type: 'string', default: '50' } } });
const rounds = Number(o.rounds);
const scrapes = Number(o.scrapes);
if (!(Number.isInteger(rounds) && rounds > 0)) throw new RangeError(`--rounds must be a positive integer, got ${o.rounds}`);
if (!(Number.isInteger(scrapes) && scrapes > 0)) throw new RangeError(`--scrapes must be a positive integer, got ${o.scrapes}`);

const TIMEOUT_MS = 1000; // a scrape slower than this failed (Prometheus' default timeout is 10 s; 1 s keeps the bench short)

function get(port) {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/metrics', agent: false, timeout: TIMEOUT_MS }, (res) => {
      res.resume().on('end', () => resolve(performance.now() - t0));
    });
    req.on('timeout', () => req.destroy()).on('error', () => resolve(null));
  });
}

const app = fork(path.join(__dirname, 'metrics-app.js'), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
const ask = (m) => new Promise((resolve) => { app.once('message', resolve); app.send(m); });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function latencies(port, n) {
  const out = [];
  for (let i = 0; i < n; i++) out.push(await get(port));
  return out;
}

async function main() {
  const ports = await new Promise((r) => app.once('message', r));
  const lat = {};
  const cost = { rloop: [], prom: [] };
  const add = (key, xs) => { (lat[key] ??= []).push(...xs); };
  for (let r = 0; r < rounds; r++) {
    const order = r % 2 ? ['prom', 'rloop'] : ['rloop', 'prom'];
    await ask({ state: 'idle' });
    for (const which of order) {
      const a = (await ask({ mark: true })).activeMs;
      const t0 = performance.now();
      add(`idle ${which}`, await latencies(ports[which], scrapes));
      const span = performance.now() - t0;
      const b = (await ask({ mark: true })).activeMs;
      await sleep(span);
      const c = (await ask({ mark: true })).activeMs;
      cost[which].push(((b - a) - (c - b)) * 1e3 / scrapes); // µs of loop per scrape
    }
    await ask({ state: 'busy' });
    for (const which of order) add(`busy ${which}`, await latencies(ports[which], scrapes));
    await ask({ state: 'idle' });
    for (const which of order) {
      const blocked = ask({ state: 'blocked', ms: 3000 });
      await sleep(100);
      add(`blocked ${which}`, await latencies(ports[which], 2));
      await blocked;
      await new Promise((res) => app.once('message', res)); // its 'state' reply, after the block
    }
  }
  app.kill();
  const fmt = (x) => (x === undefined ? '-' : x < 10 ? x.toFixed(2) : x.toFixed(0));
  console.log(`scrape latency, ms (${rounds} rounds × ${scrapes} scrapes; blocked: 2 per round, ${TIMEOUT_MS} ms timeout)`);
  console.log('state    endpoint      p50 [95% CI]            p99    answered');
  for (const [key, xs] of Object.entries(lat)) {
    const ok = xs.filter((x) => x !== null).sort((a, b) => a - b);
    const s = ok.length ? summarize(ok) : null;
    const p99 = ok.length ? ok[Math.min(ok.length - 1, Math.floor(ok.length * 0.99))] : undefined;
    const [state, which] = key.split(' ');
    const name = which === 'rloop' ? 'rloop' : 'prom-client';
    console.log(`${state.padEnd(8)} ${name.padEnd(12)} ${s ? `${fmt(s.median)} [${fmt(s.ci95[0])}–${fmt(s.ci95[1])}]` : 'none'}`.padEnd(46) + `${fmt(p99).padStart(6)}    ${ok.length}/${xs.length}`);
  }
  console.log('\nloop time per scrape, app idle, µs (median of rounds [min–max])');
  for (const [which, xs] of Object.entries(cost)) {
    const s = summarize(xs);
    console.log(`${(which === 'rloop' ? 'rloop' : 'prom-client').padEnd(12)} ${s.median.toFixed(0)} [${s.min.toFixed(0)}–${s.max.toFixed(0)}]`);
  }
}

main().catch((e) => {
  app.kill();
  console.error(e);
  process.exitCode = 1;
});

'use strict';
// A real Prometheus server (Debian package `prometheus`, .ci/run installs it) scraping the
// endpoint of an app with three scopes of known busy work: each scope's ELU as Prometheus
// computes it from rloop's counters matches the truth measured in the app; scrapes go on, and
// name the blocker, while the app's loop is blocked for 2 s; with a ranking that changes
// every second, no counter resets.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const net = require('node:net');
const { fork, spawn } = require('node:child_process');
const { sleep } = require('../fixtures/helpers');

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function next(child) {
  return new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`app exited with ${code}`)));
  });
}

async function query(promPort, q) {
  const res = await fetch(`http://127.0.0.1:${promPort}/api/v1/query?query=${encodeURIComponent(q)}`);
  const body = await res.json();
  if (body.status !== 'success') throw new Error(`${q}: ${JSON.stringify(body)}`);
  return body.data.result;
}

async function until(what, fn, ms = 30000) {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(250);
  }
}

/** A Prometheus server scraping 127.0.0.1:`port` every `interval`, its data in `dir`; `{ promPort, prom }`. */
async function prometheus(dir, port, interval) {
  const promPort = await freePort();
  fs.writeFileSync(path.join(dir, 'prometheus.yml'), [
    `global: { scrape_interval: ${interval}, scrape_timeout: 400ms }`,
    'scrape_configs:',
    `  - job_name: app`,
    `    static_configs: [{ targets: ['127.0.0.1:${port}'] }]`,
    '',
  ].join('\n'));
  const prom = spawn('prometheus', [
    `--config.file=${path.join(dir, 'prometheus.yml')}`, `--storage.tsdb.path=${path.join(dir, 'data')}`,
    `--web.listen-address=127.0.0.1:${promPort}`, '--log.level=error',
  ], { stdio: ['ignore', 'ignore', 'inherit'] });
  await until('a first scrape', async () => ((await query(promPort, 'up{job="app"}'))[0]?.value[1] === '1' ? true : undefined));
  return { promPort, prom };
}

async function stop(app, prom, dir) {
  app.kill();
  if (prom) {
    prom.kill();
    await new Promise((r) => prom.once('exit', r));
  }
  fs.rmSync(dir, { recursive: true, force: true });
}

test('Prometheus scrapes per-scope ELU within 3 points of the truth, and scrapes through a blocked loop', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-prom-'));
  const app = fork(path.join(__dirname, '..', 'fixtures', 'metrics-app.js'), { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let prom;
  try {
    const { port } = await next(app);
    let promPort;
    ({ promPort, prom } = await prometheus(dir, port, '1s'));
    await sleep(12000);
    const truth = await new Promise((resolve) => { app.send('truth'); app.once('message', resolve); });
    // ELU since start, from rloop's counters: a scope's busy seconds over the loop's active + idle.
    const elu = await query(promPort, 'rloop_scope_busy_seconds_total{job="app",thread="0"} / on(thread) group_left sum by (thread) (nodejs_eventloop_time_seconds_total{job="app"})');
    for (const scope of ['a', 'b', 'c']) {
      const got = Number(elu.find((r) => r.metric.scope === scope)?.value[1]);
      const want = truth.spun[scope] / truth.elapsedMs;
      assert.ok(Math.abs(got - want) <= 0.03, `${scope}: Prometheus ${got}, truth ${want}`);
    }

    app.send('block');
    const { blockedMs } = await next(app);
    assert.ok(blockedMs >= 2000);
    await sleep(1500);
    const window = '6s';
    const up = await query(promPort, `min_over_time(up{job="app"}[${window}])`);
    assert.strictEqual(up[0]?.value[1], '1', 'every scrape of the last seconds, the block included, succeeded');
    const scrapes = await query(promPort, `count_over_time(up{job="app"}[${window}])`);
    assert.ok(Number(scrapes[0].value[1]) >= 4, `scrapes in ${window}: ${scrapes[0].value[1]}`);
    const stalled = await query(promPort, `max_over_time(rloop_stall_in_progress_seconds{job="app"}[${window}])`);
    const blocker = stalled.find((r) => r.metric.scope === 'blocker');
    assert.ok(blocker && Number(blocker.value[1]) >= 1, `the blocker named while it blocked: ${JSON.stringify(stalled)}`);
  } finally {
    await stop(app, prom, dir);
  }
});

test('Prometheus sees no counter reset while a new scope overtakes the top 2 every second', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-prom-'));
  const app = fork(path.join(__dirname, '..', 'fixtures', 'metrics-app.js'), ['rotate'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  let prom;
  try {
    const { port } = await next(app);
    let promPort;
    ({ promPort, prom } = await prometheus(dir, port, '500ms'));
    app.send('rotate');
    const { phases } = await next(app);
    await sleep(1000);
    const q = (name) => query(promPort, `resets(${name}{job="app",thread="0"}[1m])`);
    const busy = await q('rloop_scope_busy_seconds_total');
    const scopes = busy.map((r) => r.metric.scope);
    assert.ok(scopes.includes('(other)') && phases.filter((p) => scopes.includes(p)).length >= 6, `series seen: ${scopes}`);
    for (const name of ['rloop_scope_busy_seconds_total', 'rloop_scope_calls_total', 'rloop_scopes_folded_total']) {
      const resets = (await q(name)).filter((r) => r.value[1] !== '0');
      assert.deepStrictEqual(resets.map((r) => r.metric), [], `${name}: counter resets`);
    }
  } finally {
    await stop(app, prom, dir);
  }
});

'use strict';
// The installed package on another platform (scripts/test-platforms.js runs this file with a
// real Node of that platform — arm under qemu-user, musl in an Alpine-like root — in a clean
// project where `rloop` comes from the npm tarballs): it loads its platform package's addon,
// attributes, reports a stall with the blocker's stack, captures a report, and serves metrics
// from its own thread (the platform's sockets and poll). Run in this repo,
// `rloop` is the package itself and the addon the local build.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { once } = require('node:events');
const { Worker } = require('node:worker_threads');
const rloop = require('rloop');

const spin = (ms) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

test(`loads the addon for ${process.arch} on Node ${process.versions.node}`, () => {
  const addons = Object.keys(require.cache).filter((f) => f.endsWith('.node'));
  assert.equal(addons.length, 1, addons.join(', '));
  // RLOOP_ADDON: the file the installed package must load (its platform package's).
  const want = process.env.RLOOP_ADDON;
  if (want) assert.equal(addons[0], path.resolve(want));
  else assert.match(path.basename(addons[0]), /^rloop\..+\.node$/);
});

test('attributes busy time to scopes, synchronous and through a timer', async () => {
  const mon = rloop.start({ windowMs: 100 });
  try {
    rloop.scope('x', () => spin(60));
    rloop.scope('later', () => setTimeout(() => spin(40), 1));
    await sleep(400);
    const busy = (name) => mon.totals().scopes.find((s) => s.name === name)?.busyMs ?? 0;
    assert.ok(busy('x') >= 55, JSON.stringify(mon.totals()));
    assert.ok(busy('later') >= 35, JSON.stringify(mon.totals()));
  } finally {
    mon.stop();
  }
});

test('a live reading counts the callback still running, after the loop idled and woke', async () => {
  const mon = rloop.start({ windowMs: 100 });
  try {
    for (let i = 0; i < 3; i++) await sleep(20); // idle marks and wakes, each a switch (src/attribution/ledger.rs)
    // A reading that never settles (a switch count left odd) would leave the running interval out.
    const live = rloop.scope('live', () => {
      spin(100);
      return mon.totals().scopes.find((s) => s.name === 'live');
    });
    assert.ok(live && live.busyMs >= 95, JSON.stringify(live));
  } finally {
    mon.stop();
  }
});

function blockOnArm(ms) {
  spin(ms);
}

test('a stall is reported with its scope and the blocker on its stack', async () => {
  const mon = rloop.start({ lagThresholdMs: 60 });
  const alive = setInterval(() => {}, 1000); // the 'lag' delivery keeps no loop alive
  try {
    // The stack sampler starts at the first stall (js/stalls/sampler.js): later ones have stacks.
    for (let i = 0; ; i++) {
      const lag = new Promise((resolve) => mon.once('lag', resolve));
      setTimeout(() => rloop.scope('blocker', () => blockOnArm(200)), 1);
      const e = await lag;
      if (e.stack || i === 20) {
        assert.ok(e.stack, `no stack in 20 stalls: ${JSON.stringify(e)}`);
        assert.equal(e.scope, 'blocker');
        assert.ok(e.lagMs >= 195, JSON.stringify(e));
        assert.ok(e.stack.some((f) => f.functionName === 'blockOnArm'), JSON.stringify(e.stack));
        return;
      }
      await sleep(50);
    }
  } finally {
    clearInterval(alive);
    mon.stop();
  }
});

test('a capture gives a report with the scopes, the stall and an HTML page', async () => {
  const mon = rloop.start({ windowMs: 100, lagThresholdMs: 60 });
  const alive = setInterval(() => {}, 1000); // nor does the capture's timer
  try {
    const pending = mon.capture({ durationMs: 700, heapStats: false });
    await sleep(50);
    rloop.scope('work', () => setTimeout(() => spin(150), 1));
    const report = await pending;
    assert.equal(report.schema, 'rloop-report/1');
    assert.equal(report.meta.arch, process.arch);
    const work = report.elu.scopes.find((s) => s.name === 'work');
    assert.ok(work && work.busyMs >= 140, JSON.stringify(report.elu.scopes));
    assert.ok(report.lag.events.some((e) => e.scope === 'work' && e.lagMs >= 140), JSON.stringify(report.lag.events));
    const html = rloop.renderHtml(report);
    assert.match(html, /^<!doctype html>/i);
    assert.ok(html.includes('work'));
  } finally {
    clearInterval(alive);
    mon.stop();
  }
});

// Scrapes until the stall in progress shows, then wakes the blocked main thread.
const SCRAPER = `
const http = require('node:http');
const { workerData: { port, seen }, parentPort } = require('node:worker_threads');
const scrape = () => http.get({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
  let body = '';
  res.setEncoding('utf8').on('data', (d) => (body += d)).on('end', () => {
    const line = body.split('\\n').find((l) => l.startsWith('rloop_stall_in_progress_seconds{') && l.includes('scope="held"'));
    if (!line) return setTimeout(scrape, 20);
    parentPort.postMessage(line);
    Atomics.store(seen, 0, 1);
    Atomics.notify(seen, 0);
  });
}).on('error', (e) => parentPort.postMessage(String(e)));
scrape();
`;

test('the metrics endpoint answers from its own thread while the loop is blocked', async () => {
  const mon = rloop.start({ lagThresholdMs: 50, metrics: { port: 0 } });
  const seen = new Int32Array(new SharedArrayBuffer(4));
  const worker = new Worker(SCRAPER, { eval: true, workerData: { port: mon.metrics.port, seen } });
  try {
    const line = once(worker, 'message');
    await once(worker, 'online');
    const woke = rloop.scope('held', () => Atomics.wait(seen, 0, 0, 30_000));
    assert.equal(woke, 'ok', 'the scrape that shows the stall came while the loop was blocked');
    const [scraped] = await line;
    assert.match(scraped, /^rloop_stall_in_progress_seconds\{thread="0",scope="held"\} [0-9.]+$/);
  } finally {
    await worker.terminate();
    mon.stop();
  }
});

'use strict';
// The metrics endpoint (start({ metrics })): served by a Rust thread, so it answers while the
// loop is blocked and names the blocker; options; the cardinality guard; hostile clients.

const test = require('node:test');
const assert = require('node:assert');
const net = require('node:net');
const http = require('node:http');
const fs = require('node:fs');
const { Worker } = require('node:worker_threads');
const { execFile } = require('node:child_process');
const rloop = require('../..');
const { busy, sleep } = require('../fixtures/helpers');
const { scrape, parse, series } = require('../fixtures/metrics-helpers');
const { monotonicMs } = require('../../js/native');

test('metrics options: TypeError or RangeError naming the option, nothing left running', () => {
  const cases = [
    [{ metrics: 9100 }, TypeError, /option 'metrics' must be an object/],
    [{ metrics: {} }, TypeError, /'metrics.port' is required/],
    [{ metrics: { port: 70000 } }, RangeError, /'metrics.port' must be between 0 and 65535/],
    [{ metrics: { port: '9100' } }, TypeError, /'metrics.port' must be an integer/],
    [{ metrics: { port: 0, host: 1 } }, TypeError, /'metrics.host' must be a string/],
    [{ metrics: { port: 0, path: 'metrics' } }, RangeError, /'metrics.path' must start with '\/'/],
    [{ metrics: { port: 0, path: '/a b' } }, RangeError, /'metrics.path'/],
    [{ metrics: { port: 0, topScopes: 0 } }, RangeError, /'metrics.topScopes' must be between 1 and 10000/],
    [{ metrics: { port: 0, tls: true } }, TypeError, /unknown metrics option 'tls'/],
    [{ metrics: { port: 0, token: 'short' } }, RangeError, /'metrics.token' must be 16 to 256 visible ASCII characters/],
    [{ metrics: { port: 0, token: 'a token with spaces in it' } }, RangeError, /'metrics.token'/],
    [{ metrics: { port: 0, token: 12345678901234567 } }, TypeError, /'metrics.token' must be a string/],
    [{ metrics: { port: 0, pprof: 'yes' } }, TypeError, /'metrics.pprof' must be true or false/],
  ];
  for (const [options, type, message] of cases) {
    assert.throws(() => rloop.start(options), (e) => e instanceof type && message.test(e.message), JSON.stringify(options));
  }
  assert.strictEqual(rloop.monitor(), null);
});

test('a port that cannot be listened on fails start(), before anything is installed', async () => {
  const taken = net.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => taken.once('listening', r));
  try {
    assert.throws(() => rloop.start({ metrics: { port: taken.address().port } }), /rloop: metrics: cannot listen on 127.0.0.1:\d+: .*in use/i);
    assert.strictEqual(rloop.monitor(), null);
  } finally {
    taken.close();
  }
});

test('the endpoint serves threads, scopes and slow I/O; stopping the monitor closes the port', async () => {
  const mon = rloop.start({ windowMs: 100, ioThresholdMs: 0, metrics: { port: 0 } });
  try {
    const { port, host, path } = mon.metrics;
    assert.deepStrictEqual([host, path], ['127.0.0.1', '/metrics']);
    rloop.scope('spin', () => busy(60));
    await new Promise((r) => http.get('http://127.0.0.1:1/', r).on('error', r)); // refused: slow I/O (threshold 0), failed
    await sleep(250);
    const res = await scrape(port);
    assert.strictEqual(res.status, 200);
    assert.match(res.headers['content-type'], /^text\/plain; version=0.0.4/);
    const m = parse(res.body);
    const busySpin = series(m, 'rloop_scope_busy_seconds_total', { thread: '0', scope: 'spin' });
    assert.ok(busySpin >= 0.06 && busySpin < 0.5, `spin: ${busySpin}s`);
    assert.strictEqual(series(m, 'rloop_scope_calls_total', { scope: 'spin' }), 1);
    const active = series(m, 'nodejs_eventloop_time_seconds_total', { nodejs_eventloop_state: 'active' });
    const idle = series(m, 'nodejs_eventloop_time_seconds_total', { nodejs_eventloop_state: 'idle' });
    assert.ok(active >= busySpin && idle > 0.1, `active ${active}, idle ${idle}`);
    const elu = series(m, 'nodejs_eventloop_utilization', { thread: '0' });
    assert.ok(elu >= 0 && elu <= 1, `elu ${elu}`);
    assert.strictEqual(series(m, 'rloop_slow_io_total', { type: 'http' }), 1, res.body);
    assert.strictEqual(series(m, 'rloop_slow_io_errors_total', { type: 'http' }), 1);
    assert.ok(series(m, 'rloop_slow_io_seconds_total', { type: 'http' }) >= 0);
    assert.ok(m.some((s) => s.name === 'rloop_stall_seconds_bucket' && s.labels.le === '+Inf'), 'the stall histogram');
    mon.stop();
    assert.strictEqual(mon.metrics, null);
    await assert.rejects(scrape(port), /ECONNREFUSED/, 'stopped: the port is closed');
  } finally {
    mon.stop();
  }
});

test('scrapes are answered while the loop is blocked for 2 s, and name the blocking scope', async () => {
  const mon = rloop.start({ windowMs: 200, metrics: { port: 0 } });
  const worker = new Worker(`${__dirname}/../fixtures/metrics-scraper.js`, { workerData: { port: mon.metrics.port, everyMs: 100, forMs: 2600 } });
  try {
    const results = new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    await new Promise((r) => worker.once('online', r));
    await sleep(300);
    const blockStart = monotonicMs(); // the scraper's clock
    rloop.scope('blocker', () => busy(2000));
    const blockEnd = monotonicMs();
    const scrapes = await results;
    // Begun and answered while the loop was blocked (the threshold past: a stall by then).
    const during = scrapes.filter((s) => s.at > blockStart + 100 && s.at + s.ms < blockEnd);
    assert.ok(during.length >= 5, `scrapes during the block: ${JSON.stringify(scrapes)}`);
    for (const s of during) assert.strictEqual(s.status, 200, JSON.stringify(s));
    const named = during.filter((s) => s.stalled?.scope === 'blocker');
    assert.ok(named.length >= during.length - 2, `the stall in progress named: ${JSON.stringify(during)}`);
    const last = named.at(-1).stalled.seconds;
    assert.ok(last > 1 && last <= 2.1, `it had lasted ${last}s`);
    assert.ok(Math.max(...during.map((s) => s.ms)) < 500, `answered promptly: ${during.map((s) => s.ms)}`);
  } finally {
    await worker.terminate();
    mon.stop();
  }
});

test('a worker\'s monitor is served by the endpoint the main thread started, under its threadId', async () => {
  const mon = rloop.start({ windowMs: 100, metrics: { port: 0 } });
  const worker = new Worker(`
    const { parentPort } = require('node:worker_threads');
    const rloop = require(${JSON.stringify(require.resolve('../..'))});
    const { busy } = require(${JSON.stringify(require.resolve('../fixtures/helpers'))});
    const mon = rloop.start({ windowMs: 100 });
    rloop.scope('in-worker', () => busy(80));
    parentPort.postMessage('done');
    parentPort.once('message', () => mon.stop());
  `, { eval: true });
  try {
    await new Promise((r) => worker.once('message', r));
    await sleep(250);
    const m = parse((await scrape(mon.metrics.port)).body);
    const id = String(worker.threadId);
    const spun = series(m, 'rloop_scope_busy_seconds_total', { thread: id, scope: 'in-worker' });
    assert.ok(spun >= 0.08 && spun < 0.5, `worker scope: ${spun}s`);
    assert.ok(series(m, 'nodejs_eventloop_time_seconds_total', { thread: id, nodejs_eventloop_state: 'active' }) >= spun);
    assert.ok(m.some((s) => s.name === 'nodejs_eventloop_time_seconds_total' && s.labels.thread === '0'), 'and the main thread');
    worker.postMessage('stop');
    await sleep(100);
    const after = parse((await scrape(mon.metrics.port)).body);
    assert.ok(!after.some((s) => s.labels.thread === id), 'a stopped monitor is no longer served');
  } finally {
    await worker.terminate();
    mon.stop();
  }
});

test('50 000 scopes never produce more than topScopes + 1 series per scope metric', async () => {
  const N = 20;
  const mon = rloop.start({ windowMs: 100, maxScopes: 100000, metrics: { port: 0, topScopes: N } });
  try {
    for (let i = 0; i < 50000; i++) rloop.scope(`route-${i}`, () => busy(i % 100 === 0 ? 0.5 : 0));
    await sleep(250);
    const m = parse((await scrape(mon.metrics.port)).body);
    for (const name of ['rloop_scope_busy_seconds_total', 'rloop_scope_calls_total', 'rloop_scope_utilization']) {
      const scopes = m.filter((s) => s.name === name).map((s) => s.labels.scope);
      assert.ok(scopes.length <= N + 1 && scopes.length >= N, `${name}: ${scopes.length} series`);
      assert.ok(scopes.includes('(other)'), name);
    }
    const calls = m.filter((s) => s.name === 'rloop_scope_calls_total').reduce((a, s) => a + s.value, 0);
    assert.ok(calls >= 50000, `every call counted, named or folded: ${calls}`);
    const folded = series(m, 'rloop_scopes_folded_total', { thread: '0' });
    assert.ok(folded >= 50000 - N, `folded ${folded}`);
  } finally {
    mon.stop();
  }
});

test('names past maxScopes: the endpoint counts every entry into one, as liveWindow() and totals() do', async () => {
  const mon = rloop.start({ maxScopes: 1, lag: false, io: false, metrics: { port: 0 } });
  try {
    rloop.scope('kept', () => {});
    for (let i = 0; i < 300; i++) rloop.scope(`past-${i}`, () => {}); // the addon is asked for the first only
    const m = parse((await scrape(mon.metrics.port)).body);
    assert.strictEqual(series(m, 'rloop_scopes_folded_total', { thread: '0' }), 300);
    assert.strictEqual(mon.totals().scopesOverflowed, 300);
    assert.strictEqual(mon.liveWindow().scopesOverflowed, 300);
  } finally {
    mon.stop();
  }
});

function threadCount() {
  return fs.readdirSync('/proc/self/task').length;
}

test('hostile clients: slowloris, garbage and 1 000 parallel scrapes; bounded threads and memory, the loop untouched', async (t) => {
  const mon = rloop.start({ metrics: { port: 0 } });
  try {
    const port = mon.metrics.port;
    const threads = threadCount();
    const rss = process.memoryUsage().rss;
    const elu = performance.eventLoopUtilization();
    const out = await new Promise((resolve, reject) => {
      execFile(process.execPath, [`${__dirname}/../fixtures/metrics-attacker.js`, String(port)], { timeout: 60000 }, (e, stdout) => (e ? reject(e) : resolve(stdout)));
    });
    const loop = performance.eventLoopUtilization(elu).utilization;
    const outcomes = JSON.parse(out);
    const ok = outcomes.filter((s) => s === 200).length;
    t.diagnostic(`parallel scrapes answered: ${ok}/1000; this loop's ELU meanwhile ${loop.toFixed(4)}`);
    // Past 512 open connections the oldest still unsent after 1 s is reset: slowloris first,
    // then scrapes the attacker's own busy loop has not sent yet.
    assert.ok(ok >= 800, `parallel scrapes answered: ${ok}/1000 (${[...new Set(outcomes)]})`);
    assert.ok(threadCount() <= threads, `threads ${threads} -> ${threadCount()}: one serving thread, whatever the clients`);
    assert.ok(process.memoryUsage().rss - rss < 32 * 2 ** 20, `memory: +${((process.memoryUsage().rss - rss) / 2 ** 20).toFixed(1)} MiB`);
    assert.ok(loop < 0.05, `the loop answered none of it: ELU ${loop}`);
    assert.strictEqual((await scrape(port)).status, 200, 'still serving after the attack');
  } finally {
    mon.stop();
  }
});

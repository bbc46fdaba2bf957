'use strict';
// A worker that scrapes the endpoint every `everyMs` for `forMs` while the main thread may be
// blocked, and posts what each scrape got: when it began (native.monotonicMs()), latency, status,
// the stall in progress.

const { workerData, parentPort } = require('node:worker_threads');
const { scrape, parse } = require('./metrics-helpers');
const { monotonicMs } = require('../js/native'); // one clock for both threads: each timeOrigin read the wall clock at its own start

const { port, everyMs, forMs } = workerData;
const start = performance.now();
const results = [];

async function run() {
  while (performance.now() - start < forMs) {
    const t = performance.now();
    try {
      const r = await scrape(port);
      const s = parse(r.body).find((x) => x.name === 'rloop_stall_in_progress_seconds' && x.labels.thread === '0');
      results.push({ at: monotonicMs() - (performance.now() - t), ms: performance.now() - t, status: r.status, stalled: s && { scope: s.labels.scope, seconds: s.value } });
    } catch (e) {
      results.push({ at: monotonicMs() - (performance.now() - t), ms: performance.now() - t, error: String(e) });
    }
    await new Promise((r) => setTimeout(r, Math.max(0, everyMs - (performance.now() - t))));
  }
  parentPort.postMessage(results);
}
run();

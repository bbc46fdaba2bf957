'use strict';
// HTML report at scale; the targets are < 500 ms to render and < 2 MB of page. `node bench/html.js`
// builds a report holding a 100 k-sample profile (analyzed by js/analyze/index.js, flame tree
// included), 10 k slow I/O events over 3 000 targets, 1 000 stalls and 50 scopes over 60
// windows (test/fixtures/synthetic-reports.js), then times renderHtml() and prints ms and bytes.

const { renderHtml } = require('../js/report/html');
const { scaleReport } = require('../test/fixtures/synthetic-reports');
const { summarize } = require('./stats');

const RUNS = 15;
const round = (x) => Math.round(x * 10) / 10;

let t = performance.now();
const report = scaleReport({ samples: 100000, ioEvents: 10000 });
const buildMs = performance.now() - t;

const times = [];
let html = '';
for (let i = 0; i < RUNS; i++) {
  t = performance.now();
  html = renderHtml(report);
  times.push(performance.now() - t);
}
const warm = summarize(times.slice(1));
const bytes = Buffer.byteLength(html);

console.log(`report: ${report.profile.analysis.samples} samples, ${report.io.events.length} slow I/O events, `
  + `${report.lag.events.length} stalls, ${report.elu.scopes.length} scopes, ${report.elu.windows.length} windows, `
  + `flame tree ${report.profile.flame.nodes} nodes (built in ${round(buildMs)} ms)`);
console.log(`renderHtml: first ${round(times[0])} ms, then median ${round(warm.median)} ms (MAD ${round(warm.mad)}, `
  + `${round(warm.min)}–${round(warm.max)}) over ${warm.n} runs; target < 500 ms`);
console.log(`page: ${bytes} bytes (${round(bytes / 1024 / 1024)} MB); target < 2 MB`);

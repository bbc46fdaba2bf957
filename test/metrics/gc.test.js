'use strict';
// Garbage collections by kind in the metrics: the endpoint's nodejs_gc_duration_seconds{kind}
// (prom-client's name), OpenTelemetry's v8js.gc.duration with v8js.gc.type (the semantic
// convention's), each major collection forced here counted once; beside prom-client's own
// default metrics, the app's GC series stays and rloop's adapter adds the rest.

const test = require('node:test');
const assert = require('node:assert');
const v8 = require('node:v8');
const vm = require('node:vm');
const promClient = require('prom-client');
const { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } = require('@opentelemetry/sdk-metrics');
const rloop = require('../..');
const { sleep } = require('../fixtures/helpers');
const { scrape, parse, series } = require('../fixtures/metrics-helpers');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc'); // a major collection each call

// First: prom-client's default metrics (below) observe collections for good.

/** The Immediates Node's performance observers queued (perf_hooks delivers entries so) while `fn` ran. */
async function observerImmediates(fn) {
  const seen = [];
  const hook = require('node:async_hooks').createHook({
    init: (id, type) => { if (type === 'Immediate' && /internal\/perf\/observe/.test(new Error().stack)) seen.push(id); },
  }).enable();
  try {
    await fn();
  } finally {
    hook.disable();
  }
  return seen.length;
}

test('no metrics read on the thread: no collection observed, nothing of it in the app\'s hooks', async () => {
  const collect = async () => {
    gc();
    gc();
    await sleep(20);
  };
  let mon = rloop.start();
  try {
    assert.strictEqual(await observerImmediates(collect), 0);
  } finally {
    mon.stop();
  }
  mon = rloop.start({ metrics: { port: 0 } });
  try {
    assert.ok(await observerImmediates(collect) > 0, 'with metrics: the observer\'s deliveries, seen as the test expects');
  } finally {
    mon.stop();
  }
});

test('major collections forced: counted once each, on the endpoint and in OpenTelemetry', async () => {
  const mon = rloop.start({ metrics: { port: 0 } });
  const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3600000 });
  const provider = new MeterProvider({ readers: [reader] });
  const otel = rloop.otel(provider);
  try {
    // No series for a kind before its first collection.
    const count = async () => parse((await scrape(mon.metrics.port)).body)
      .find((s) => s.name === 'nodejs_gc_duration_seconds_count' && s.labels.kind === 'major' && s.labels.thread === '0')?.value ?? 0;
    await sleep(50); // collections of the start, delivered
    const before = await count();
    await reader.collect(); // OpenTelemetry records from here
    for (let i = 0; i < 5; i++) gc();
    await sleep(50); // Node delivers the entries on the loop
    const body = parse((await scrape(mon.metrics.port)).body);
    const after = series(body, 'nodejs_gc_duration_seconds_count', { thread: '0', kind: 'major' });
    assert.ok(after - before >= 5 && after - before <= 6, `5 forced major collections: ${before} → ${after}`);
    assert.ok(series(body, 'nodejs_gc_duration_seconds_sum', { thread: '0', kind: 'major' }) > 0);
    const buckets = body.filter((s) => s.name === 'nodejs_gc_duration_seconds_bucket' && s.labels.kind === 'major');
    assert.deepStrictEqual(buckets.map((b) => b.labels.le), ['0.001', '0.01', '0.1', '1', '2', '5', '+Inf']);
    assert.ok(buckets.every((b, i) => i === 0 || b.value >= buckets[i - 1].value), 'cumulative');
    assert.strictEqual(buckets.at(-1).value, after);

    const metrics = (await reader.collect()).resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'rloop').metrics;
    const m = metrics.find((x) => x.descriptor.name === 'v8js.gc.duration');
    assert.strictEqual(m.descriptor.unit, 's');
    const major = m.dataPoints.find((p) => p.attributes['v8js.gc.type'] === 'major');
    assert.ok(major?.value.count >= 5 && major.value.count <= after - before, `OpenTelemetry: ${major?.value.count} recorded, ${after - before} since`);
    assert.deepStrictEqual(major.value.buckets.boundaries, [0.001, 0.01, 0.1, 1, 2, 5]);
  } finally {
    otel.stop();
    await provider.shutdown();
    mon.stop();
  }
});

test('beside prom-client\'s default metrics: its GC series stays, rloop adds the rest', async () => {
  const mon = rloop.start();
  const registry = new promClient.Registry();
  promClient.collectDefaultMetrics({ register: registry });
  try {
    const prom = rloop.promClient(registry);
    gc();
    await sleep(50);
    const samples = parse(await registry.metrics());
    const gcSeries = samples.filter((s) => s.name === 'nodejs_gc_duration_seconds_count');
    assert.ok(gcSeries.length > 0 && gcSeries.every((s) => !('thread' in s.labels)), `prom-client's own: ${JSON.stringify(gcSeries)}`);
    assert.ok(samples.some((s) => s.name === 'rloop_scope_calls_total' || s.name === 'nodejs_eventloop_time_seconds_total'), 'rloop\'s series are there');
    prom.stop();
    assert.ok(parse(await registry.metrics()).some((s) => s.name === 'nodejs_gc_duration_seconds_count'), 'stop() leaves the app\'s metric');
  } finally {
    mon.stop();
  }
});

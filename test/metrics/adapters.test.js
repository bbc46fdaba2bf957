'use strict';
// rloop.promClient() and rloop.otel(): the OpenTelemetry SDK with a real reader and a
// prom-client registry get the same values as the endpoint, under the same names and labels.

const test = require('node:test');
const assert = require('node:assert');
const promClient = require('prom-client');
const { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } = require('@opentelemetry/sdk-metrics');
const rloop = require('../..');
const { busy, sleep } = require('../fixtures/helpers');
const { scrape, parse, series } = require('../fixtures/metrics-helpers');

test('the OpenTelemetry SDK and prom-client get the values the endpoint serves', async () => {
  const mon = rloop.start({ windowMs: 100, metrics: { port: 0 } });
  const registry = new promClient.Registry();
  const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3600000 });
  const provider = new MeterProvider({ readers: [reader] });
  const stallCount = async () => series(parse((await scrape(mon.metrics.port)).body), 'rloop_stall_seconds_count', { thread: '0' });
  const prom = rloop.promClient(registry);
  const stallsBefore = await stallCount();
  const otel = rloop.otel(provider);
  try {
    for (const [name, ms] of [['a', 30], ['b', 60], ['c', 90]]) rloop.scope(name, () => busy(ms));
    await sleep(50);
    rloop.scope('staller', () => busy(150)); // a stall: the histogram gets it once it has ended
    await sleep(250);
    const endpoint = parse((await scrape(mon.metrics.port)).body);
    const fromProm = parse(await registry.metrics());
    const { resourceMetrics } = await reader.collect();
    const otelMetrics = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'rloop').metrics;
    const otelValue = (name, attrs) => {
      const m = otelMetrics.find((x) => x.descriptor.name === name);
      const points = m.dataPoints.filter((p) => Object.entries(attrs).every(([k, v]) => p.attributes[k] === v));
      assert.strictEqual(points.length, 1, `${name} ${JSON.stringify(attrs)}`);
      return points[0].value;
    };
    for (const scope of ['a', 'b', 'c']) {
      const want = series(endpoint, 'rloop_scope_busy_seconds_total', { thread: '0', scope });
      assert.ok(want > 0.02, `${scope}: ${want}`);
      assert.strictEqual(series(fromProm, 'rloop_scope_busy_seconds_total', { thread: '0', scope }), want, `prom-client ${scope}`);
      assert.strictEqual(otelValue('rloop.scope.busy', { thread: '0', scope }), want, `OpenTelemetry ${scope}`);
      assert.strictEqual(otelValue('rloop.scope.calls', { thread: '0', scope }), series(endpoint, 'rloop_scope_calls_total', { scope }));
    }
    // The loop's active time grows as this test runs: OpenTelemetry's lies between two scrapes.
    const activeIn = (samples) => series(samples, 'nodejs_eventloop_time_seconds_total', { nodejs_eventloop_state: 'active' });
    const after = parse((await scrape(mon.metrics.port)).body);
    const otelActive = otelValue('nodejs.eventloop.time', { 'nodejs.eventloop.state': 'active' });
    assert.ok(activeIn(endpoint) <= otelActive && otelActive <= activeIn(after), 'the semantic convention\'s attribute');
    const otelElu = otelMetrics.find((x) => x.descriptor.name === 'nodejs.eventloop.utilization');
    assert.strictEqual(otelElu.descriptor.unit, '1');
    assert.ok(fromProm.some((s) => s.name === 'rloop_stall_seconds_bucket'), 'prom-client has the stall histogram');
    // OpenTelemetry's stall histogram: a Histogram recorded with each stall ended since otel().
    const histogram = () => {
      const m = otelMetrics.find((x) => x.descriptor.name === 'rloop.stall.duration');
      assert.strictEqual(m?.dataPoints.length, 1, 'one thread');
      return m.dataPoints[0].value;
    };
    const stalls = histogram();
    const stallsNow = await stallCount();
    assert.ok(stalls.count >= 1 && stalls.count <= stallsNow - stallsBefore, `${stalls.count} stalls recorded, ${stallsNow - stallsBefore} since otel()`);
    assert.ok(stalls.sum >= 0.15 * 0.95 && stalls.max >= 0.15 * 0.95, `the 150 ms stall: sum ${stalls.sum}, max ${stalls.max}`);
    assert.deepStrictEqual(stalls.buckets.boundaries, [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]);
    assert.strictEqual(otelMetrics.find((x) => x.descriptor.name === 'rloop.stall.duration').descriptor.unit, 's');
    const again = (await reader.collect()).resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'rloop').metrics;
    const count = again.find((x) => x.descriptor.name === 'rloop.stall.duration').dataPoints[0].value.count;
    assert.ok(count >= stalls.count && count - stalls.count <= (await stallCount()) - stallsNow, `each stall recorded once: ${stalls.count} then ${count}`);
    prom.stop();
    assert.strictEqual(await registry.metrics(), '\n', 'stop() removes what promClient() registered');
  } finally {
    otel.stop();
    await provider.shutdown();
    mon.stop();
  }
});

test('adapter options are checked, naming the option', () => {
  assert.throws(() => rloop.promClient(new promClient.Registry(), { topScopes: 0 }), (e) => e instanceof RangeError && /'topScopes'/.test(e.message));
  assert.throws(() => rloop.promClient({}), (e) => e instanceof TypeError && /needs a prom-client Registry/.test(e.message));
  assert.throws(() => rloop.otel({ nope: 1 }), (e) => e instanceof TypeError && /needs a MeterProvider/.test(e.message));
});

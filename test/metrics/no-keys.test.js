'use strict';
// Metrics expose no keys: a key names one request or message (a path, a user's id), so the
// endpoint, prom-client and OpenTelemetry give the per-key family by thread, scope and quantile
// only, and no key appears in any series.

const test = require('node:test');
const assert = require('node:assert');
const promClient = require('prom-client');
const { MeterProvider, PeriodicExportingMetricReader, InMemoryMetricExporter, AggregationTemporality } = require('@opentelemetry/sdk-metrics');
const rloop = require('../..');
const { busy, sleep } = require('../fixtures/helpers');
const { scrape, parse } = require('../fixtures/metrics-helpers');

const KEY = 'user-4711-secret';

test('no key reaches the endpoint, prom-client or OpenTelemetry; the per-key family has thread, scope and quantile', async () => {
  const mon = rloop.start({ windowMs: 1000, metrics: { port: 0 } });
  const registry = new promClient.Registry();
  const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE), exportIntervalMillis: 3600000 });
  const provider = new MeterProvider({ readers: [reader] });
  const prom = rloop.promClient(registry);
  const otel = rloop.otel(provider);
  try {
    // The per-key family is the last complete window's: keyed work, then read all three just
    // after that window closed, a whole window before the next close.
    for (let i = 0; i < 5; i++) rloop.scope('checkout', () => busy(1 + (i % 3)), { key: `${KEY}-${i}` });
    const closed = mon.history().length;
    while (mon.history().length === closed) await sleep(10);
    const body = (await scrape(mon.metrics.port)).body;
    const fromProm = await registry.metrics();
    const { resourceMetrics } = await reader.collect();
    const otelKeyed = resourceMetrics.scopeMetrics.find((s) => s.scope.name === 'rloop').metrics.find((m) => m.descriptor.name === 'rloop.scope.key.busy');

    for (const [who, text] of [['endpoint', body], ['prom-client', fromProm], ['OpenTelemetry', JSON.stringify(resourceMetrics)]]) {
      assert.ok(!text.includes(KEY), `${who} names a key`);
    }
    for (const [who, samples] of [['endpoint', parse(body)], ['prom-client', parse(fromProm)]]) {
      const keyed = samples.filter((s) => s.name === 'rloop_scope_key_busy_seconds');
      assert.deepStrictEqual(keyed.filter((s) => s.labels.scope === 'checkout').map((s) => s.labels.quantile).sort(), ['0.5', '0.99', '1'], `${who}: the checkout scope's keys, by quantile`);
      for (const s of keyed) assert.deepStrictEqual(Object.keys(s.labels).sort(), ['quantile', 'scope', 'thread'], `${who}: ${JSON.stringify(s.labels)}`);
    }
    const points = otelKeyed.dataPoints;
    assert.ok(points.some((p) => p.attributes.scope === 'checkout'), 'OpenTelemetry has the checkout scope\'s keys');
    for (const p of points) assert.deepStrictEqual(Object.keys(p.attributes).sort(), ['quantile', 'scope', 'thread'], JSON.stringify(p.attributes));
  } finally {
    prom.stop();
    otel.stop();
    mon.stop();
  }
});

'use strict';
// Stalls and slow I/O linked to traces, with the real OpenTelemetry SDK: in a span (the
// AsyncLocalStorage context manager, a tracer of sdk-trace-base), a stall's event and a slow
// call's carry that span's ids, and rloop.otelLogs() emits each as a log record (sdk-logs, an
// in-memory exporter) in the span's context, so the backend links it to the trace. Outside a
// span, no trace; after stop(), no records.

const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const http = require('node:http');
const { once } = require('node:events');
const api = require('@opentelemetry/api');
const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks');
const { BasicTracerProvider } = require('@opentelemetry/sdk-trace-base');
const { LoggerProvider, SimpleLogRecordProcessor, InMemoryLogRecordExporter } = require('@opentelemetry/sdk-logs');
const rloop = require('../..');
const { busy, primeStackSampler } = require('../fixtures/helpers');

const exporter = new InMemoryLogRecordExporter();
const loggerProvider = new LoggerProvider({ processors: [new SimpleLogRecordProcessor({ exporter })] });
const tracer = new BasicTracerProvider().getTracer('test');
let mon;
let server;
let logs;

before(async () => {
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  await primeStackSampler();
  mon = rloop.start({ lagThresholdMs: 50, ioThresholdMs: 150 });
  server = http.createServer((req, res) => setTimeout(() => res.end('late'), 250)).listen(0, '127.0.0.1');
  await once(server, 'listening');
  logs = rloop.otelLogs(loggerProvider);
});

after(() => {
  logs?.stop();
  mon?.stop();
  server?.close();
  api.context.disable();
});

function spinInScope(ms) {
  rloop.scope('blocker', () => busy(ms));
}

test('a stall in a span: its event and its log record carry the span', async () => {
  exporter.reset();
  const lag = once(mon, 'lag');
  let span;
  tracer.startActiveSpan('checkout', (s) => {
    span = s;
    spinInScope(200);
    s.end();
  });
  const [event] = await lag;
  const { traceId, spanId } = span.spanContext();
  assert.equal(event.scope, 'blocker');
  assert.deepEqual(event.trace, { traceId, spanId, traceFlags: 1 });
  const [record] = exporter.getFinishedLogRecords();
  assert.equal(record.eventName, 'rloop.stall');
  assert.equal(record.severityText, 'WARN');
  assert.match(String(record.body), /^event loop blocked for \d+ ms in blocker$/);
  assert.equal(record.spanContext?.traceId, traceId);
  assert.equal(record.spanContext?.spanId, spanId);
  assert.equal(record.attributes['rloop.scope'], 'blocker');
  assert.equal(record.attributes['code.function.name'], 'busy');
  assert.ok(record.attributes['rloop.lag_ms'] >= 150);
  // What else took its time, as the event says; the thread's CPU time is read on Linux.
  if (process.platform === 'linux') assert.equal(typeof event.cpuMs, 'number');
  assert.equal(record.attributes['rloop.cpu_ms'], event.cpuMs ?? undefined);
  assert.equal(record.attributes['rloop.gc_ms'], event.gc.reduce((sum, g) => sum + g.ms, 0));
});

test('a stall outside any span: no trace, a record all the same', async () => {
  exporter.reset();
  const lag = once(mon, 'lag');
  spinInScope(200);
  const [event] = await lag;
  assert.equal(event.trace, null);
  const [record] = exporter.getFinishedLogRecords();
  assert.equal(record.eventName, 'rloop.stall');
  assert.equal(record.spanContext, undefined);
});

test('a slow call issued in a span: its event and log records carry the span', async () => {
  exporter.reset();
  const ended = new Promise((resolve) => mon.on('slowIO', function onSlow(e) {
    if (e.type === 'http' && e.state === undefined) { // not the server's side of it (http-in)
      mon.off('slowIO', onSlow);
      resolve(e);
    }
  }));
  let span;
  await tracer.startActiveSpan('fetch-prices', async (s) => {
    span = s;
    await new Promise((resolve) => http.get(`http://127.0.0.1:${server.address().port}/prices`, (r) => r.resume().on('end', resolve)));
    s.end();
  });
  const event = await ended;
  const { traceId, spanId } = span.spanContext();
  assert.deepEqual(event.trace, { traceId, spanId, traceFlags: 1 });
  const records = exporter.getFinishedLogRecords().filter((r) => r.eventName === 'rloop.slow_io' && r.attributes['rloop.io.type'] === 'http');
  assert.ok(records.length >= 1, 'the slow call, pending then ended');
  for (const r of records) {
    assert.equal(r.spanContext?.traceId, traceId);
    assert.equal(r.attributes['http.request.method'], 'GET');
    assert.match(r.attributes['rloop.io.target'], /^127\.0\.0\.1:\d+\/prices$/);
  }
  assert.match(String(records.at(-1).body), /^slow http GET 127\.0\.0\.1:\d+\/prices: took \d+ ms$/);
});

test('after stop(), no records; without a running monitor, a TypeError', async () => {
  logs.stop();
  exporter.reset();
  const lag = once(mon, 'lag');
  spinInScope(200);
  await lag;
  assert.equal(exporter.getFinishedLogRecords().length, 0);
  assert.throws(() => rloop.otelLogs({}), (e) => e instanceof TypeError && /needs a LoggerProvider/.test(e.message));
  mon.stop();
  assert.throws(() => rloop.otelLogs(loggerProvider), (e) => e instanceof TypeError && /needs a running monitor/.test(e.message));
});

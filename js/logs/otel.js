'use strict';
// Stalls and slow I/O as OpenTelemetry log records, through the app's LoggerProvider: the given
// one, or the global one of @opentelemetry/api-logs (loaded only then). A record made in a span
// (the event's `trace`, js/trace.js) carries that span's context, so the backend links it to
// the trace; @opentelemetry/api, an optional peer dependency, builds that context.

const WARN = 13; // OpenTelemetry's SeverityNumber.WARN

/** A context holding the span `trace` names, or undefined (the record takes no trace). */
function contextOf(api, trace) {
  return trace ? api.trace.setSpanContext(api.ROOT_CONTEXT, { traceId: trace.traceId, spanId: trace.spanId, traceFlags: trace.traceFlags, isRemote: false }) : undefined;
}

/** Where the code that blocked or issued the call is (its innermost frame outside Node), as OpenTelemetry's code attributes. */
function codeAttributes(stack) {
  const frame = stack?.find((f) => !f.url.startsWith('node:'));
  if (frame === undefined) return {};
  return { 'code.function.name': frame.functionName, 'code.file.path': frame.url, 'code.line.number': frame.line ?? undefined };
}

/** What else took a stall's time, where known: the thread's CPU time, its quota's throttling, GC. */
function takenAttributes(e) {
  const known = (x) => typeof x === 'number' && Number.isFinite(x);
  return {
    ...(known(e.cpuMs) && { 'rloop.cpu_ms': e.cpuMs, 'rloop.cpu_from_ms': e.cpuFromMs }),
    ...(known(e.throttledMs) && { 'rloop.throttled_ms': e.throttledMs }),
    ...(Array.isArray(e.gc) && { 'rloop.gc_ms': e.gc.reduce((sum, g) => sum + g.ms, 0) }),
  };
}

function stallRecord(e) {
  const attributes = {
    'rloop.lag_ms': e.lagMs,
    'thread.id': e.thread,
    ...(e.scope !== null && { 'rloop.scope': e.scope }),
    ...(e.key !== null && { 'rloop.key': e.key }),
    ...codeAttributes(e.stack),
    ...takenAttributes(e),
  };
  const where = e.scope === null ? '(unattributed)' : e.scope;
  return { eventName: 'rloop.stall', timestamp: e.at, severityNumber: WARN, severityText: 'WARN', body: `event loop blocked for ${Math.round(e.lagMs)} ms in ${where}`, attributes };
}

function slowIoRecord(e) {
  const attributes = {
    'rloop.io.type': e.type,
    'rloop.io.target': e.target,
    'rloop.duration_ms': e.durationMs,
    ...(e.method && { 'http.request.method': e.method }),
    ...(e.status !== undefined && { 'http.response.status_code': e.status }),
    ...(e.error !== undefined && { 'error.type': e.error }),
    ...(e.scope !== null && { 'rloop.scope': e.scope }),
    ...(e.key !== null && { 'rloop.key': e.key }),
    ...codeAttributes(e.stack),
  };
  const state = e.state === 'pending' ? 'still pending after' : 'took';
  return { eventName: 'rloop.slow_io', timestamp: e.at, severityNumber: WARN, severityText: 'WARN', body: `slow ${e.type} ${e.method ?? ''} ${e.target}: ${state} ${Math.round(e.durationMs)} ms`.replace(/ {2,}/g, ' '), attributes };
}

/**
 * Emits monitor `monitor`'s stalls and slow I/O operations as log records; returns `{ stop() }`.
 * `loggerProvider`: the app's (default: @opentelemetry/api-logs' global one).
 */
function otelLogs(monitor, loggerProvider) {
  if (monitor === null || monitor.stopped) throw new TypeError('rloop: otelLogs() needs a running monitor: call rloop.start() first');
  const provider = loggerProvider ?? require('@opentelemetry/api-logs').logs.getLoggerProvider();
  if (typeof provider?.getLogger !== 'function') throw new TypeError('rloop: otelLogs() needs a LoggerProvider');
  const api = require('@opentelemetry/api');
  const logger = provider.getLogger('rloop');
  // The app's provider and exporters are the app's: one that throws must not throw into the
  // monitor's emit, which is the app's own event loop turn.
  const emit = (record, trace) => {
    try {
      logger.emit({ ...record, context: contextOf(api, trace) });
    } catch (e) {
      if (monitor.listenerCount('error') > 0) monitor.emit('error', e);
    }
  };
  const onLag = (e) => emit(stallRecord(e), e.trace);
  const onSlow = (e) => emit(slowIoRecord(e), e.trace);
  monitor.on('lag', onLag);
  monitor.on('slowIO', onSlow);
  return {
    stop() {
      monitor.off('lag', onLag);
      monitor.off('slowIO', onSlow);
    },
  };
}

module.exports = { otelLogs };

'use strict';
// The app's OpenTelemetry span active now, read through the globals @opentelemetry/api keeps
// (rloop never loads the app's OpenTelemetry): a stall's (js/stalls/stack-expression.js) and a
// slow I/O operation's (js/io/), so that each carries the trace it happened in.

/**
 * `{ traceId, spanId, traceFlags }` of the span active in the running context, or null (no
 * OpenTelemetry API registered, no span, an invalid one). Self-contained: the stack sampler
 * has the main thread evaluate its source, as an interrupt on top of the blocking code, which
 * may be a regular expression's: so no regular expression here.
 */
function activeTrace() {
  const api = globalThis[Symbol.for('opentelemetry.js.api.1')];
  if (api === undefined || api.context === undefined) return null;
  try {
    const span = api.context.active().getValue(Symbol.for('OpenTelemetry Context Key SPAN'));
    const sc = span?.spanContext();
    // Lowercase hex of `length` digits, not all zero (W3C Trace Context's valid ids).
    const id = (s, length) => {
      if (typeof s !== 'string' || s.length !== length) return false;
      let nonZero = false;
      for (let i = 0; i < length; i++) {
        const c = s.charCodeAt(i);
        if (!((c >= 48 && c <= 57) || (c >= 97 && c <= 102))) return false;
        nonZero ||= c !== 48;
      }
      return nonZero;
    };
    return sc && id(sc.traceId, 32) && id(sc.spanId, 16) ? { traceId: sc.traceId, spanId: sc.spanId, traceFlags: Number(sc.traceFlags) || 0 } : null;
  } catch {
    return null; // the app's context manager failed: no trace, never an error of the app's
  }
}

module.exports = { activeTrace };

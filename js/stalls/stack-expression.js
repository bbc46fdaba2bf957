'use strict';
// What the stack sampler (js/stalls/sampler-worker.js) has the main thread evaluate, as an interrupt on
// top of the blocking code: its own module, so a test can evaluate it as the sampler does.

const { activeTrace } = require('../trace');

const MAX_FRAMES = 32;

// Runs in the main thread. Call sites rather than a formatted stack: exact, and unaffected by
// an app's own Error.prepareStackTrace (restored at once, as is stackTraceLimit).
// It returns when it ran (epoch ms, comparable across threads): V8 serves the interrupt at its
// next check, at once in JS but only after most builtins and C++ return (src/stalls/blame.rs); and
// the OpenTelemetry span active in the blocking code (js/trace.js), if any.
// Its frames carry rloop's URL (isOwn()): a CPU profile that samples the interrupt shows it as
// rloop's, never as the app code that ran before a stall's blocker (js/stalls/from-profile.js).
const SAMPLER_URL = 'rloop:stack-sampler';
// The clock by perf_hooks' prototype: the app's fake timers may have replaced its now() (js/clock.js).
const EXPRESSION = `(() => {
  const perf = process.getBuiltinModule?.('perf_hooks').performance;
  const answered = perf ? perf.timeOrigin + Object.getPrototypeOf(perf).now.call(perf) : performance.timeOrigin + performance.now();
  const prepare = Error.prepareStackTrace, limit = Error.stackTraceLimit, holder = {};
  Error.prepareStackTrace = (_, calls) => calls;
  Error.stackTraceLimit = ${MAX_FRAMES + 2};
  try {
    Error.captureStackTrace(holder);
    const calls = holder.stack.slice(1).map((c) => [c.getFunctionName(), c.getFileName(), c.getLineNumber(), c.getColumnNumber()]);
    return [answered, calls, (${activeTrace})()];
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = limit;
  }
})()
//# sourceURL=${SAMPLER_URL}`;

module.exports = { EXPRESSION, SAMPLER_URL, MAX_FRAMES };

'use strict';
// What the stack samplers have the main thread run as an interrupt on top of the blocking code:
// `EXPRESSION`, evaluated through the inspector by the worker (js/stalls/sampler-worker.js), and
// `take`, called by the addon's own interrupt (src/stalls/interrupt.rs). Its own module, so a test
// can evaluate it as the sampler does.

const { activeTrace } = require('../trace');
const { redactStack } = require('../redact');

const MAX_FRAMES = 32;

// Its frames carry rloop's URL (isOwn()): a CPU profile that samples the interrupt shows it as
// rloop's, never as the app code that ran before a stall's blocker (js/stalls/from-profile.js).
const SAMPLER_URL = 'rloop:stack-sampler';

// Runs in the main thread; self-contained, as EXPRESSION holds its source. Call sites rather than
// a formatted stack: exact, and unaffected by an app's own Error.prepareStackTrace (restored at
// once, as is stackTraceLimit). The stack starts below `above`: the sampler's own frames are not
// in it. Returns when it ran (epoch ms, comparable across threads; V8 serves an interrupt at its
// next check, at once in JS but only after most builtins and C++ return: src/stalls/blame.rs),
// and the OpenTelemetry span active in the blocking code (js/trace.js), if any. The clock is
// perf_hooks' prototype's: the app's fake timers may have replaced its now() (js/clock.js).
function takeCalls(limit, above, trace) {
  const perf = process.getBuiltinModule?.('perf_hooks').performance;
  const answered = perf ? perf.timeOrigin + Object.getPrototypeOf(perf).now.call(perf) : performance.timeOrigin + performance.now();
  const prepare = Error.prepareStackTrace, saved = Error.stackTraceLimit, holder = {};
  Error.prepareStackTrace = (_, calls) => calls;
  Error.stackTraceLimit = limit;
  try {
    Error.captureStackTrace(holder, above);
    const calls = holder.stack.map((c) => [c.getFunctionName(), c.getFileName(), c.getLineNumber(), c.getColumnNumber()]);
    return [answered, calls, trace()];
  } finally {
    Error.prepareStackTrace = prepare;
    Error.stackTraceLimit = saved;
  }
}

const EXPRESSION = `(function sample() {
  return (${takeCalls})(${MAX_FRAMES + 2}, sample, ${activeTrace});
})()
//# sourceURL=${SAMPLER_URL}`;

function toFrame([functionName, file, line, column]) {
  const url = file && file.startsWith('/') ? `file://${file}` : file ?? '';
  return { functionName: functionName || '(anonymous)', url, line: line ?? null, column: column ?? null };
}

/**
 * The frames a stall keeps of `takeCalls`' calls: the evaluated script's own frame and native
 * frames (no file) left out, redacted before the addon keeps them (it writes them itself when
 * JS cannot: src/capture/report.rs).
 */
function framesOf(calls) {
  return redactStack(calls.filter(([, file]) => file && file !== SAMPLER_URL).slice(0, MAX_FRAMES).map(toFrame));
}

/** The interrupt's answer: `[answered, frames, trace]`. */
function take() {
  const [answered, calls, trace] = takeCalls(MAX_FRAMES + 2, take, activeTrace);
  return [answered, framesOf(calls), trace];
}

module.exports = { EXPRESSION, SAMPLER_URL, framesOf, take };

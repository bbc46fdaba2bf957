'use strict';
// Runs in a worker: takes the main thread's stack while a stall blocks it. The addon's watch
// thread notices the stall and calls us; we ask the main thread, through the inspector, to
// evaluate a tiny expression. The inspector runs it as an interrupt on top of the blocking
// code, so the stack it captures is that code's — in about a millisecond, with no debugger
// enabled. A timer in the blocked thread could only ever show its own stack, after the fact.

const inspector = require('node:inspector');
const { workerData } = require('node:worker_threads');
const native = require('../native');
const { EXPRESSION, framesOf } = require('./stack-expression');

// Gives up when no answer comes by then: the main thread is not running JS (idle, or busy in
// native code), and the answer would describe whatever runs next (Rust drops stacks of stalls
// that are over, so a late one is harmless).
const ANSWER_TIMEOUT_MS = 1000;


const { threadId: sampled, originMs, gate } = workerData;
const PAUSED = 0;
const BUSY = 1; // js/stalls/sampler.js: no session while paused, busy while one is held
let capturing = false;

native.listenForStalls(sampled, (wake) => {
  if (capturing) return; // one stack per stall is plenty; the next stall gets its own
  // Busy first, then the look at paused (the pauser stores paused, then looks at busy): one of
  // the two sees the other.
  Atomics.store(gate, BUSY, 1);
  if (Atomics.load(gate, PAUSED) === 1) {
    Atomics.store(gate, BUSY, 0);
    return;
  }
  capturing = true;
  capture(wake).finally(() => {
    capturing = false;
    Atomics.store(gate, BUSY, 0);
  });
});
setInterval(() => {}, 2 ** 30); // keeps this worker alive; the main thread unrefs it

async function capture(wake) {
  const session = new inspector.Session();
  let timer;
  try {
    session.connectToMainThread();
    const ranBefore = native.threadCpuMs(sampled);
    const asked = originMs + native.monotonicMs(); // the sampled thread's time base (js/clock.js)
    const answer = await new Promise((resolve, reject) => {
      timer = setTimeout(() => reject(new Error('no answer')), ANSWER_TIMEOUT_MS);
      const params = { expression: EXPRESSION, returnByValue: true, silent: true };
      session.post('Runtime.evaluate', params, (e, r) => (e ? reject(e) : resolve(r)));
    });
    const ran = native.threadCpuMs(sampled) - ranBefore; // NaN if unknown: then judged by wall time
    if (answer.exceptionDetails || !Array.isArray(answer.result.value)) return;
    const [answered, calls, trace] = answer.result.value;
    const frames = framesOf(calls);
    native.stallStack(sampled, wake, asked, answered, Number.isFinite(ran) ? ran : answered - asked, frames, trace ?? null);
  } catch {
    // The stall ended first, or the main thread is going away: no stack for this one.
  } finally {
    clearTimeout(timer);
    session.disconnect();
  }
}

'use strict';
// The stack samplers, which take the main thread's stack while a stall blocks it.
//
// The interrupt (src/stalls/interrupt.rs): the lookout thread has V8 interrupt the main thread,
// which calls `take` (js/stalls/stack-expression.js). It makes no async resource, so it is
// armed at start and the first stall gets its stack too. Armed once per process; later monitors
// on this thread reuse it.
//
// The worker (js/stalls/sampler-worker.js), where V8 cannot be asked so (the addon found no
// `v8::Isolate::RequestInterrupt` in the host). Started only once a stall has happened (the
// addon asks through the ledger, js/attribution/charge.js), from inside a callback: a worker
// started eagerly is seen by the app's own async hooks as callbacks of resources created before
// they were enabled (the ports the Worker constructor hands the worker close, its 'worker' tick
// runs, its first message arrives). It is never terminated: its exit would be one more callback
// the app could see, and it idles, unref'd, until the process ends; later monitors on this thread
// reuse it.
//
// inspector.close() while a worker holds a session to this thread crashes Node. The sampler holds
// one per stall it samples; `pauseSampler()` stops it opening any and tells when none is held,
// so the inspector can be closed while a monitor runs (rloop attach leaving an app that runs its
// own monitor). The gate is shared memory: [paused, busy], each 0 or 1.
//
// Node's exit prints "Waiting for the debugger to disconnect..." on stderr while a worker holds
// a session to this thread: `settleSampler()` lets rloop's work at exit open none, and waits for
// the one a stall before it may hold.

const path = require('node:path');
const { threadId, isMainThread, Worker } = require('node:worker_threads');
const native = require('../native');
const { ORIGIN, offsetFrom, now } = require('../clock');
const { take } = require('./stack-expression');

let interrupting = null;
let sampler = null;
const gate = new Int32Array(new SharedArrayBuffer(8));
const PAUSED = 0;
const BUSY = 1;

/**
 * Arms the interrupt sampler unless it is armed already; false where it cannot be, then
 * `startSampler` after the first stall is the way. Main thread only, as the worker.
 */
function interruptStalls() {
  if (interrupting === null && isMainThread) interrupting = native.interruptStalls(threadId, ORIGIN - offsetFrom(native.monotonicMs), take);
  return interrupting === true;
}

/** Starts the worker sampler unless it runs already; `onError(e)` hears why it could not. */
function startSampler(onError) {
  // Only the main thread can be paused from another thread through public APIs (inspector's
  // connectToMainThread); a worker's stalls come without a stack.
  if (sampler !== null || !isMainThread) return;
  try {
    // stdout/stderr: true, so nothing pipes its (empty) output into this thread's streams.
    // originMs: epoch ms at monotonicMs() 0 on this thread's time base; the worker's own
    // performance.timeOrigin read the wall clock later, maybe after a step.
    const workerData = { threadId, originMs: ORIGIN - offsetFrom(native.monotonicMs), gate };
    // execArgv [] and no NODE_OPTIONS: the app's preloads (-r, --import) are the app's, not run
    // in rloop's thread (an APM agent would start, and connect, inside it).
    const { NODE_OPTIONS, ...env } = process.env;
    sampler = new Worker(path.join(__dirname, 'sampler-worker.js'), { workerData, stdout: true, stderr: true, execArgv: [], env });
    sampler.unref();
    sampler.on('error', onError); // stalls then come without stacks
  } catch (e) {
    sampler = false; // no worker to be had (resource limits): stalls come without stacks
    onError(e);
  }
}

/**
 * Stops the sampler opening inspector sessions; resolves to what lets it open them again, once
 * it holds none. `later(ms, fn)` schedules the next look (the caller's timer: an app's fake
 * timers must not hold it).
 */
function pauseSampler(later) {
  Atomics.store(gate, PAUSED, 1);
  const resume = () => Atomics.store(gate, PAUSED, 0);
  // Idle at two looks in a row: a session the worker disconnected reaches this thread as a
  // task of its own, run between the looks.
  return new Promise((resolve) => {
    let idle = 0;
    const look = () => {
      idle = Atomics.load(gate, BUSY) === 0 ? idle + 1 : 0;
      if (idle === 2) resolve(resume);
      else later(5, look);
    };
    look();
  });
}

/**
 * For the end of the process: stops the sampler opening sessions for good, and waits at most
 * `withinMs` until it holds none. While this thread waits the inspector's interrupts run: an
 * evaluation pending in the worker's session answers, and the session's end is taken in.
 */
function settleSampler(withinMs) {
  if (!sampler) return;
  Atomics.store(gate, PAUSED, 1);
  const end = now() + withinMs;
  while (Atomics.load(gate, BUSY) === 1 && now() < end) Atomics.wait(gate, BUSY, 1, 5);
  // The worker ends its session before it clears BUSY; one more wait lets that end's
  // interrupt run here, should none of the code before the exit have run it.
  Atomics.wait(gate, PAUSED, 1, 1);
}

module.exports = { interruptStalls, startSampler, pauseSampler, settleSampler };

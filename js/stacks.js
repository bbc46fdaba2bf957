'use strict';
// The stack sampler's host: one worker per process (js/stack-sampler.js) that takes the main
// thread's stack while a stall blocks it. Started only once a stall has happened (the addon
// asks through the ledger, js/hooks.js), from inside a callback: a worker started eagerly is
// seen by the app's own async hooks as callbacks of resources created before they were
// enabled. It is never terminated: its exit would be one more callback the app could see, and
// it idles, unref'd, until the process ends; later monitors on this thread reuse it.

const path = require('node:path');
const { threadId, isMainThread, Worker } = require('node:worker_threads');
const native = require('./native');
const { ORIGIN, offsetFrom } = require('./clock');

let sampler = null;

/** Starts the sampler unless it runs already; `onError(e)` hears why it could not. */
function startSampler(onError) {
  // Only the main thread can be paused from another thread through public APIs (inspector's
  // connectToMainThread); a worker's stalls come without a stack.
  if (sampler !== null || !isMainThread) return;
  try {
    // stdout/stderr: true, so nothing pipes its (empty) output into this thread's streams.
    // originMs: epoch ms at monotonicMs() 0 on this thread's time base; the worker's own
    // performance.timeOrigin read the wall clock later, maybe after a step.
    const workerData = { threadId, originMs: ORIGIN - offsetFrom(native.monotonicMs) };
    // execArgv [] and no NODE_OPTIONS: the app's preloads (-r, --import) are the app's, not run
    // in rloop's thread (an APM agent would start, and connect, inside it).
    const { NODE_OPTIONS, ...env } = process.env;
    sampler = new Worker(path.join(__dirname, 'stack-sampler.js'), { workerData, stdout: true, stderr: true, execArgv: [], env });
    sampler.unref();
    sampler.on('error', onError); // stalls then come without stacks
  } catch (e) {
    sampler = false; // no worker to be had (resource limits): stalls come without stacks
    onError(e);
  }
}

module.exports = { startSampler };

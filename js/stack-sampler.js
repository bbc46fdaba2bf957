'use strict';
// Runs in a worker: takes the main thread's stack while a stall blocks it. The addon's watch
// thread notices the stall and calls us; we pause the main thread through the inspector (its
// interrupt reaches a thread busy in JS), read the frames, and let it go at once. A timer in
// the blocked thread could only ever show its own stack, after the fact.

const inspector = require('node:inspector');
const { workerData } = require('node:worker_threads');
const native = require('./native');

const MAX_FRAMES = 32;
// A pause asked for after the stall ended would land on unrelated code (briefly: Rust drops a
// stack for a stall that is over): give up if none comes by then.
const PAUSE_TIMEOUT_MS = 1000;

const { threadId: watched } = workerData;
let capturing = false;

native.watchStalls(watched, (wake) => {
  if (capturing) return; // one stack per stall is plenty; the next stall gets its own
  capturing = true;
  capture(wake).finally(() => { capturing = false; });
});
setInterval(() => {}, 2 ** 30); // keeps this worker alive; the main thread unrefs it

function toFrame(callFrame, urls) {
  const { functionName, location } = callFrame;
  return {
    functionName: functionName || '(anonymous)',
    url: urls.get(location.scriptId) ?? callFrame.url ?? '',
    line: location.lineNumber + 1,
    column: location.columnNumber + 1,
  };
}

async function capture(wake) {
  const session = new inspector.Session();
  const urls = new Map();
  session.on('Debugger.scriptParsed', ({ params }) => urls.set(params.scriptId, params.url));
  const post = (method) => new Promise((resolve, reject) => session.post(method, (e, r) => (e ? reject(e) : resolve(r))));
  let timer;
  try {
    session.connectToMainThread();
    const paused = new Promise((resolve, reject) => {
      session.once('Debugger.paused', ({ params }) => resolve(params));
      timer = setTimeout(() => reject(new Error('no pause')), PAUSE_TIMEOUT_MS);
    });
    paused.catch(() => {}); // it may time out while enable/pause are still pending
    await post('Debugger.enable');
    await post('Debugger.pause');
    const { callFrames } = await paused;
    native.stallStack(watched, wake, callFrames.slice(0, MAX_FRAMES).map((f) => toFrame(f, urls)));
    await post('Debugger.resume');
  } catch {
    // The stall ended first, or the main thread is going away: no stack for this one.
  } finally {
    clearTimeout(timer);
    session.disconnect(); // also resumes and disables the debugger
  }
}

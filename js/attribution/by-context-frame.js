// The scope carried on AsyncContextFrame (Node ≥ 24 by default): in a store of rloop's own,
// entered by enter() and restore() (js/attribution/context-frames.js, which copies no context frame
// where it can). V8 carries it to every continuation with no `init` hook, which is most of the
// cost of an await (bench/acf.md). `before` reads the store, from the context frame itself where rloop
// made it; only handles created before any JS runs (accepted connections) and handles handed to
// another scope by retag() carry a tag, found in the ring (js/attribution/ring.js).
//
// Not strict mode on purpose: tagging a frozen resource must fail silently, never throw inside
// a hook (an exception there kills the process).

const { createHook, executionAsyncResource, AsyncLocalStorage } = require('node:async_hooks');
const dc = require('node:diagnostics_channel');
const { UNATTRIBUTED, state, begin, after, retag } = require('./charge');
const { RING, ids: ringIds, contexts: ringCtx } = require('./ring');
const contextFrames = require('./context-frames');

// Stands in for the store once stopped: Node still calls a hook disabled inside a callback of
// another hook for the rest of that callback's event (rloop stopped from an app's async hook,
// or by an attach's command landing there as an interrupt), and a hook must never throw.
const NO_STORE = { getStore() {}, enterWith() {} };
let store = NO_STORE; // rloop's own AsyncLocalStorage while a monitor runs

// A callback's context: its store; a handle tagged by retag() or an accepted connection wins,
// and is entered so that what its callback creates inherits it.
function before(asyncId) {
  if (state.tagged) return beforeTagged(asyncId);
  begin(state.depth === 0 ? contextFrames.context() : nestedContext());
}

function beforeTagged(asyncId) {
  const i = asyncId & (RING - 1);
  if (ringIds[i] === asyncId) return begin(entered(ringCtx[i]));
  const ctx = state.depth === 0 ? contextFrames.context() : nestedContext();
  begin(ctx !== UNATTRIBUTED ? ctx : entered(executionAsyncResource()?.[state.tag] ?? UNATTRIBUTED));
}

/** A tag's context, entered for the rest of the callback (Node restores the context frame after it). */
function entered(ctx) {
  if (store !== NO_STORE && contextFrames.context() !== ctx) contextFrames.put(ctx);
  return ctx;
}

// AsyncResource.runInAsyncScope() emits `before` first and enters its context frame after: a
// nested callback of one reads the store of the context frame the resource keeps (Node's own property).
let contextFrameKey;
function nestedContext() {
  const r = executionAsyncResource();
  if (typeof r !== 'object' || r === null) return contextFrames.context();
  contextFrameKey ??= Object.getOwnPropertySymbols(r).find((s) => s.description === 'context_frame');
  if (contextFrameKey === undefined || !Object.hasOwn(r, contextFrameKey)) return contextFrames.context();
  return contextFrames.contextIn(r[contextFrameKey]);
}

// Timers created outside any scope are tagged as they are created, only while js/auto/timers.js
// names them: the one init hook here.
function initTimer(asyncId, type, triggerAsyncId, resource) {
  if (type !== 'Timeout' || store.getStore() !== undefined) return;
  resource[state.tag] = state.timerContext(resource);
  state.tagged = true;
}

// A connection accepted by a server opened in a scope: published in the server's store, but
// its socket's callbacks run outside it (the handle was made before any JS ran).
function accepted({ socket }) {
  const ctx = store.getStore();
  const handle = socket._handle;
  if (ctx !== undefined && typeof handle?.getAsyncId === 'function') retag(handle, handle.getAsyncId(), ctx);
}

const hook = createHook({ before, after });
const timerHook = createHook({ init: initTimer });

module.exports = {
  start() {
    store = new AsyncLocalStorage(); // new per monitor, like the tag
    contextFrames.use(store, UNATTRIBUTED);
    state.tagged = false;
    dc.subscribe('net.server.socket', accepted);
    hook.enable();
  },
  stop() {
    hook.disable();
    timerHook.disable();
    if (store !== NO_STORE) dc.unsubscribe('net.server.socket', accepted);
    store = NO_STORE;
    contextFrames.use(NO_STORE, UNATTRIBUTED); // keeps no context frame of the app's
  },
  enter(ctx, prev) {
    if (store !== NO_STORE) contextFrames.enter(ctx, prev);
  },
  restore(ctx) {
    if (store !== NO_STORE) contextFrames.restore(ctx);
  },
  timers(on) {
    if (store !== NO_STORE && on) timerHook.enable();
    else timerHook.disable();
  },
};

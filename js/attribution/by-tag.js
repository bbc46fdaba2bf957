// The scope carried by tags (Node 20 and 22, and --no-async-context-frame): each async resource
// created while a scope is active is tagged in an `init` hook with that scope's context, and
// `before` charges the resource's context. No `destroy` hook: the tag lives and dies with the
// resource, and a fixed ring by asyncId (js/attribution/ring.js) only saves looking it up.
//
// Not strict mode on purpose: tagging a frozen resource must fail silently, never throw inside
// a hook (an exception there kills the process).

const { createHook, executionAsyncResource } = require('node:async_hooks');
const { UNATTRIBUTED, state, begin, after } = require('./charge');
const { RING, ids: ringIds, contexts: ringCtx, WeakContexts } = require('./ring');

// Servers opened in a scope: connections they accept are created by Node before any JS runs,
// so only the trigger id links them.
const links = new WeakContexts();

function init(asyncId, type, triggerAsyncId, resource) {
  let ctx = state.cur;
  if (ctx !== UNATTRIBUTED) {
    resource[state.tag] = ctx;
    if (type === 'TCPSERVERWRAP' || type === 'PIPESERVERWRAP') links.set(asyncId, ctx, new WeakRef(resource));
  } else if (state.timerContext !== null && type === 'Timeout') {
    resource[state.tag] = ctx = state.timerContext(resource);
  } else if (links.size !== 0 && type !== 'PROMISE') {
    const l = links.get(triggerAsyncId);
    if (l !== undefined) resource[state.tag] = ctx = l;
  }
  const i = asyncId & (RING - 1);
  ringIds[i] = asyncId;
  ringCtx[i] = ctx;
}

function before(asyncId) {
  const i = asyncId & (RING - 1);
  if (ringIds[i] === asyncId) return begin(ringCtx[i]);
  // No resource when Node (or an app, through internals) emits before for a bare asyncId.
  const ctx = executionAsyncResource()?.[state.tag] ?? UNATTRIBUTED;
  ringIds[i] = asyncId;
  ringCtx[i] = ctx;
  begin(ctx);
}

const hook = createHook({ init, before, after });

module.exports = {
  start() {
    hook.enable();
  },
  stop() {
    hook.disable();
    links.clear();
  },
  // enter() and restore() change what the init hook reads, state.cur, and nothing more.
  enter() {},
  restore() {},
  // Timers created outside any scope are named in the init hook, by state.timerContext.
  timers() {},
};

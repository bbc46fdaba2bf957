'use strict';
// Charges Node-RED's work to nodes, as scope `node:<id>`:
// - A delivery, from onReceive on, keyed `<_msgid>:<id>` (fan-out clones share a _msgid). What the
//   handler starts (timers, promises: a Function node's send after its code returns, or from a
//   setTimeout) inherits the key. A message without _msgid (an inject timer's) has no key.
//   Binding a key is most of what a delivery costs, so past `keyed` messages a window a node's
//   messages are keyed in a uniform sample (every n-th, n from the node's last window): per-message
//   percentiles and worst messages then come from that sample; busy time is always all of it.
// - Deliveries that run inside their caller (runtimeSyncDelivery, link out → link in, link call,
//   catch/status/complete) hand back to the caller at postReceive: time is exclusive.
// - A send from code charged to no one (http in, which has no onReceive; a server's callback) is
//   charged to the sending node from there on.
// The hooks take one argument and return nothing: a hook that returns a promise would delay
// every handler.

// Returning to the context charged before a delivery needs the core's context objects:
// hooks.running() says which ledger slot is charged, hooks.enter() charges a context again.
const hooks = require('../js/hooks');

const PREV = Symbol('rloop.prev'); // on a receive event: the context charged before it

class Attribution {
  #RED;
  #mon;
  #keyed;
  #bySlot = new Map(); // ledger slot -> the context this module last charged through it
  #nodes = new Map(); // node id -> { scope: its context without key, messages: this window's, every: key every n-th }

  constructor(RED, mon, keyed) {
    this.#RED = RED;
    this.#mon = mon;
    this.#keyed = keyed;
    RED.hooks.add('onReceive.rloop', (event) => {
      event[PREV] = this.#charged();
      this.#enter(event.destination.id, event.msg._msgid);
    });
    RED.hooks.add('postReceive.rloop', (event) => {
      if (event[PREV] !== undefined) hooks.enter(event[PREV]);
    });
    RED.hooks.add('onSend.rloop', (events) => {
      if (hooks.running() === 0) this.#enter(events[0].source.id, events[0].msg._msgid);
    });
  }

  /** Unregisters the hooks: Node-RED's message path is as if rloop had never loaded. */
  stop() {
    this.#RED.hooks.remove('*.rloop');
  }

  /** Deliveries per node id so far in this window. */
  messages() {
    const m = new Map();
    for (const [id, node] of this.#nodes) if (node.messages > 0) m.set(id, node.messages);
    return m;
  }

  /** Deliveries per node id since the last call, for the window that just closed. */
  takeMessages() {
    const m = this.messages();
    for (const node of this.#nodes.values()) {
      node.every = Math.max(1, Math.ceil(node.messages / this.#keyed));
      node.messages = 0;
    }
    return m;
  }

  #enter(id, msgid) {
    let node = this.#nodes.get(id);
    if (node === undefined) {
      const scope = this.#context(`node:${id}`);
      this.#nodes.set(id, (node = { scope, messages: 0, every: 1 }));
    }
    const keyed = ++node.messages % node.every === 0 && msgid !== undefined;
    hooks.enter(keyed ? this.#context(node.scope.name, `${msgid}:${id}`) : node.scope);
  }

  #context(name, key) {
    const ctx = this.#mon.context(name, key);
    this.#bySlot.set(ctx.slot, ctx);
    return ctx;
  }

  /** The context charged now: unattributed, one of ours, or (rarely) a scope of the host app. */
  #charged() {
    const slot = hooks.running();
    if (slot <= 0) return hooks.ROOT;
    const ctx = this.#bySlot.get(slot);
    // A key slot is reused once the ring comes round: the context we remember must still own it.
    if (ctx !== undefined && ctx.slot === slot) return ctx;
    const { scope, key } = hooks.current();
    return scope === null ? hooks.ROOT : this.#context(scope, key ?? undefined);
  }
}

module.exports = { Attribution };

'use strict';
// Charges Node-RED's work to nodes, as scope `node:<id>`:
// - A delivery, from onReceive on, keyed `<_msgid>:<id>` (fan-out clones share a _msgid). What the
//   handler starts (timers, promises: a Function node's send after its code returns, or from a
//   setTimeout) inherits the key. A message without _msgid (an inject timer's) has no key.
//   Binding a key costs as much as the rest of a delivery's attribution, so past `keyed` messages
//   a window a node's messages are keyed in a uniform sample (every n-th, n from the node's last
//   window; in a window after one of at most `keyed`, the first `keyed`): per-message percentiles
//   and worst messages then come from that sample; busy time is always all of it.
// - Deliveries that run inside their caller (runtimeSyncDelivery, link out → link in, link call,
//   catch/status/complete) hand back to the caller at postReceive: time is exclusive.
// - A send from code charged to no one (http in, which has no onReceive; a server's callback) is
//   charged to the sending node from there on.
// The hooks take one argument and return nothing: a hook that returns a promise would delay
// every handler. Charging goes through rloop's public enter()/restore(), on the running monitor.

const rloop = require('..');

const PREV = Symbol('rloop.prev'); // on a receive event: what enter() returned, charged before it

class Attribution {
  #RED;
  #keyed;
  #nodes = new Map(); // node id -> { name: its scope, messages: this window's, total: since start, every: key every n-th }

  constructor(RED, keyed) {
    this.#RED = RED;
    this.#keyed = keyed;
    RED.hooks.add('onReceive.rloop', (event) => {
      event[PREV] = this.#enter(event.destination.id, event.msg._msgid);
    });
    RED.hooks.add('postReceive.rloop', (event) => {
      if (event[PREV] !== undefined) rloop.restore(event[PREV]);
    });
    RED.hooks.add('onSend.rloop', (events) => {
      // A node's own scope wins over an automatic one (an 'http in' node runs in its route's).
      const { scope, automatic } = rloop.current();
      if (scope === null || automatic) this.#enter(events[0].source.id, events[0].msg._msgid);
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

  /** Deliveries per node id since attribution started: a capture's messages are the difference. */
  totals() {
    const m = new Map();
    for (const [id, node] of this.#nodes) m.set(id, node.total);
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

  /** Charges node `id` from now on, keyed by message if sampled; returns what was charged before. */
  #enter(id, msgid) {
    let node = this.#nodes.get(id);
    if (node === undefined) this.#nodes.set(id, (node = { name: `node:${id}`, messages: 0, total: 0, every: 1 }));
    node.total++;
    // Until a window says the node's rate (the first, or one after an idle window) the first
    // `keyed` messages, not every one: a burst would otherwise key all it brings.
    const n = ++node.messages;
    const keyed = msgid !== undefined && (node.every === 1 ? n <= this.#keyed : n % node.every === 0);
    return rloop.enter(node.name, keyed ? { key: `${msgid}:${id}` } : undefined);
  }
}

module.exports = { Attribution };

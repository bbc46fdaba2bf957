'use strict';
// Charges Node-RED's work to nodes, as scope `node:<id>`:
// - A delivery, from onReceive on, keyed `<_msgid>:<id>` (fan-out clones share a _msgid). What the
//   handler starts (timers, promises: a Function node's send after its code returns, or from a
//   setTimeout) inherits the key. A message without _msgid (an inject timer's) has no key.
//   Binding a key costs as much as the rest of a delivery's attribution, so past `keyed` messages
//   a window a node's messages are keyed in a uniform sample (every n-th, n from the node's last
//   window; in a window after one of at most `keyed`, the first `keyed`), never more than `keyed`
//   a window (a burst that starts late in one window is mostly in the next): per-message
//   percentiles and worst messages then come from that sample; busy time is always all of it.
// - A message counts in the window its delivery starts in, as the addon's lookout thread closes
//   them: a burst that blocks the loop across a close is counted with the time it took in each
//   window, not all in the one whose close JS sees after it.
// - Deliveries that run inside their caller (runtimeSyncDelivery, link out → link in, link call,
//   catch/status/complete) hand back to the caller at postReceive: time is exclusive.
// - A send from code charged to no one (http in, which has no onReceive; a server's callback) is
//   charged to the sending node from there on.
// The hooks take one argument and return nothing: a hook that returns a promise would delay
// every handler; one that throws would fail the delivery, so rloop's work in them goes through
// attempt() (js/attempt.js). Charging goes through rloop's public enter()/restore(), on the
// running monitor.

const rloop = require('..');
const { openWindowSeq } = require('../js/attribution');
const { attempt } = require('../js/attempt');

const PREV = Symbol('rloop.prev'); // on a receive event: what enter() returned, charged before it

class Attribution {
  #RED;
  #keyed;
  // node id -> { name: its scope, window: the seq its counts are of, messages, keyed: in it,
  // every: key every n-th, total: since start }
  #nodes = new Map();
  #closed = new Map(); // seq of a window JS has not taken yet -> node id -> messages in it
  #taken = 0; // the last window taken

  constructor(RED, keyed) {
    this.#RED = RED;
    this.#keyed = keyed;
    RED.hooks.add('onReceive.rloop', (event) => {
      attempt(this.#received, event);
    });
    RED.hooks.add('postReceive.rloop', (event) => {
      attempt(handedBack, event);
    });
    RED.hooks.add('onSend.rloop', (events) => {
      attempt(this.#sent, events);
    });
  }

  #received = (event) => {
    event[PREV] = this.#enter(event.destination.id, event.msg._msgid);
  };

  #sent = (events) => {
    // A node's own scope wins over an automatic one (an 'http in' node runs in its route's).
    const { scope, automatic } = rloop.current();
    if (scope === null || automatic) this.#enter(events[0].source.id, events[0].msg._msgid);
  };

  /** Unregisters the hooks: Node-RED's message path is as if rloop had never loaded. */
  stop() {
    this.#RED.hooks.remove('*.rloop');
  }

  /** Deliveries per node id so far in the window open now. */
  messages() {
    return this.#of(openWindowSeq());
  }

  /** Deliveries per node id since attribution started: a capture's messages are the difference. */
  totals() {
    const m = new Map();
    for (const [id, node] of this.#nodes) m.set(id, node.total);
    return m;
  }

  /** Deliveries per node id in window `seq`, which closed: each window is taken once, in order. */
  takeMessages(seq) {
    const m = this.#of(seq);
    for (const s of this.#closed.keys()) if (s <= seq) this.#closed.delete(s);
    this.#taken = seq;
    return m;
  }

  #of(seq) {
    const m = new Map(this.#closed.get(seq));
    for (const [id, node] of this.#nodes) if (node.window === seq && node.messages > 0) m.set(id, node.messages);
    return m;
  }

  /** Charges node `id` from now on, keyed by message if sampled; returns what was charged before. */
  #enter(id, msgid) {
    let node = this.#nodes.get(id);
    if (node === undefined) this.#nodes.set(id, (node = { name: `node:${id}`, window: 0, messages: 0, keyed: 0, every: 1, total: 0 }));
    node.total++;
    const w = openWindowSeq();
    if (node.window !== w) this.#roll(id, node, w);
    const n = ++node.messages;
    if (msgid === undefined || node.keyed === this.#keyed || n % node.every !== 0) return rloop.enter(node.name);
    node.keyed++;
    return rloop.enter(node.name, { key: `${msgid}:${id}` });
  }

  /** Node `id`'s first delivery in window `w`: its counts of the last window it had are kept until taken. */
  #roll(id, node, w) {
    if (w < node.window) this.#restart(); // another monitor: the counts were of its windows
    if (node.messages > 0 && node.window > this.#taken) {
      let m = this.#closed.get(node.window);
      if (m === undefined) this.#closed.set(node.window, (m = new Map()));
      m.set(id, node.messages);
    }
    // The window before says the node's rate; after an idle one (or none), the first `keyed`
    // messages are keyed, not every one: a burst would otherwise key all it brings.
    node.every = node.window === w - 1 ? Math.max(1, Math.ceil(node.messages / this.#keyed)) : 1;
    node.window = w;
    node.messages = 0;
    node.keyed = 0;
  }

  #restart() {
    for (const node of this.#nodes.values()) Object.assign(node, { window: 0, messages: 0, keyed: 0, every: 1 });
    this.#closed.clear();
    this.#taken = 0;
  }
}

function handedBack(event) {
  if (event[PREV] !== undefined) rloop.restore(event[PREV]);
}

module.exports = { Attribution };

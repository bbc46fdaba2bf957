'use strict';
// What the editor and the admin API show: each window as figures per node (ELU, busy ms,
// messages, per-message p50/p99/max, worst message ids), subflow instances with the nodes inside
// them rolled up, totals per flow (tab), and the share of the loop charged to no node.

const NODE = 'node:';
const GLOBAL = 'Global Configuration Nodes'; // where a config node of no flow is listed, as in the editor

class Live {
  #RED;
  #mon;
  #attribution;
  #history;
  #meta = new Map(); // node id -> describe(), until the next deploy
  #forget = () => this.#meta.clear();
  #onWindow;

  /** Keeps the last `size` windows in `history` (kept by the caller across the switch); `publish(summary)` is called as each closes. */
  constructor(RED, mon, attribution, history, size, publish) {
    this.#RED = RED;
    this.#mon = mon;
    this.#attribution = attribution;
    this.#history = history;
    this.#onWindow = (w) => {
      const summary = this.#summarize(w, attribution.takeMessages(w.seq));
      this.#history.push(summary);
      if (this.#history.length > size) this.#history.shift();
      publish(summary);
    };
    mon.on('window', this.#onWindow);
    RED.events.on('flows:started', this.#forget);
  }

  stop() {
    this.#mon.off('window', this.#onWindow);
    this.#RED.events.off('flows:started', this.#forget);
  }

  /** The live window (the one open now, read so far) and the last complete one. */
  elu() {
    return { current: this.#summarize(this.#mon.liveWindow(), this.#attribution.messages()), last: this.#history.at(-1) ?? null };
  }

  /**
   * A capture on the monitor (`options` as capture()'s) with the nodes it names and the messages
   * each received in it: `report.nodered` (docs/report-schema.md).
   */
  async capture(options) {
    const before = this.#attribution.totals();
    const report = await this.#mon.capture(options);
    const messages = new Map([...this.#attribution.totals()].map(([id, n]) => [id, n - (before.get(id) ?? 0)]));
    report.nodered = { nodes: this.nodes(report.elu.scopes, messages) };
    return report;
  }

  /**
   * Name, type, flow (tab label) and messages (from `messages`, node id -> count) of the nodes
   * among `scopes`: a report's `nodered.nodes`.
   */
  nodes(scopes, messages) {
    const nodes = {};
    for (const { name } of scopes) {
      const m = name.startsWith(NODE) && this.#describe(name.slice(NODE.length));
      if (!m) continue;
      nodes[m.id] = { name: m.name ?? '', type: m.type, flow: m.flow ?? GLOBAL, messages: messages.get(m.id) ?? 0 };
      if (m.subflow) nodes[m.id].subflow = m.subflow;
    }
    return nodes;
  }

  #summarize(w, messages) {
    const d = w.durationMs;
    const elu = (ms) => (d > 0 ? ms / d : 0);
    const nodes = {};
    let appMs = 0;
    for (const s of w.scopes) {
      if (s.name.startsWith(NODE)) nodes[s.name.slice(NODE.length)] = this.#entry(s, messages);
      else appMs += s.busyMs;
    }
    for (const id of messages.keys()) nodes[id] ??= this.#entry({ name: NODE + id, busyMs: 0 }, messages);
    const flows = {};
    for (const [id, n] of Object.entries(nodes)) {
      const m = this.#describe(id);
      if (!m) continue;
      for (const instance of m.instances) {
        const outer = (nodes[instance] ??= this.#entry({ name: NODE + instance, busyMs: 0 }, messages));
        outer.insideMs = (outer.insideMs ?? 0) + n.busyMs;
      }
      const f = (flows[m.tab ?? 'global'] ??= { label: m.flow ?? GLOBAL, busyMs: 0, messages: 0 });
      f.busyMs += n.busyMs;
      f.messages += n.messages;
    }
    for (const n of Object.values(nodes)) n.elu = elu(n.busyMs + (n.insideMs ?? 0));
    for (const f of Object.values(flows)) f.elu = elu(f.busyMs);
    return {
      seq: w.seq,
      start: w.start,
      end: w.end,
      durationMs: d,
      thread: w.thread,
      unattributed: { elu: w.unattributed.elu, busyMs: w.unattributed.busyMs },
      other: { elu: elu(appMs), busyMs: appMs }, // scopes of the host application
      nodes,
      flows,
    };
  }

  /** One node's figures; `busyMs` is its own time, `insideMs` that of the nodes in a subflow instance. */
  #entry(scope, messages) {
    const id = scope.name.slice(NODE.length);
    const m = this.#describe(id);
    const k = scope.keys;
    const n = {
      name: m?.name ?? null,
      type: m?.type ?? null,
      busyMs: scope.busyMs,
      messages: messages.get(id) ?? 0,
      keyed: k?.count ?? 0, // messages timed one by one: what the percentiles and worst come from
      p50Ms: k?.p50Ms ?? null,
      p99Ms: k?.p99Ms ?? null,
      maxMs: k?.maxMs ?? null,
      // Keys are `<_msgid>:<id>`.
      worst: k ? k.worst.map((w) => ({ msgid: w.key.slice(0, w.key.length - id.length - 1), busyMs: w.busyMs })) : [],
    };
    if (m?.alias) n.alias = m.alias; // a node in a subflow instance: its id in the subflow's template
    if (m?.instances.length) n.instance = m.instances[0]; // and the instance it runs in
    return n;
  }

  /** What is known of running node `id`: name, type, tab and its label, subflow instances it is in. */
  #describe(id) {
    let m = this.#meta.get(id);
    if (m === undefined) {
      const node = this.#RED.nodes.getNode(id);
      m = node ? describe(node) : null;
      this.#meta.set(id, m);
    }
    return m;
  }
}

function describe(node) {
  const instances = []; // innermost first
  let subflow = null;
  let flow = node._flow;
  for (; flow?.TYPE === 'subflow'; flow = flow.parent) {
    if (flow.subflowInstance.id === node.id) continue; // a subflow instance node belongs to the flow around it
    instances.push(flow.subflowInstance.id);
    subflow ??= flow.subflowDef.name ?? flow.subflowDef.id;
  }
  const tab = flow?.flow?.id ?? null; // null: a global config node
  return { id: node.id, name: node.name ?? null, type: node.type, tab, flow: tab && (flow.flow.label ?? tab), alias: node._alias, instances, subflow };
}

module.exports = { Live };

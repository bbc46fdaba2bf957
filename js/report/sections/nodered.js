'use strict';
// Node-RED: the scopes the Node-RED plugin names `node:<id>`, as nodes (name, type, flow,
// messages) and summed per flow. Shown only when the report has such scopes. A scope's calls are
// callbacks (a Function node's message runs several): shown, as such, only for a report without
// the plugin's message counts.

const { text } = require('../escape');
const { ms, num, pct } = require('../format');
const { table, bar, empty, capped } = require('../table');
const { groupBy } = require('../aggregate');
const { list, nodeOf, NODE_PREFIX } = require('../context');
const { keyStats, busyCell } = require('./elu');
const taken = require('../taken');

const MAX_ROWS = 200;

const isNode = (name) => typeof name === 'string' && name.startsWith(NODE_PREFIX);

function render(ctx) {
  const r = ctx.r;
  const scopes = list(r.elu?.scopes).filter((s) => isNode(s.name));
  if (scopes.length === 0) return null;
  const stalls = groupBy(list(r.lag?.events).filter((e) => isNode(e?.scope)), (e) => e.scope, (e) => e.lagMs);
  const stallsOf = new Map(stalls.map((g) => [g.key, g]));
  const cpuOf = new Map(list(r.profile?.analysis?.scopes).filter((s) => isNode(s.name)).map((s) => [s.name, s]));
  const keys = keyStats(list(r.elu?.windows));
  const ranOf = new Map(taken.ofScopes(r.elu?.windows).map((s) => [s.name, s]));
  const nodes = scopes.map((s) => ({ scope: s, node: nodeOf(r, s.name), stalls: stallsOf.get(s.name), cpu: cpuOf.get(s.name), keys: keys.get(s.name) }));
  const counted = nodes.some((n) => n.node.messages !== undefined);
  const count = (s, node) => {
    if (!counted) return [num(s.calls), s.calls];
    return node.messages === undefined ? ['', -1] : [num(node.messages), node.messages];
  };

  const rows = nodes.slice(0, MAX_ROWS).map(({ scope: s, node, stalls: st, cpu, keys: k }) => [
    `${ctx.swatch(s.name)}${node.name === undefined ? '<span class="muted">(unknown)</span>' : text(node.name || '(unnamed)')} <span class="muted">${text(node.id, 40)}</span>`,
    text(node.type ?? ''),
    `${text(node.flow ?? '')}${node.subflow ? ` <span class="muted">subflow ${text(node.subflow)}</span>` : ''}`,
    busyCell(s.busyMs, ranOf.get(s.name)), [bar(s.elu, pct(s.elu)), s.elu], count(s, node),
    k ? [ms(k.p99Ms), k.p99Ms] : ['', -1],
    st ? [`${num(st.count)} · ${ms(st.max)}`, st.count] : ['', 0],
    cpu ? [ms(cpu.ms), cpu.ms] : ['', -1],
  ]);
  const nodeTable = table({
    label: 'Node-RED nodes',
    columns: [{ label: 'Node' }, { label: 'Type' }, { label: 'Flow' }, { label: 'Busy', num: true }, { label: 'ELU', num: true },
      { label: counted ? 'Messages' : 'Callbacks', num: true }, { label: 'Message p99', num: true }, { label: 'Stalls · longest', num: true }, { label: 'CPU (profile)', num: true }],
    rows,
  });
  const flows = groupBy(nodes, (n) => n.node.flow ?? '(unknown flow)', (n) => n.scope.busyMs);
  const durationMs = Number(r.meta?.durationMs) || 0;
  const flowTable = table({
    label: 'Node-RED flows',
    columns: [{ label: 'Flow' }, { label: 'Nodes', num: true }, { label: 'Busy', num: true }, { label: 'ELU', num: true }, { label: 'Stalls', num: true }],
    rows: flows.map((f) => {
      const share = durationMs > 0 ? f.total / durationMs : 0;
      const count = f.items.reduce((n, i) => n + (i.stalls?.count ?? 0), 0);
      return [text(f.key), [num(f.count), f.count], [ms(f.total), f.total], [bar(share, pct(share)), share], [num(count), count]];
    }),
  });
  const notes = [
    r.nodered ? '' : empty('This report has no Node-RED metadata (report.nodered), so nodes are shown by id.'),
    nodes.length > MAX_ROWS ? capped(ctx, `Node-RED: the ${MAX_ROWS} busiest of ${num(nodes.length)} nodes are listed.`) : '',
  ];
  return `${notes.join('')}<h3>Flows</h3>${flowTable}<h3>Nodes</h3>${nodeTable}`;
}

module.exports = { id: 'nodered', title: 'Node-RED', render };

'use strict';
// What every section of the page shares: the report, a colour per scope (the same in every
// chart), scope names as people know them (Node-RED nodes by name), and the list of what the
// page leaves out.

const { esc, text } = require('./escape');

const PALETTE = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#ff9da7'];
const OTHER_COLOR = '#8b8f98';
const UNATTRIBUTED_COLOR = '#50545c';
const NODE_PREFIX = 'node:';

/** The objects in `x` when it is an array (a damaged report may hold anything), else none. */
const list = (x) => (Array.isArray(x) ? x.filter((item) => item !== null && typeof item === 'object') : []);

/** Node-RED metadata of a `node:<id>` scope: `{ id, name, type, flow, subflow, messages }`, else null. */
function nodeOf(report, scope) {
  if (typeof scope !== 'string' || !scope.startsWith(NODE_PREFIX)) return null;
  const id = scope.slice(NODE_PREFIX.length);
  const nodes = report.nodered?.nodes;
  const meta = nodes && Object.hasOwn(nodes, id) && typeof nodes[id] === 'object' ? nodes[id] ?? {} : {};
  const messages = Number.isInteger(meta.messages) && meta.messages >= 0 ? meta.messages : undefined;
  return { id, name: meta.name, type: meta.type, flow: meta.flow, subflow: meta.subflow, messages };
}

function context(report) {
  const scopes = list(report.elu?.scopes);
  const colors = new Map(scopes.slice(0, PALETTE.length).map((s, i) => [s.name, PALETTE[i]]));
  const color = (scope) => (scope === null || scope === undefined ? UNATTRIBUTED_COLOR : colors.get(scope) ?? OTHER_COLOR);
  return {
    r: report,
    caps: [],
    data: {}, // for the page script: the JSON island
    start: Number(report.meta?.start) || 0,
    /** The colour of `scope` (null: unattributed) in every chart. */
    color,
    /** A scope as HTML: Node-RED nodes by name and type, the scope name beside. */
    scope(scope) {
      if (scope === null || scope === undefined) return '<span class="muted">(unattributed)</span>';
      const node = nodeOf(report, scope);
      if (!node || node.name === undefined) return text(scope);
      return `${text(node.name || node.type || node.id)} <span class="muted">${text(node.type ?? '')} · ${text(scope, 40)}</span>`;
    },
    /** A scope as plain text, for tooltips. */
    scopeText(scope) {
      if (scope === null || scope === undefined) return '(unattributed)';
      const node = nodeOf(report, scope);
      return node && node.name !== undefined ? `${node.name} (${node.type ?? 'node'}, ${scope})` : String(scope);
    },
    swatch: (scope) => `<i class="swatch" style="background:${esc(color(scope))}"></i>`,
  };
}

module.exports = { context, list, nodeOf, PALETTE, OTHER_COLOR, UNATTRIBUTED_COLOR, NODE_PREFIX };

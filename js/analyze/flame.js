'use strict';
// A compact flame tree of a CPU profile, small enough to travel in every report: the profile's
// call tree with nodes of the same function under the same parent merged and idle time left
// out, and rloop's own wrappers too (their callees hang from their callers). Nodes deeper than
// MAX_DEPTH or below MIN_SHARE of the busy time are left out, their time still counted in their
// parent's value; at most MAX_NODES nodes are kept, the heaviest.
// `truncated` counts the merged nodes left out, so a reader knows the tree was pruned.

const { redactLink } = require('../redact');
const { ms } = require('./units');

const MIN_SHARE = 0.001;
const MAX_NODES = 2000;
const MAX_DEPTH = 128;

/**
 * @param p what js/analyze/index.js measured: profile `nodes`, `parent` and `order` (parents first),
 *   `self` µs per node, `fnOf` (function per node), `category` per node and `names` of the
 *   categories, `idle` the idle category, `own` per node: rloop's own frame (left out, its
 *   callees joined to its caller).
 * @returns `{ nodes, truncated, root }`, each node `{ name, url, line, column, generated (at
 *   its original location only), category, value (ms, its own time and its children's),
 *   children (heaviest first) }`.
 */
function flameTree({ nodes, parent, order, self, fnOf, category, names, idle, own }) {
  // Merged nodes, parents before children: a profile node of each, parent, depth, µs, category.
  const first = [];
  const up = [];
  const depth = [];
  const total = [];
  const cat = [];
  const mergedOf = new Int32Array(nodes.length).fill(-1);
  const byParentFn = new Map(); // 'merged parent,function' -> merged node
  for (const i of order) {
    if (category[i] === idle) continue;
    if (own?.[i] && parent[i] >= 0 && mergedOf[parent[i]] >= 0) {
      mergedOf[i] = mergedOf[parent[i]]; // rloop's wrapper: its time and its callees go to its caller
      total[mergedOf[i]] += self[i];
      continue;
    }
    const p = parent[i] >= 0 ? mergedOf[parent[i]] : -1;
    const key = `${p},${p < 0 ? 0 : fnOf[i]}`; // a stray second root joins the first
    let m = byParentFn.get(key);
    if (m === undefined) {
      m = first.length;
      byParentFn.set(key, m);
      first.push(i);
      up.push(p);
      depth.push(p < 0 ? 0 : depth[p] + 1);
      total.push(0);
      cat.push(category[i]);
    }
    mergedOf[i] = m;
    total[m] += self[i];
  }
  if (first.length === 0) return { nodes: 0, truncated: 0, root: null };
  for (let m = first.length - 1; m > 0; m--) total[up[m]] += total[m];

  // A parent weighs at least as much as its children and sorts first on a tie, so the
  // heaviest MAX_NODES above the threshold always include each one's parent.
  const min = MIN_SHARE * total[0];
  let kept = [];
  for (let m = 0; m < first.length; m++) {
    if (m === 0 || (total[m] >= min && total[m] > 0 && depth[m] <= MAX_DEPTH)) kept.push(m);
  }
  if (kept.length > MAX_NODES) kept = kept.sort((a, b) => total[b] - total[a] || depth[a] - depth[b]).slice(0, MAX_NODES);
  kept.sort((a, b) => a - b); // parents before children again

  const out = new Map();
  for (const m of kept) {
    const { functionName, url, lineNumber, columnNumber, generated } = nodes[first[m]].callFrame;
    const node = {
      name: m === 0 ? '(all)' : functionName || '(anonymous)',
      url: m === 0 ? '' : redactLink(url), // a script loaded as 'x.mjs?token=…'
      line: m > 0 && lineNumber >= 0 ? lineNumber + 1 : null,
      column: m > 0 && columnNumber >= 0 ? columnNumber + 1 : null,
      ...(m > 0 && generated && { generated }), // at its original location: where it ran
      category: names[cat[m]],
      value: ms(total[m]),
      children: [],
    };
    out.set(m, node);
    if (m > 0) out.get(up[m]).children.push(node);
  }
  for (const node of out.values()) node.children.sort((a, b) => b.value - a.value);
  return { nodes: kept.length, truncated: first.length - kept.length, root: out.get(0) };
}

module.exports = { flameTree, MAX_NODES };

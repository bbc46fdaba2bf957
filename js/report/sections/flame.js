'use strict';
// The flame graph: the report's flame tree flattened into the page's data island; the page
// script draws it as SVG and zooms and searches it. Capped again here, since a hand-made report
// may hold any tree.

const { clip, visible } = require('../escape');
const { num, plural, shortUrl, locationOf } = require('../format');
const { empty, capped } = require('../table');
const { CATEGORIES } = require('../../schema');
const { list } = require('../context');

const MAX_NAME = 200;
const PAGE_NODES = 2000; // nodes the page draws: a hand-made report may hold any tree

/** Every node of the tree with its parent and depth, parents first; no recursion (deep trees). */
function walk(root) {
  const out = [];
  const stack = [{ node: root, parent: -1, depth: 0 }];
  while (stack.length > 0) {
    const item = stack.pop();
    const index = out.push(item) - 1;
    const children = list(item.node.children);
    for (let i = children.length - 1; i >= 0; i--) stack.push({ node: children[i], parent: index, depth: item.depth + 1 });
  }
  return out;
}

/** A bar's name: an anonymous function is named by where it is, `(anonymous) …/dir/file.js:12`. */
function nameOf(n, loc) {
  const name = typeof n.name === 'string' && n.name !== '' ? n.name : '(anonymous)';
  if (name !== '(anonymous)' || !/:\d+/.test(loc)) return name;
  return `(anonymous) ${shortUrl(n.url)}:${n.line}`;
}

/**
 * The heaviest PAGE_NODES nodes, in preorder, each kept only with its parent, as flat numbers:
 * `[name, location, category, depth, x, width]` per node, strings as indexes into `strings`,
 * x and width in ms.
 */
function flatten(root) {
  const all = walk(root);
  const value = (item) => Math.max(0, Number(item.node.value) || 0);
  let keep = null;
  if (all.length > PAGE_NODES) {
    keep = new Set([...all.keys()].sort((a, b) => value(all[b]) - value(all[a]) || all[a].depth - all[b].depth).slice(0, PAGE_NODES));
  }
  const strings = [];
  const ids = new Map();
  const intern = (s) => {
    const c = visible(clip(s, MAX_NAME)); // shown as text, controls made visible
    if (!ids.has(c)) ids.set(c, strings.push(c) - 1);
    return ids.get(c);
  };
  const nodes = [];
  const kept = new Int32Array(all.length).fill(-1); // the flat index of each kept node
  const nextX = []; // per kept node: where its next child starts
  all.forEach((item, i) => {
    if (keep && !keep.has(i)) return;
    if (item.parent >= 0 && kept[item.parent] < 0) return; // its parent was left out
    const n = item.node;
    const x = item.parent < 0 ? 0 : nextX[kept[item.parent]];
    const w = value(item);
    if (item.parent >= 0) nextX[kept[item.parent]] += w;
    const loc = locationOf(n);
    const cat = CATEGORIES.indexOf(n.category);
    kept[i] = nodes.length / 6;
    nextX.push(x);
    nodes.push(intern(nameOf(n, loc)), intern(loc), cat < 0 ? 0 : cat, item.depth, x, w);
  });
  return { strings, nodes, categories: CATEGORIES, dropped: all.length - nodes.length / 6 };
}

function render(ctx, flame) {
  if (!flame) return empty('This report holds no flame tree: it was written by an rloop that did not record one.');
  if (!flame.root || typeof flame.root !== 'object') return empty('The profile holds no call tree.');
  const data = flatten(flame.root);
  ctx.data.flame = data;
  const left = (Number(flame.truncated) || 0) + data.dropped;
  const note = left > 0
    ? capped(ctx, `Flame graph: ${plural(left, 'call-tree node')} ${left === 1 ? 'is' : 'are'} left out (too small or too deep for the report's tree, or past the heaviest ${num(PAGE_NODES)} the graph draws); their time is in their parents.`)
    : '';
  return `<div class="flame" id="flame-graph">
<div class="toolbar"><input type="search" id="flame-search" placeholder="Search functions and files ( / )" aria-label="Search the flame graph">
<button type="button" id="flame-back" disabled>← Back</button><button type="button" id="flame-reset">Reset zoom</button>
<label class="check"><input type="checkbox" id="flame-heavy"> Left heavy: same frames merged, heaviest first</label><span id="flame-layout-note" class="muted"></span>
<span id="flame-status" class="muted" aria-live="polite"></span></div>
<p class="muted hint">Each bar is a function, as wide as its time and all it called; callers above callees; idle time is left out. Click a bar to zoom and see its call chain; Back or Escape to go back. Keys: Tab to the graph, arrows to move, Enter to zoom, Escape or Backspace to go back, S for the sandwich, / to search.</p>
<ol id="flame-chain" class="chain" aria-label="Call chain from the root" hidden></ol>
<svg id="flame-svg" class="flame-svg" tabindex="0" role="application" aria-roledescription="flame graph" aria-label="Flame graph: arrow keys move between frames, Enter zooms, Escape goes back, S shows callers and callees"></svg>
<div id="flame-sandwich" class="sandwich" hidden><h4 id="sandwich-title"></h4><p id="sandwich-facts" class="facts"></p>
<p class="muted hint">Every call of this function merged, over all its call sites. Callers: who called it, the function at the bottom, its direct callers above it, theirs above them, as wide as its time through them. Callees: what it called. Click a bar to move the sandwich there; Back or Escape returns.</p>
<h4>Callers</h4><svg id="sandwich-callers" class="flame-svg" tabindex="0" role="application" aria-roledescription="flame graph" aria-label="Callers of the function: arrow keys move between frames, Enter shows a frame's callers and callees, Escape goes back"></svg>
<h4>Callees</h4><svg id="sandwich-callees" class="flame-svg" tabindex="0" role="application" aria-roledescription="flame graph" aria-label="Callees of the function: arrow keys move between frames, Enter shows a frame's callers and callees, Escape goes back"></svg></div>
<p id="flame-focus" class="sr-only" aria-live="polite"></p>
<noscript><p class="empty">The flame graph is drawn by the page's script.</p></noscript></div>${note}`;
}

module.exports = { render };

'use strict';
// The flame graph's computations, pure functions on the page's flat nodes (js/report/sections/
// flame.js): `[name, location, category, depth, x, width]` per node, preorder, x and width in ms,
// name and location as indexes into the strings. They run in the page (inlined as
// `(flameModel)()`, so nothing outside the function body may be used) and in the tests.
// A function is its name and location: two frames of it anywhere in the tree are the same.

function flameModel() {
  'use strict';
  const STRIDE = 6;
  const count = (nodes) => nodes.length / STRIDE;
  const keyOf = (nodes, i) => `${nodes[i * STRIDE]},${nodes[i * STRIDE + 1]}`;

  /** Each node's parent (-1 for the root), from the depths. */
  function parents(nodes) {
    const n = count(nodes);
    const up = new Int32Array(n).fill(-1);
    const path = []; // the last node seen at each depth
    for (let i = 0; i < n; i++) {
      const d = nodes[i * STRIDE + 3];
      path[d] = i;
      if (d > 0) up[i] = path[d - 1];
    }
    return up;
  }

  /** Each node's self time: its width less its children's (time of pruned callees included). */
  function selfTimes(nodes, up = parents(nodes)) {
    const n = count(nodes);
    const self = new Float64Array(n);
    for (let i = 0; i < n; i++) self[i] = nodes[i * STRIDE + 5];
    for (let i = 1; i < n; i++) if (up[i] >= 0) self[up[i]] -= nodes[i * STRIDE + 5];
    for (let i = 0; i < n; i++) self[i] = Math.max(0, self[i]);
    return self;
  }

  /** The nodes from the root down to `i`. */
  function chain(up, i) {
    const out = [];
    for (let j = i; j >= 0; j = up[j]) out.push(j);
    return out.reverse();
  }

  /** A tree being merged: nodes of the same function under the same parent are one. */
  function builder() {
    const t = { name: [], loc: [], cat: [], up: [], value: [], index: new Map() };
    t.add = (parent, name, loc, cat, value) => {
      const key = `${parent},${name},${loc}`;
      let m = t.index.get(key);
      if (m === undefined) {
        m = t.name.length;
        t.index.set(key, m);
        t.name.push(name);
        t.loc.push(loc);
        t.cat.push(cat);
        t.up.push(parent);
        t.value.push(0);
      }
      t.value[m] += value;
      return m;
    };
    return t;
  }

  /** A merged tree laid out as flat nodes, children heaviest first (ties keep their order). */
  function layout(t) {
    const n = t.name.length;
    if (n === 0) return [];
    const kids = Array.from({ length: n }, () => []);
    for (let m = 1; m < n; m++) kids[t.up[m]].push(m);
    for (const k of kids) k.sort((a, b) => t.value[b] - t.value[a] || a - b);
    const out = [];
    const stack = [[0, 0, 0]]; // merged node, depth, x
    while (stack.length > 0) {
      const [m, d, x] = stack.pop();
      out.push(t.name[m], t.loc[m], t.cat[m], d, x, t.value[m]);
      let next = x;
      const placed = kids[m].map((c) => {
        const at = next;
        next += t.value[c];
        return [c, d + 1, at];
      });
      for (let k = placed.length - 1; k >= 0; k--) stack.push(placed[k]);
    }
    return out;
  }

  /** The left-heavy view: siblings of the same function merged (their subtrees too), heaviest first. */
  function leftHeavy(nodes) {
    const n = count(nodes);
    const t = builder();
    const up = parents(nodes);
    const mergedOf = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const p = up[i] < 0 ? -1 : mergedOf[up[i]];
      mergedOf[i] = t.add(p, nodes[i * STRIDE], nodes[i * STRIDE + 1], nodes[i * STRIDE + 2], nodes[i * STRIDE + 5]);
    }
    return layout(t);
  }

  /**
   * The sandwich of the function of node `i`: its calls from every call site merged. `total`
   * counts each outermost call once (a recursive call is inside its caller's time), `self` every
   * frame's own time, `sites` the outermost calls. `callees`: what it called, merged, rooted at
   * the function; `callers`: who called it, rooted at the function, its callers one level deeper,
   * each weighted by the function's time through it (the graph's root left out).
   */
  function sandwich(nodes, i, up = parents(nodes), self = selfTimes(nodes, up)) {
    const n = count(nodes);
    const key = keyOf(nodes, i);
    const [name, loc, cat] = [nodes[i * STRIDE], nodes[i * STRIDE + 1], nodes[i * STRIDE + 2]];
    const inside = new Uint8Array(n); // 1: in the subtree of a frame of the function
    const callees = builder();
    const callers = builder();
    const mergedOf = new Int32Array(n).fill(-1);
    let total = 0;
    let selfMs = 0;
    let sites = 0;
    const root = callees.add(-1, name, loc, cat, 0);
    callers.add(-1, name, loc, cat, 0);
    for (let j = 0; j < n; j++) {
      const same = keyOf(nodes, j) === key;
      const p = up[j];
      const w = nodes[j * STRIDE + 5];
      if (same) selfMs += self[j];
      if (same && !(p >= 0 && inside[p])) { // an outermost call
        inside[j] = 1;
        mergedOf[j] = root;
        sites++;
        total += w;
        callees.value[root] += w;
        callers.value[0] += w;
        let m = 0;
        for (let a = p; a > 0; a = up[a]) m = callers.add(m, nodes[a * STRIDE], nodes[a * STRIDE + 1], nodes[a * STRIDE + 2], w);
        continue;
      }
      if (p >= 0 && inside[p]) {
        inside[j] = 1;
        mergedOf[j] = callees.add(mergedOf[p], nodes[j * STRIDE], nodes[j * STRIDE + 1], nodes[j * STRIDE + 2], w);
      }
    }
    return { name, loc, total, self: selfMs, sites, callees: layout(callees), callers: layout(callers) };
  }

  /**
   * The visible node next to `i` in direction 'up' (its caller), 'down' (its heaviest callee),
   * 'left' or 'right' (the neighbour on its row); `shown(j)` says whether node j is drawn.
   */
  function step(nodes, up, i, direction, shown) {
    const n = count(nodes);
    const d = nodes[i * STRIDE + 3];
    if (direction === 'up') return up[i] >= 0 ? up[i] : i;
    if (direction === 'down') {
      for (let j = i + 1; j < n && nodes[j * STRIDE + 3] > d; j++) if (nodes[j * STRIDE + 3] === d + 1 && shown(j)) return j;
      return i;
    }
    const by = direction === 'right' ? 1 : -1;
    for (let j = i + by; j >= 0 && j < n; j += by) if (nodes[j * STRIDE + 3] === d && shown(j)) return j;
    return i;
  }

  return { STRIDE, parents, selfTimes, chain, leftHeavy, sandwich, step };
}

module.exports = { flameModel, ...flameModel() };

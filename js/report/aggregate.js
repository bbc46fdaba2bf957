'use strict';
// Long lists summed into groups, so the page stays small whatever the report holds.

/**
 * `items` grouped by `keyOf(item)`, each group `{ key, items, count, total, max }` of
 * `valueOf(item)`, the largest total first.
 */
function groupBy(items, keyOf, valueOf) {
  const groups = new Map();
  for (const item of items) {
    const key = keyOf(item);
    const value = Number(valueOf(item)) || 0;
    let g = groups.get(key);
    if (g === undefined) groups.set(key, (g = { key, items: [], count: 0, total: 0, max: 0 }));
    g.items.push(item);
    g.count++;
    g.total += value;
    g.max = Math.max(g.max, value);
  }
  return [...groups.values()].sort((a, b) => b.total - a.total);
}

module.exports = { groupBy };

'use strict';
// The flame tree a report carries (js/analyze/flame.js through analyzeWithFlame): merging, idle left
// out, pruning and its count, and the node cap on a large profile. Then the page's computations
// on it (js/report/flame-model.js): self times, chains, the sandwich, the left-heavy layout and
// keyboard steps, on a tree whose truth is known (test/fixtures/flame-reports.js).

const test = require('node:test');
const assert = require('node:assert/strict');
const { analyze, analyzeWithFlame } = require('../../js/analyze');
const { MAX_NODES } = require('../../js/analyze/flame');
const { syntheticProfile, scaleReport } = require('../fixtures/synthetic-reports');
const { sandwichReport, unsortedReport } = require('../fixtures/flame-reports');
const model = require('../../js/report/flame-model');
const { renderHtml } = require('../../js/report/html');

const native = (functionName) => ({ functionName, scriptId: '0', url: '', lineNumber: -1, columnNumber: -1 });
const user = (functionName, line) => ({ functionName, scriptId: '5', url: 'file:///app.js', lineNumber: line - 1, columnNumber: 0 });

/** A profile from [id, callFrame, children] and the node each 1 ms sample hits. */
function profileOf(nodes, hits) {
  return {
    nodes: nodes.map(([id, callFrame, children = []]) => ({ id, callFrame, children })),
    startTime: 0,
    endTime: (hits.length + 1) * 1000, // each sample lasts until the next, the last until the end
    samples: hits,
    timeDeltas: hits.map(() => 1000),
  };
}

function all(node, out = []) {
  out.push(node);
  for (const c of node.children) all(c, out);
  return out;
}

test('calls of one function under one parent merge; idle is left out; values sum up', () => {
  const profile = profileOf(
    [
      [1, native('(root)'), [2, 3, 4]],
      [2, native('(idle)')],
      [3, user('main', 1), [5, 6, 7]],
      [4, native('(garbage collector)')],
      [5, user('parse', 10)], // two nodes of parse under main (V8 splits them by call site)
      [6, user('parse', 10)],
      [7, user('render', 20)],
    ],
    [2, 2, 2, 2, 5, 5, 6, 7, 3, 4],
  );
  const { analysis, flame } = analyzeWithFlame(profile);
  assert.deepStrictEqual(analysis, analyze(profile), 'the same analysis as analyze()');
  const { root } = flame;
  assert.equal(root.name, '(all)');
  assert.equal(root.value, 6, 'busy ms: the 4 idle samples left out');
  assert.deepStrictEqual(root.children.map((c) => [c.name, c.value]), [['main', 5], ['(garbage collector)', 1]]);
  const main = root.children[0];
  assert.deepStrictEqual(main.children.map((c) => [c.name, c.value, c.line, c.category]), [['parse', 3, 10, 'user'], ['render', 1, 20, 'user']]);
  assert.equal(root.children[1].category, 'gc');
  assert.deepStrictEqual([flame.nodes, flame.truncated], [5, 0]);
});

test('frames under 0.1 % of the busy time are left out and counted; their time stays in the parent', () => {
  const hits = [...new Array(2000).fill(3), 4];
  const profile = profileOf([[1, native('(root)'), [3]], [3, user('hot', 1), [4]], [4, user('rare', 2)]], hits);
  const { flame } = analyzeWithFlame(profile);
  const hot = flame.root.children[0];
  assert.equal(hot.name, 'hot');
  assert.deepStrictEqual(hot.children, [], 'rare: 1 of 2001 samples');
  assert.equal(hot.value, 2001, 'rare counted in hot');
  assert.equal(flame.truncated, 1);
});

test('a large profile keeps at most MAX_NODES nodes, each with its parent', () => {
  const profile = syntheticProfile({ samples: 200000, nodeCount: 30000, functions: 3000, seed: 3 });
  const { flame } = analyzeWithFlame(profile);
  const nodes = all(flame.root);
  assert.equal(nodes.length, flame.nodes);
  assert.ok(flame.nodes <= MAX_NODES && flame.nodes > MAX_NODES / 2, `${flame.nodes} nodes`);
  assert.ok(flame.truncated > 0);
  for (const n of nodes) {
    const sum = n.children.reduce((s, c) => s + c.value, 0);
    assert.ok(sum <= n.value + 1e-6, `children of ${n.name} weigh ${sum} > ${n.value}`);
    for (let i = 1; i < n.children.length; i++) assert.ok(n.children[i - 1].value >= n.children[i].value, 'heaviest first');
  }
  assert.ok(JSON.stringify(flame).length < 300 * 1024, 'compact');
});

test("rloop's own wrappers are left out: their callees hang from their callers", () => {
  const url = require('node:url').pathToFileURL(require('node:path').join(__dirname, '..', '..', 'js', 'attribution', 'hooks.js')).href;
  const run = { functionName: 'run', scriptId: '9', url, lineNumber: 100, columnNumber: 2 };
  const profile = profileOf(
    [[1, native('(root)'), [2]], [2, user('listOnTimeout', 5), [3, 5]], [3, run, [4]], [4, user('job', 10)], [5, user('job', 10)]],
    [3, 4, 4, 5],
  );
  const { flame } = analyzeWithFlame(profile);
  const timers = flame.root.children[0];
  assert.deepStrictEqual(timers.children.map((c) => [c.name, c.value]), [['job', 3]], 'both calls of job, under its real caller');
  assert.equal(timers.value, 4, "run's own sample counted in its caller");
  assert.ok(!all(flame.root).some((n) => n.name === 'run'));
});

/** The page's flame data for `report`, and its nodes as readable rows `[name, depth, x, width]`. */
function flat(report) {
  const html = renderHtml(report);
  const { flame } = JSON.parse(html.match(/<script type="application\/json" id="rloop-data">(.*?)<\/script>/s)[1]);
  const rows = (nodes) => Array.from({ length: nodes.length / 6 }, (_, i) => [flame.strings[nodes[i * 6]], nodes[i * 6 + 3], nodes[i * 6 + 4], nodes[i * 6 + 5]]);
  const index = (name) => rows(flame.nodes).findIndex((r) => r[0] === name);
  return { flame, rows, index };
}

test('an anonymous function is named by its file and line', () => {
  const { rows } = flat(sandwichReport());
  const { flame } = flat(sandwichReport());
  assert.ok(rows(flame.nodes).some(([name]) => name === '(anonymous) …/src/app.js:30'));
  assert.ok(!flame.strings.includes('(anonymous)'));
});

test('self time is a frame\'s width less its callees\'; the chain runs from the root', () => {
  const { flame, index } = flat(sandwichReport());
  const up = model.parents(flame.nodes);
  const self = model.selfTimes(flame.nodes, up);
  const selfOf = (name) => self[index(name)];
  assert.deepEqual(['(all)', 'main', 'a', 'shared', 'leaf', 'worker'].map(selfOf), [0, 1, 1, 3, 2, 1]);
  assert.deepEqual(model.chain(up, index('leaf')).map((i) => flame.strings[flame.nodes[i * 6]]), ['(all)', 'main', 'a', 'shared', 'leaf']);
});

test('the sandwich merges a function over its call sites: recursion counted once, callers and callees weighted', () => {
  const { flame, rows, index } = flat(sandwichReport());
  const s = model.sandwich(flame.nodes, index('shared'));
  assert.deepEqual([flame.strings[s.name], s.total, s.self, s.sites], ['shared', 10, 8, 3]);
  assert.deepEqual(rows(s.callers).map(([name, depth, , w]) => [name, depth, w]),
    [['shared', 0, 10], ['a', 1, 5], ['main', 2, 5], ['worker', 1, 3], ['b', 1, 2], ['main', 2, 2]]);
  assert.deepEqual(rows(s.callees).map(([name, depth, x, w]) => [name, depth, x, w]),
    [['shared', 0, 0, 10], ['leaf', 1, 0, 2], ['shared', 1, 2, 1]]);
  const leaf = model.sandwich(flame.nodes, index('leaf'));
  assert.deepEqual(rows(leaf.callers).map(([name, , , w]) => [name, w]), [['leaf', 2], ['shared', 2], ['a', 2], ['main', 2]]);
  assert.deepEqual(rows(leaf.callees), [['leaf', 0, 0, 2]]);
});

test('left heavy: the same function under one parent merged, heaviest first, laid out end to end', () => {
  const { flame, rows } = flat(unsortedReport());
  const main = (r) => r.filter(([, depth, x]) => depth === 2 && x < 12).map(([name, , x, w]) => [name, x, w]);
  assert.deepEqual(main(rows(flame.nodes)).map(([name]) => name), ['b', '(anonymous) …/src/app.js:30', 'a', 'a'], 'as the report holds it');
  const heavy = model.leftHeavy(flame.nodes);
  assert.deepEqual(main(rows(heavy)), [['a', 0, 6], ['(anonymous) …/src/app.js:30', 6, 3], ['b', 9, 2]]);
  assert.deepEqual(rows(heavy).find(([name]) => name === 'leaf'), ['leaf', 4, 0, 2], 'a\'s callees kept under the merged a');
  const sorted = flat(sandwichReport()).flame.nodes;
  assert.deepEqual(model.leftHeavy(sorted), sorted, 'a captured tree is merged and sorted already');
});

test('arrow keys step to the caller, the heaviest callee and the neighbours on the row', () => {
  const { flame, index } = flat(sandwichReport());
  const up = model.parents(flame.nodes);
  const all = () => true;
  const step = (from, dir, shown = all) => flame.strings[flame.nodes[model.step(flame.nodes, up, index(from), dir, shown) * 6]];
  assert.equal(step('leaf', 'up'), 'shared');
  assert.equal(step('main', 'down'), 'a');
  assert.equal(step('a', 'right'), '(anonymous) …/src/app.js:30');
  assert.equal(step('a', 'left'), 'a', 'nothing to its left');
  const next = model.step(flame.nodes, up, index('shared'), 'right', all);
  assert.equal(flame.strings[flame.nodes[up[next] * 6]], 'b', 'the next frame on its row, under another caller');
  assert.equal(step('main', 'right', (j) => j !== index('worker')), 'main', 'hidden frames are skipped');
  assert.equal(step('(all)', 'up'), '(all)');
});

test('the page\'s computations on the 100 k-sample report take a few milliseconds', () => {
  const { flame } = flat(scaleReport({ samples: 100000, ioEvents: 10 }));
  const up = model.parents(flame.nodes);
  let t = performance.now();
  const heavy = model.leftHeavy(flame.nodes);
  const heavyMs = performance.now() - t;
  assert.equal(heavy.length, flame.nodes.length, 'nothing to merge in a captured tree');
  t = performance.now();
  for (let i = 1; i < 50; i++) model.sandwich(flame.nodes, i, up);
  const sandwichMs = (performance.now() - t) / 49;
  assert.ok(heavyMs < 100 && sandwichMs < 50, `left heavy ${heavyMs.toFixed(1)} ms, a sandwich ${sandwichMs.toFixed(1)} ms`);
});

'use strict';
// The flame tree a report carries (js/flame.js through analyzeWithFlame): merging, idle left
// out, pruning and its count, and the node cap on a large profile.

const test = require('node:test');
const assert = require('node:assert/strict');
const { analyze, analyzeWithFlame } = require('../js/analyze');
const { MAX_NODES } = require('../js/flame');
const { syntheticProfile } = require('./fixtures/synthetic-reports');

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
  const url = require('node:url').pathToFileURL(require('node:path').join(__dirname, '..', 'js', 'hooks.js')).href;
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

'use strict';
// Each benchmark script starts and names a bad option, in seconds: the benchmarks themselves run
// with `npm run bench`, their end-to-end checks with `npm run bench:check` (bench/check/).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');

/** Runs `node bench/<args>` and resolves to its exit status and stderr. */
function bench(...args) {
  const r = spawnSync(process.execPath, args.map((a, i) => (i === 0 ? path.join('bench', a) : a)), { cwd: root, encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stderr: r.stderr };
}

for (const [args, message] of [
  [['run.js', '--rounds', '0'], /--rounds/],
  [['keys.js', '--rounds', '0'], /--rounds must be a positive integer/],
  [['metrics.js', '--scrapes', 'x'], /--scrapes must be a positive integer/],
  [['instructions.js', '--only', 'memory'], /unknown workload: memory/],
  [['instructions.js', '--scale', '0'], /--scale must be a positive number/],
  [['attach.js', '--rounds', '0'], /--rounds must be an integer/],
  [['memory.js', '--churn-keys', '0'], /--churn-keys must be a positive number, got 0/],
  [['node-red.js', '--instructions', '--messages', '401'], /--messages must be a multiple of 4 and at least 400, got 401/],
  [['node-red.js', '--configs', 'on,nope'], /unknown configuration: nope/],
  [['node-red.js', '--instructions', '--warmup', '0'], /--warmup must be a positive number, got 0/],
  [['node-red.js', '--instructions', '--runs', 'x'], /--runs must be a positive number, got x/],
]) {
  test(`bench/${args.join(' ')} exits with the bad option named`, () => {
    const r = bench(...args);
    assert.notEqual(r.status, 0, 'exit status');
    assert.match(r.stderr, message);
  });
}

test('the median\'s 95 % interval: order statistics n/2 ∓ 0.98·√n, the extremes for few values', () => {
  const { medianInterval } = require('../../bench/stats');
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // unsorted on purpose
  assert.deepEqual(medianInterval(hundred), [40, 61]); // ranks 40 and 61 of 100, as tabulated
  assert.deepEqual(medianInterval([3, 1, 2, 7, 5, 6, 4]), [1, 7]);
  assert.deepEqual(medianInterval([5]), [5, 5]);
});

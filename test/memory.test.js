'use strict';
// Bounded memory: nothing rloop keeps grows with the number of async operations.

const test = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const path = require('node:path');

test('10 M async operations, unawaited promises among them: RSS grows < 10 MB after GC', { timeout: 600_000 }, (t) => {
  const out = execFileSync(process.execPath, ['--expose-gc', path.join(__dirname, 'fixtures', 'memory-churn.js'), '10000000'], { encoding: 'utf8' });
  const r = JSON.parse(out);
  t.diagnostic(`${r.resources} async resources: RSS +${r.rssMb.toFixed(2)} MB, heap used +${r.heapUsedMb.toFixed(2)} MB`);
  assert.ok(r.resources >= 10_000_000);
  assert.strictEqual(r.scopes, 10);
  assert.ok(r.rssMb < 10, `RSS grew ${r.rssMb.toFixed(2)} MB`);
  assert.ok(r.heapUsedMb < 1, `heap used grew ${r.heapUsedMb.toFixed(2)} MB`);
});

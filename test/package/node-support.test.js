'use strict';
// Node releases without the fix of CVE-2025-59466 (a stack overflow uncatchable while an async
// hook is enabled): package.json's engines names the fixed minimums, and start() on an older
// release warns once, never throws.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { unpatched } = require('../../js/node-support');

const ROOT = path.resolve(__dirname, '..', '..');

test('the releases without the fix, line by line', () => {
  const cases = {
    '20.19.5': true, '20.20.0': false, '20.20.2': false,
    '21.7.3': true,
    '22.21.1': true, '22.22.0': false, '22.23.5': false,
    '23.11.1': true,
    '24.12.0': true, '24.13.0': false, '24.22.3': false,
    '25.2.1': true, '25.3.0': false,
    '26.0.0': false, '27.1.0': false,
  };
  assert.deepEqual(Object.fromEntries(Object.keys(cases).map((v) => [v, unpatched(v)])), cases);
});

test("package.json's engines names the fixed minimums", () => {
  const { engines } = require('../../package.json');
  assert.equal(engines.node, '^20.20.0 || ^22.22.0 || ^24.13.0 || >=25.3.0');
  for (const range of engines.node.split('||')) assert.equal(unpatched(range.replace(/[\^>= ]/g, '')), false, range);
});

/** Runs `body` in a fresh Node with rloop at hand; answers the warnings it emitted. */
function warningsOf(body) {
  const script = `const rloop = require(${JSON.stringify(ROOT)}); const seen = [];
    process.on('warning', (w) => seen.push(w.code));
    ${body}
    setImmediate(() => console.log(JSON.stringify(seen)));`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test('on an unfixed release the warning comes once a process, whatever starts', () => {
  const seen = warningsOf(`const { warnIfUnpatched } = require(${JSON.stringify(path.join(ROOT, 'js', 'node-support'))});
    warnIfUnpatched('22.21.0'); warnIfUnpatched('22.21.0'); rloop.start().stop();`);
  assert.deepEqual(seen, ['RLOOP_UNPATCHED_NODE']);
});

test(`start() on this release (${process.versions.node}) warns ${unpatched(process.versions.node) ? 'once' : 'nothing'}`, () => {
  const seen = warningsOf('rloop.start().stop(); rloop.start().stop();');
  assert.deepEqual(seen, unpatched(process.versions.node) ? ['RLOOP_UNPATCHED_NODE'] : []);
});

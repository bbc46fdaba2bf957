'use strict';
// index.d.ts describes the API as used: a TypeScript file using it compiles, and misuse does not.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

test('index.d.ts type-checks a typical use and rejects misuse', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-types-'));
  try {
    fs.mkdirSync(path.join(dir, 'node_modules'));
    fs.symlinkSync(path.join(__dirname, '..', '..'), path.join(dir, 'node_modules', 'rloop'));
    fs.copyFileSync(path.join(__dirname, '..', 'fixtures', 'types-usage.ts'), path.join(dir, 'usage.ts'));
    const tsc = require.resolve('typescript/bin/tsc');
    const r = spawnSync(process.execPath, [tsc, '--noEmit', '--strict', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--types', 'node', '--typeRoots', path.join(__dirname, '..', '..', 'node_modules', '@types'), 'usage.ts'], {
      cwd: dir,
      encoding: 'utf8',
    });
    assert.strictEqual(r.status, 0, r.stdout + r.stderr);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

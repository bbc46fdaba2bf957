'use strict';
// Nothing of the app's runs in rloop's own thread, and a report keeps the process's own name:
// the app's preloads (NODE_OPTIONS, the command line) run once, in the app's thread, not again in
// rloop's stack-sampling worker; `{pid}` is the process's id though the app replaced
// global.process (pino's tests put `{ __proto__: process, pid: 123456 }` there).

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const APP = path.join(__dirname, '..', 'fixtures', 'stalling-app.js');
const WITNESS = path.join(__dirname, '..', 'fixtures', 'preload-witness.js');

function runApp(args, { execArgv = [], nodeOptions } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-preloads-'));
  const witness = path.join(dir, 'threads');
  const env = { ...process.env, RLOOP_TEST_WITNESS: witness };
  if (nodeOptions) env.NODE_OPTIONS = [process.env.NODE_OPTIONS, nodeOptions].filter(Boolean).join(' ');
  const r = spawnSync(process.execPath, [...execArgv, APP, ...args.map((a) => a.replaceAll('DIR', dir))], { encoding: 'utf8', env, timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  return { dir, threads: fs.existsSync(witness) ? fs.readFileSync(witness, 'utf8').split('\n').filter(Boolean) : [], pid: r.pid };
}

for (const [how, options] of [['NODE_OPTIONS', { nodeOptions: `--require ${WITNESS}` }], ['the command line', { execArgv: ['--require', WITNESS] }]]) {
  test(`a preload from ${how} runs in the app's thread only, not in rloop's sampler`, () => {
    const { dir, threads } = runApp([], options);
    fs.rmSync(dir, { recursive: true, force: true });
    assert.deepEqual(threads, ['0']);
  });
}

test("{pid} is the process's own id, and so is the report's, though the app replaced global.process", () => {
  const { dir, pid } = runApp(['replace-process', 'DIR/rloop-{pid}.json']);
  try {
    assert.deepEqual(fs.readdirSync(dir).filter((f) => f.startsWith('rloop-')), [`rloop-${pid}.json`]);
    assert.equal(JSON.parse(fs.readFileSync(path.join(dir, `rloop-${pid}.json`), 'utf8')).meta.pid, pid);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

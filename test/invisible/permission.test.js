'use strict';
// Node's permission model (--permission; --experimental-permission on Node 20): rloop under it
// says what it lacks in one line and leaves the app as it is, and its addon, which the model
// does not bind, writes no report where the app may not write.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn, spawnSync } = require('node:child_process');
const { assertValidReport } = require('../fixtures/report');

const ROOT = path.join(__dirname, '..', '..');
const PERMISSION = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
const tmp = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-permission-')));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
const APP = path.join(tmp, 'app.js');
fs.writeFileSync(APP, "const end = Date.now() + 200; while (Date.now() < end);\nsetTimeout(() => console.log('app done'), 50);\n");
const REGISTER = path.join(ROOT, 'register', 'index.js');

function run(flags, env = {}) {
  return spawnSync(process.execPath, [PERMISSION, '--allow-fs-read=*', ...flags, '-r', REGISTER, APP], {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 30000,
    env: { PATH: process.env.PATH, ...env },
  });
}
const rloopLines = (stderr) => stderr.split('\n').filter((l) => l.startsWith('rloop:'));

test('no --allow-addons: one line that says so, and the app runs as without rloop', () => {
  const r = run([`--allow-fs-write=${tmp}`]);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stdout, 'app done\n');
  assert.deepStrictEqual(rloopLines(r.stderr), ["rloop: not started: this process may not load native addons (Node's permission model): run node with --allow-addons"]);
});

test('no --allow-fs-write for the report: not started, and why, before anything runs', () => {
  const r = run(['--allow-addons']);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stdout, 'app done\n');
  const lines = rloopLines(r.stderr);
  assert.strictEqual(lines.length, 1, r.stderr);
  assert.match(lines[0], /^rloop: not started: RLOOP_JSON \(default\): option 'json': \S+rloop-\d+\.json may not be written: Node's permission model allows it with --allow-fs-write$/);
});

test('allowed to write the report (and no worker): written, nothing said', () => {
  const out = path.join(tmp, 'allowed');
  fs.mkdirSync(out);
  const r = run(['--allow-addons', `--allow-fs-write=${out}`], { RLOOP_JSON: path.join(out, 'r.json') });
  assert.strictEqual(r.status, 0, r.stderr);
  assert.deepStrictEqual(rloopLines(r.stderr), []);
  const report = JSON.parse(fs.readFileSync(path.join(out, 'r.json'), 'utf8'));
  assertValidReport(report);
  assert.ok(report.elu.thread.busyMs > 150, `busy ${report.elu.thread.busyMs} ms`);
});

/** A loop blocked for good, SIGTERM'd: the addon writes the report, the JS cannot. */
async function blockedAndTerminated(json, writable) {
  const app = path.join(tmp, 'block.js');
  fs.writeFileSync(app, "console.log('blocking'); while (true);\n");
  const child = spawn(process.execPath, [PERMISSION, '--allow-fs-read=*', '--allow-addons', `--allow-fs-write=${writable}`, '-r', REGISTER, app], {
    cwd: tmp,
    env: { PATH: process.env.PATH, RLOOP_JSON: json },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  await new Promise((resolve) => child.stdout.once('data', resolve));
  await new Promise((resolve) => setTimeout(resolve, 300));
  child.kill('SIGTERM');
  const [code, signal] = await new Promise((resolve) => child.once('exit', (...a) => resolve(a)));
  return { code, signal, stderr };
}

test('a signal on a blocked loop: the addon writes the report only where the app may write', async () => {
  // {n} in the folder: not checked at start (it differs per capture), so the addon is the last guard.
  for (const [folder, writable, written] of [['free-1', 'free-1', true], ['forbidden-1', 'free-1', false]]) {
    fs.mkdirSync(path.join(tmp, folder), { recursive: true });
    const json = path.join(tmp, folder.replace('-1', '-{n}'), 'r.json');
    const r = await blockedAndTerminated(json, path.join(tmp, writable));
    assert.strictEqual(r.signal, 'SIGTERM', r.stderr);
    assert.strictEqual(fs.existsSync(path.join(tmp, folder, 'r.json')), written, `${folder}: ${r.stderr}`);
  }
});

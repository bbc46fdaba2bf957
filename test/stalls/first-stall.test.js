'use strict';
// The stack sampler that interrupts the thread itself (src/stalls/interrupt.rs) is armed at start:
// it makes nothing an app's async hooks could see, so even a process's first stall, often its
// only one, carries the blocker's stack.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..', '..');
const APP = path.join(__dirname, '..', 'fixtures', 'first-stall-app.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-first-stall-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function run(args, env) {
  const r = spawnSync(process.execPath, [...args, APP], { cwd: tmp, encoding: 'utf8', timeout: 30000, env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env } });
  assert.strictEqual(r.stderr, '');
  assert.strictEqual(r.status, 0);
  return r;
}

/** The stalls after rloop started: the blocker's alone, with its stack from the interrupt. */
function assertBlockerStack(stalls, mode) {
  const after = stalls.filter((e) => !e.atStart);
  assert.deepStrictEqual(after.map((e) => e.scope), ['blocker'], `${mode}: ${JSON.stringify(after)}`);
  const [stall] = after;
  assert.ok(stall.lagMs >= 290, `${mode}: ${stall.lagMs}`);
  assert.strictEqual(stall.stackFrom, 'sampler', mode);
  assert.ok(stall.stack, `${mode}: the first stall has no stack`);
  assert.deepStrictEqual(stall.stack.slice(0, 2).map((f) => [f.functionName, f.url, f.line]), [
    ['blockFor', `file://${APP}`, 13],
    ['(anonymous)', `file://${APP}`, 16],
  ], mode);
}

test("a 300 ms block in scope 'blocker', the only stall of the process, gets its stack", () => {
  const json = path.join(tmp, 'r-{pid}.json');
  const zero = run(['-r', path.join(ROOT, 'register')], { RLOOP_JSON: json });
  const report = JSON.parse(fs.readFileSync(json.replace('{pid}', zero.pid), 'utf8'));
  assertBlockerStack(report.lag.events, '-r rloop/register');

  const started = run([], { FIRST_STALL_START: '1' });
  assertBlockerStack(started.stdout.trim().split('\n').map((l) => JSON.parse(l)), 'start()');
});

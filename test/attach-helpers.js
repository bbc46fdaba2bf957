'use strict';
// Shared by the attach and top tests: target apps as real child processes (their inspector on a
// port of their own, so tests can run side by side), the rloop command run against them, and
// what an app says about itself over IPC.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const assert = require('node:assert');
const { once } = require('node:events');
const { setTimeout: sleep } = require('node:timers/promises');
const { listening } = require('../cli/attach/inspector');

const CLI = path.join(__dirname, '..', 'cli', 'rloop.js');
const FIXTURES = path.join(__dirname, 'fixtures', 'attach');

/**
 * Starts `file` under this Node with IPC; resolves once it says it is ready. `--inspect-port=0`:
 * SIGUSR1 opens the inspector on a free port (`inspectPort`: on that one); `--expose-internals`: state.cjs reads Node's count of
 * enabled async hooks. `inspect`: the inspector open from the start instead.
 */
async function startApp(file, { args = [], cwd = path.dirname(path.resolve(file)), inspect = false, inspectPort = 0 } = {}) {
  file = path.resolve(file);
  const child = spawn(process.execPath, [inspect ? '--inspect=127.0.0.1:0' : `--inspect-port=${inspectPort}`, '--expose-internals', '--no-deprecation', '--no-warnings', file, ...args], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  child.output = '';
  child.stdout.on('data', (d) => { child.output += d; });
  child.stderr.on('data', (d) => { child.output += d; });
  child.exited = once(child, 'exit').then(([code, signal]) => ({ code, signal }));
  const [m] = await Promise.race([once(child, 'message'), child.exited.then((e) => { throw new Error(`app exited: ${JSON.stringify(e)} ${child.output}`); })]);
  if (!m.ready) throw new Error(`app said ${JSON.stringify(m)}`);
  return child;
}

/** The app's answer to `message` (its next IPC message). */
async function ask(child, message) {
  const reply = once(child, 'message');
  child.send(message);
  const [m] = await reply;
  return m;
}

/** Runs the rloop command; resolves to { code, stdout, stderr }. `child` is there to be signalled. */
function rloop(args, { env = {} } = {}) {
  const child = spawn(process.execPath, [CLI, ...args.map(String)], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => { stdout += d; });
  child.stderr.on('data', (d) => { stderr += d; });
  const done = once(child, 'exit').then(([code]) => ({ code, stdout, stderr }));
  done.child = child;
  return done;
}

/** Resolves once `re` matches `stream`'s output; rejects with the output if it ends first. */
function seen(stream, re) {
  return new Promise((resolve, reject) => {
    let all = '';
    const on = (d) => {
      all += d;
      if (re.test(all)) {
        stream.off('data', on).off('end', end);
        resolve(all);
      }
    };
    const end = () => reject(new Error(`the output ended without ${re}: ${all}`));
    stream.on('data', on).on('end', end);
  });
}

/**
 * What the app reported before anything attached equals its state now, once the inspector rloop
 * opened is closed again (1.5 s after leaving: cli/attach/agent.js) and the app listens where it
 * listened before: no global, hook, listener or patch of rloop's is left.
 */
async function assertLeftNothing(app, inspectorsBefore) {
  // The close comes CLOSE_AFTER_MS after leaving, in the target's loop: on a loaded machine, later.
  for (let i = 0; i < 100 && listening(app.pid).length > inspectorsBefore.length; i++) await sleep(100);
  assert.deepStrictEqual(listening(app.pid), inspectorsBefore);
  const { before, now } = await ask(app, 'state');
  assert.deepStrictEqual(now, before);
  assert.ok(now.monitored === 0 || now.monitored === null, `threads monitored: ${now.monitored}`);
  assert.deepStrictEqual(now.asyncHooks, [0, 0, 0, 0, 0, 0]);
}

/** A temp folder removed after the file's tests. */
function tmpDir(t, prefix) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

module.exports = { CLI, FIXTURES, startApp, ask, rloop, seen, tmpDir, assertLeftNothing };

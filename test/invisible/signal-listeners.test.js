'use strict';
// An app's own SIGTERM listener that removes itself and raises the signal again — a cleanup,
// then death by the signal, as `process.once` with `process.kill` and signal-exit (used by
// much of npm) do: the app ends exactly as without rloop, and the report is written.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { assertValidReport } = require('../fixtures/report');

const APP = path.join(__dirname, '..', 'fixtures', 'signal-listener-app.js');
const REGISTER = path.join(__dirname, '..', '..', 'register', 'index.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-signal-listeners-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs the app, SIGTERMs it 300 ms after it is ready; resolves to how it ended. */
async function terminated(mode, preload, env = {}) {
  const child = spawn(process.execPath, [...(preload ? ['-r', REGISTER] : []), APP, mode], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (d) => { stderr += d; });
  await new Promise((resolve) => child.stdout.on('data', (d) => {
    stdout += d;
    if (stdout.includes('ready\n')) resolve();
  }));
  await new Promise((resolve) => setTimeout(resolve, 300));
  child.kill('SIGTERM');
  const [code, signal] = await new Promise((resolve) => child.once('exit', (...a) => resolve(a)));
  return { code, signal, stdout, stderr };
}

// The capture starts before the app's listener is added (a preload), or after (RLOOP_DELAY: the
// listener was there first, so rloop must not take the signal, only be back once it is gone).
for (const [mode, delay] of [['once', null], ['signal-exit', null], ['signal-exit', '200']]) {
  const when = delay === null ? 'capture first' : 'listener first';
  test(`a listener that raises SIGTERM again (${mode}, ${when}): the app's cleanup, death by the signal, and the report`, async () => {
    const plain = await terminated(mode, false);
    assert.strictEqual(plain.signal, 'SIGTERM', 'without rloop the app dies by the signal');
    assert.match(plain.stdout, /cleanup/);
    const json = path.join(tmp, `${mode}-${when}.json`);
    const watched = await terminated(mode, true, { RLOOP_JSON: json, ...(delay ? { RLOOP_DELAY: delay } : {}) });
    assert.deepStrictEqual([watched.code, watched.signal, watched.stdout, watched.stderr], [plain.code, plain.signal, plain.stdout, '']);
    const report = JSON.parse(fs.readFileSync(json, 'utf8'));
    assertValidReport(report);
    assert.strictEqual(report.meta.reason, 'SIGTERM');
    if (delay === null) assert.ok(report.lag.events.some((e) => e.lagMs >= 100), JSON.stringify(report.lag.events));
  });
}

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
const { assertValidReport } = require('./report');

const APP = path.join(__dirname, 'fixtures', 'signal-listener-app.js');
const REGISTER = path.join(__dirname, '..', 'register', 'index.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-signal-listeners-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Runs the app, SIGTERMs it 300 ms after it is ready; resolves to how it ended. */
async function terminated(mode, preload, json) {
  const child = spawn(process.execPath, [...(preload ? ['-r', REGISTER] : []), APP, mode], {
    env: { PATH: process.env.PATH, ...(json ? { RLOOP_JSON: json } : {}) },
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

for (const mode of ['once', 'signal-exit']) {
  test(`a listener that raises SIGTERM again (${mode}): the app's cleanup, death by the signal, and the report`, async () => {
    const plain = await terminated(mode, false);
    assert.strictEqual(plain.signal, 'SIGTERM', 'without rloop the app dies by the signal');
    assert.match(plain.stdout, /cleanup/);
    const json = path.join(tmp, `${mode}.json`);
    const watched = await terminated(mode, true, json);
    assert.deepStrictEqual([watched.code, watched.signal, watched.stdout, watched.stderr], [plain.code, plain.signal, plain.stdout, '']);
    const report = JSON.parse(fs.readFileSync(json, 'utf8'));
    assertValidReport(report);
    assert.strictEqual(report.meta.reason, 'SIGTERM');
    assert.ok(report.lag.events.some((e) => e.lagMs >= 100), JSON.stringify(report.lag.events));
  });
}

'use strict';
// Zero-code use on a real app that knows nothing of rloop: `node -r rloop/register`, or NODE_OPTIONS.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { assertValidReport } = require('./report');

const ROOT = path.join(__dirname, '..');
const APP = path.join(__dirname, 'fixtures', 'plain-app.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-register-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
// The app's folder has rloop installed, as `npm install rloop` would.
fs.mkdirSync(path.join(tmp, 'node_modules'));
fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'rloop'));
const reports = () => fs.readdirSync(tmp).filter((f) => f.endsWith('.json'));

function runApp(args, env) {
  return spawnSync(process.execPath, [...args, APP], {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 30000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
}

test('node -r rloop/register writes the report when the app exits', () => {
  const r = runApp(['-r', 'rloop/register'], { RLOOP_PROFILE: '1', RLOOP_CPUPROFILE: 'app.cpuprofile' });
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stdout, 'app done\n', 'the app ran as usual');
  assert.strictEqual(r.stderr, '');
  const report = JSON.parse(fs.readFileSync(path.join(tmp, `rloop-${r.pid}.json`), 'utf8'));
  assertValidReport(report);
  assert.strictEqual(report.meta.partial, true);
  assert.strictEqual(report.meta.reason, 'exit');
  assert.ok(report.meta.durationMs > 1900, `captured ${report.meta.durationMs} ms`);
  assert.ok(report.elu.thread.busyMs > 150, 'busy time was measured');
  const stall = report.lag.events.find((e) => e.lagMs >= 110);
  assert.ok(stall && stall.stack.some((f) => f.functionName === 'spin'), JSON.stringify(report.lag.events));
  for (const type of ['http', 'http-in']) {
    const agg = report.io.aggregates.find((a) => a.type === type);
    assert.ok(agg && agg.count > 50, `${type} operations were counted`);
  }
  assert.ok(!JSON.stringify(report).includes('secret'), 'query strings never reach the report');
  assert.ok(report.profile.analysis.samples > 100);
  assert.ok(fs.statSync(path.join(tmp, 'app.cpuprofile')).size > 1000);
});

test('through NODE_OPTIONS, with a timed capture and paths from the environment', () => {
  const out = path.join(tmp, 'timed-{pid}.json');
  const r = runApp([], {
    NODE_OPTIONS: `--require ${path.join(ROOT, 'register', 'index.js')}`,
    RLOOP_DURATION: '1000',
    RLOOP_JSON: out,
    RLOOP_LAG_THRESHOLD: '20',
    RLOOP_IO_THRESHOLD: 'off',
  });
  assert.strictEqual(r.status, 0, r.stderr);
  const report = JSON.parse(fs.readFileSync(out.replace('{pid}', r.pid), 'utf8'));
  assertValidReport(report);
  assert.strictEqual(report.meta.partial, false);
  assert.ok(Math.abs(report.meta.durationMs - 1000) < 150);
  assert.strictEqual(report.meta.options.lagThreshold, 20);
  assert.strictEqual(report.io.enabled, false);
  assert.strictEqual(report.profile, null);
});

test('a bad variable is reported and rloop stays off; the app runs as without it', () => {
  const plain = runApp([], {});
  const before = reports();
  for (const [env, message] of [
    [{ RLOOP_DURATION: 'soon' }, /RLOOP_DURATION must be a whole number/],
    [{ RLOOP_PROFILE: 'yes' }, /RLOOP_PROFILE must be 0 or 1/],
    [{ RLOOP_WINDOW_MS: '1' }, /option 'windowMs' must be between 10 and/],
    [{ RLOOP_JSOM: 'x.json' }, /unknown variable RLOOP_JSOM/],
  ]) {
    const r = runApp(['-r', 'rloop/register'], env);
    assert.strictEqual(r.status, plain.status);
    assert.strictEqual(r.stdout, plain.stdout);
    assert.match(r.stderr, message);
    assert.match(r.stderr, /^rloop: not started: /);
  }
  assert.deepStrictEqual(reports(), before, 'no report was written');
});

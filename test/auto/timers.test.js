'use strict';
// Automatic timer scopes on an app that knows nothing of rloop, run zero-code: each interval
// created outside any scope is charged to `setInterval at <file>:<line>` of the app's code that
// created it, and its scope shows what its work costs.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { assertValidReport } = require('../fixtures/report');

const ROOT = path.join(__dirname, '..', '..');
const SOURCE = fs.readFileSync(path.join(__dirname, '..', 'fixtures', 'auto-timers-app.js'), 'utf8');
const TOLERANCE = 3; // ELU points
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-auto-timers-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// The app in its own folder, as `app.js`, with a package that makes timers of its own.
fs.writeFileSync(path.join(tmp, 'app.js'), SOURCE);
fs.mkdirSync(path.join(tmp, 'node_modules', 'ticker'), { recursive: true });
const TICKER = `'use strict';
function spin(ms) { const s = performance.now(); while (performance.now() < s + ms); return performance.now() - s; }
exports.work = { called: 0, own: 0 };
exports.start = () => setInterval(() => { exports.work.called += spin(2); }, 50);
setImmediate(() => setInterval(() => { exports.work.own += spin(2); }, 50));
`;
fs.writeFileSync(path.join(tmp, 'node_modules', 'ticker', 'index.js'), TICKER);

/** The line of `source` that holds `text`, 1-based. */
function lineOf(source, text) {
  return source.split('\n').findIndex((l) => l.includes(text)) + 1;
}

function runApp(env) {
  const r = spawnSync(process.execPath, ['-r', path.join(ROOT, 'register'), 'app.js'], {
    cwd: tmp,
    encoding: 'utf8',
    timeout: 30000,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
  });
  assert.strictEqual(r.status, 0, r.stderr);
  return r;
}

test('each interval of the app is its own scope, named by file:line, within 3 points of its work', () => {
  const json = path.join(tmp, 'timers.json');
  const r = runApp({ RUN_MS: '4000', RLOOP_JSON: json });
  assert.strictEqual(r.stderr, '');
  const work = JSON.parse(r.stdout);
  const report = JSON.parse(fs.readFileSync(json, 'utf8'));
  assertValidReport(report);
  const duration = report.meta.durationMs;
  const points = (ms) => (ms / duration) * 100;
  const seen = report.elu.scopes.map((s) => `${s.name} ${s.busyMs.toFixed(0)} ms`).join(', ') + ` work ${JSON.stringify(work)} in ${duration}`;
  const expected = {
    [`setInterval at app.js:${lineOf(SOURCE, '// fast')}`]: work.fast,
    [`setInterval at app.js:${lineOf(SOURCE, '// slow')}`]: work.slow,
    [`setInterval at app.js:${lineOf(SOURCE, '// chained')}`]: work.chained, // its promise and timer inherit it
    // A package's timer is named after the app's code that called the package...
    [`setInterval at app.js:${lineOf(SOURCE, 'ticker.start()')}`]: work.ticker.called,
    // ...and after the package when no code of the app made it.
    [`setInterval at node_modules/ticker/index.js:${lineOf(TICKER, 'setImmediate(')}`]: work.ticker.own,
  };
  for (const [name, ms] of Object.entries(expected)) {
    const scope = report.elu.scopes.find((s) => s.name === name);
    assert.ok(scope, `${name} is a scope (scopes: ${seen})`);
    assert.ok(ms > 50, `${name} did its work (${seen})`);
    const diff = points(scope.busyMs) - points(ms);
    assert.ok(Math.abs(diff) <= TOLERANCE, `${name}: ${points(scope.busyMs).toFixed(1)} points, its work ${points(ms).toFixed(1)} (scopes: ${seen})`);
  }
  const chained = `setTimeout at app.js:${lineOf(SOURCE, 'setTimeout(() => { work.chained')}`;
  assert.ok(!report.elu.scopes.some((s) => s.name === chained), 'a timer made inside a timer\'s scope inherits it');
});

test('RLOOP_AUTO_SCOPES picks them, "off" turns them off; a bad value keeps rloop off', () => {
  const names = (value) => {
    const json = path.join(tmp, `auto-${value}.json`);
    const r = runApp({ RUN_MS: '300', RLOOP_JSON: json, RLOOP_AUTO_SCOPES: value });
    assert.strictEqual(r.stderr, '');
    const report = JSON.parse(fs.readFileSync(json, 'utf8'));
    assert.deepStrictEqual(report.meta.options.autoScopes, { http: value.includes('http'), timers: value.includes('timers') });
    return report.elu.scopes.map((s) => s.name);
  };
  assert.deepStrictEqual(names('off'), []);
  assert.deepStrictEqual(names('http'), []);
  assert.ok(names('http,timers').some((n) => n.startsWith('setInterval at app.js:')));
  const bad = runApp({ RUN_MS: '100', RLOOP_AUTO_SCOPES: 'dns' });
  assert.match(bad.stderr, /^rloop: not started: RLOOP_AUTO_SCOPES must be "off" or some of http,timers, got "dns"\n$/);
});

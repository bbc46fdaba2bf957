'use strict';
// Zero-code use on a real app that knows nothing of rloop: `node -r rloop/register`, or NODE_OPTIONS.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { assertValidReport } = require('../fixtures/report');

const ROOT = path.join(__dirname, '..', '..');
const APP = path.join(__dirname, '..', 'fixtures', 'plain-app.js');
const STATE_APP = path.join(__dirname, '..', 'fixtures', 'state-app.js');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-register-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));
// The app's folder has rloop installed, as `npm install rloop` would.
fs.mkdirSync(path.join(tmp, 'node_modules'));
fs.symlinkSync(ROOT, path.join(tmp, 'node_modules', 'rloop'));
const reports = () => fs.readdirSync(tmp).filter((f) => f.endsWith('.json'));

/** `n` consecutive free ports on 127.0.0.1: the first. */
async function freePorts(n) {
  const net = require('node:net');
  const listen = (port) => new Promise((resolve) => {
    const s = net.createServer().once('error', () => resolve(null)).listen(port, '127.0.0.1', () => resolve(s));
  });
  for (;;) {
    const servers = [await listen(0)];
    const first = servers[0].address().port;
    while (servers.length < n && first + servers.length <= 65535) {
      const s = await listen(first + servers.length);
      if (s === null) break;
      servers.push(s);
    }
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
    if (servers.length === n) return first;
  }
}

function runApp(args, env, app = [APP]) {
  return spawnSync(process.execPath, [...args, ...app], {
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
  // The app's 120 ms stall, by the line that called spin (a loaded machine may stretch the 70 ms one past 110).
  const spun = report.lag.events.filter((e) => e.lagMs >= 110 && e.stack?.some((f) => f.url.endsWith('plain-app.js') && f.line === 24));
  assert.strictEqual(spun.length, 1, JSON.stringify(report.lag.events));
  for (const type of ['http', 'http-in']) {
    const agg = report.io.aggregates.find((a) => a.type === type);
    assert.ok(agg && agg.count > 50, `${type} operations were counted`);
  }
  assert.ok(!JSON.stringify(report).includes('secret'), 'query strings never reach the report');
  assert.ok(report.profile.analysis.samples > 100);
  assert.ok(fs.statSync(path.join(tmp, 'app.cpuprofile')).size > 1000);
});

// Said on a terminal only (script(1) gives the app one): a log pipeline or a test harness reads
// stderr as without rloop (the test above: nothing on stderr).
test('on a terminal, zero-code use says where the report went, as the capture is written', () => {
  const command = `${JSON.stringify(process.execPath)} -r rloop/register ${JSON.stringify(APP)}`;
  const r = spawnSync('script', ['-qec', command, '/dev/null'], {
    cwd: tmp, encoding: 'utf8', timeout: 30000, env: { PATH: process.env.PATH, HOME: process.env.HOME, RLOOP_HTML: 'tty.html' },
  });
  assert.strictEqual(r.status, 0, r.stdout + r.stderr);
  const said = r.stdout.replace(/\r/g, '').match(/^rloop: report written: (.*)$/m);
  assert.ok(said, r.stdout);
  const files = said[1].split(', ');
  assert.strictEqual(files.length, 2);
  assert.match(files[0], new RegExp(`^${tmp.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/rloop-\\d+\\.json$`));
  assert.strictEqual(files[1], path.join(tmp, 'tty.html'));
  for (const f of files) assert.ok(fs.statSync(f).size > 1000, f);
  assert.match(r.stdout, /app done/);
});

test('through NODE_OPTIONS, with a timed capture and paths from the environment', () => {
  const out = path.join(tmp, 'timed-{pid}.json');
  const r = runApp([], {
    NODE_OPTIONS: `--require ${path.join(ROOT, 'register', 'index.js')}`,
    RLOOP_DURATION: '1s',
    RLOOP_JSON: out,
    RLOOP_LAG_THRESHOLD: '20ms',
    RLOOP_IO_THRESHOLD: 'off',
  });
  assert.strictEqual(r.status, 0, r.stderr);
  const report = JSON.parse(fs.readFileSync(out.replace('{pid}', r.pid), 'utf8'));
  assertValidReport(report);
  assert.strictEqual(report.meta.partial, false);
  assert.ok(Math.abs(report.meta.durationMs - 1000) < 150);
  assert.strictEqual(report.meta.options.lagThresholdMs, 20);
  assert.strictEqual(report.io.enabled, false);
  assert.strictEqual(report.profile, null);
});

test('durations take a unit, a bare number keeps its unit (ms), and "off" turns each switch off', () => {
  const { fromEnv } = require('../../register/variables');
  const rloop = require('../..')[Symbol.for('rloop.zeroCode')];
  const read = (env) => fromEnv(env, rloop);
  const given = read({ RLOOP_DURATION: '2m', RLOOP_DELAY: '1.5s', RLOOP_WINDOW_MS: '500', RLOOP_LAG_THRESHOLD: '100ms', RLOOP_IO_THRESHOLD: '1s', RLOOP_PROFILE: '1', RLOOP_PROFILE_INTERVAL_US: '1ms' });
  assert.deepStrictEqual([given.capture.durationMs, given.delayMs, given.start.windowMs, given.start.lagThresholdMs, given.start.ioThresholdMs, given.capture.profile.intervalUs], [120000, 1500, 500, 100, 1000, 1000]);
  assert.strictEqual(read({ RLOOP_DURATION: '1000' }).capture.durationMs, 1000, 'a bare number is in ms');
  assert.strictEqual(read({ RLOOP_PROFILE: '1', RLOOP_PROFILE_INTERVAL_US: '250' }).capture.profile.intervalUs, 250, 'in µs for the profile interval');
  const off = read({ RLOOP_LAG_THRESHOLD: 'off', RLOOP_IO_THRESHOLD: 'off', RLOOP_AUTO_SCOPES: 'off' }).start;
  assert.deepStrictEqual([off.lag, off.io, off.autoScopes], [false, false, { http: false, timers: false }]);
  assert.strictEqual(read({ RLOOP_LAG_THRESHOLD: '0' }).start.lag, false, 'RLOOP_LAG_THRESHOLD=0, the older form of off');
  assert.throws(() => read({ RLOOP_DURATION: '10 seconds' }), /^TypeError: RLOOP_DURATION must be a duration such as 10s, 500ms or 2m \(a bare number is in ms\), got "10 seconds"$/);
});

test('a bad variable, of any kind, is one line on stderr and rloop is fully off; the app runs as without it', () => {
  const plain = runApp([], {});
  const before = reports();
  for (const [env, message] of [
    [{ RLOOP_DURATION: 'soon' }, /RLOOP_DURATION must be a duration such as 10s/],
    [{ RLOOP_PROFILE: 'yes' }, /RLOOP_PROFILE must be 0 or 1/],
    [{ RLOOP_WINDOW_MS: '1' }, /RLOOP_WINDOW_MS="1": option 'windowMs' must be between 10 and/],
    // Capture options: checked before anything starts, not by the capture once it has.
    [{ RLOOP_DURATION: '0' }, /RLOOP_DURATION="0": option 'durationMs' must be between 1 and/],
    [{ RLOOP_PROFILE: '1', RLOOP_PROFILE_INTERVAL_US: '1' }, /RLOOP_PROFILE_INTERVAL_US="1": option 'profile.intervalUs'/],
    [{ RLOOP_LAG_THRESHOLD: '0.5ms' }, /RLOOP_LAG_THRESHOLD="0.5ms": option 'lagThresholdMs' must be an integer/],
    [{ RLOOP_HTML: 'r-{date}.html' }, /RLOOP_HTML="r-\{date\}.html": option 'html' holds \{date\}: only \{pid\}, \{time\}, \{n\}/],
    [{ RLOOP_JSON: path.join(tmp, 'missing-{pid}', 'r.json') }, /RLOOP_JSON=.*: option 'json': folder .*missing-\d+ does not exist/],
    [{ RLOOP_JSON: tmp }, /RLOOP_JSON=.*: option 'json': .* is a folder/],
  ]) {
    const label = JSON.stringify(env);
    const r = runApp(['-r', 'rloop/register'], env);
    assert.strictEqual(r.status, plain.status, label);
    assert.strictEqual(r.stdout, plain.stdout, label);
    assert.match(r.stderr, /^rloop: not started: [^\n]+\n$/, label);
    assert.match(r.stderr, message, label);
    const state = runApp(['-r', 'rloop/register'], env, [STATE_APP, 'now']);
    assert.deepStrictEqual(JSON.parse(state.stdout), { monitor: false, threads: 0 }, `${label}: nothing of rloop runs`);
  }
  assert.deepStrictEqual(reports(), before, 'no report was written');
});

test("an unknown RLOOP_* variable (the app's own) is one line of warning, and rloop runs", () => {
  const r = runApp(['-r', 'rloop/register'], { RLOOP_FOO: '1', RLOOP_JSOM: 'x.json', RLOOP_JSON: 'unknown-{pid}.json' });
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stdout, 'app done\n');
  assert.match(r.stderr, /^rloop: ignoring RLOOP_FOO, RLOOP_JSOM, not rloop's \(known: RLOOP_DELAY, RLOOP_DURATION, [^\n]+\)\n$/);
  assertValidReport(JSON.parse(fs.readFileSync(path.join(tmp, `unknown-${r.pid}.json`), 'utf8')));
});

test('once a timed capture is written, rloop is off again', () => {
  const r = runApp(['-r', 'rloop/register'], { RLOOP_DURATION: '200', RLOOP_JSON: 'stopped-{pid}.json' }, [STATE_APP, 'stopped']);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stderr, '');
  assert.deepStrictEqual(JSON.parse(r.stdout), { monitor: false, threads: 0 });
  assertValidReport(JSON.parse(fs.readFileSync(path.join(tmp, `stopped-${r.pid}.json`), 'utf8')));
});

test('a report that cannot be written when the app exits is one line on stderr, and the app ends as it would have', () => {
  const dir = fs.mkdtempSync(path.join(tmp, 'gone-'));
  const r = runApp(['-r', 'rloop/register'], { RLOOP_JSON: path.join(dir, 'r.json') }, [STATE_APP, 'rmdir', dir]);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.deepStrictEqual(JSON.parse(r.stdout), { monitor: true, threads: 1 });
  assert.match(r.stderr, /^rloop: report not written: ENOENT: [^\n]*gone-[^\n]*r\.json'\n$/);
});

test('RLOOP_DELAY keeps the app\'s start-up out of the capture', () => {
  const r = runApp(['-r', 'rloop/register'], { RLOOP_DELAY: '600', RLOOP_JSON: 'delayed-{pid}.json' });
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stderr, '');
  const report = JSON.parse(fs.readFileSync(path.join(tmp, `delayed-${r.pid}.json`), 'utf8'));
  assertValidReport(report);
  assert.ok(report.meta.durationMs > 900 && report.meta.durationMs < 1700, `captured ${report.meta.durationMs} ms of a ~2 s app`);
  assert.ok(!report.lag.events.some((e) => e.atStart), 'no stall from the start-up');
  assert.ok(report.lag.events.some((e) => e.lagMs >= 110), 'the app\'s own late stall is in');
  assert.match(runApp(['-r', 'rloop/register'], { RLOOP_DELAY: 'soon' }).stderr, /^rloop: not started: RLOOP_DELAY must be a duration such as 10s/);
});

test('RLOOP_METRICS_PORT serves the metrics endpoint of a zero-code app; a bad port is named', async () => {
  const free = require('node:net').createServer().listen(0, '127.0.0.1');
  await new Promise((r) => free.once('listening', r));
  const port = free.address().port;
  await new Promise((r) => free.close(r));
  const app = `require('node:http').get('http://127.0.0.1:${port}/metrics', (res) => {
    let body = ''; res.on('data', (d) => { body += d; }).on('end', () => console.log(res.statusCode, /^nodejs_eventloop_time_seconds_total\\{thread="0",nodejs_eventloop_state="active"\\} /m.test(body)));
  });`;
  const r = runApp(['-r', 'rloop/register'], { RLOOP_METRICS_PORT: String(port), RLOOP_JSON: 'metrics-{pid}.json' }, ['-e', app]);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stdout, '200 true\n');
  assert.ok(fs.existsSync(path.join(tmp, `metrics-${r.pid}.json`)), 'RLOOP_JSON given: a capture ran too');
  const bad = runApp(['-r', 'rloop/register'], { RLOOP_METRICS_PORT: '99999' });
  assert.match(bad.stderr, /^rloop: not started: RLOOP_METRICS_PORT="99999": option 'metrics.port' must be between 0 and 65535/);
});

test('in a cluster, the primary serves metrics at RLOOP_METRICS_PORT and worker N at the port + N, each its own', async () => {
  const port = await freePorts(3);
  const app = path.join(tmp, 'cluster-app.js');
  fs.writeFileSync(app, `const cluster = require('node:cluster');
    const http = require('node:http');
    const get = (url) => new Promise((resolve) => http.get(url, (r) => { let b = ''; r.on('data', (d) => { b += d; }).on('end', () => resolve(b)); }).on('error', (e) => resolve(e.code)));
    if (cluster.isPrimary) {
      const workers = [cluster.fork(), cluster.fork()];
      let ready = 0;
      for (const w of workers) w.on('message', async () => {
        if (++ready < workers.length) return;
        const bodies = await Promise.all([0, 1, 2].map((n) => get('http://127.0.0.1:' + (${port} + n) + '/metrics')));
        // Which worker's requests each endpoint counts (the automatic scope of its own route).
        console.log(bodies.map((b) => [1, 2].filter((id) => b.includes('scope="GET /worker-' + id + '"')).join('+') || (b.startsWith('#') ? 'none' : b)).join(' '));
        for (const w of workers) w.kill();
      });
    } else {
      // exclusive: a worker's own port (a shared one is served by the workers in turn).
      const server = http.createServer((req, res) => res.end('ok')).listen({ port: 0, host: '127.0.0.1', exclusive: true }, async () => {
        await get('http://127.0.0.1:' + server.address().port + '/worker-' + cluster.worker.id);
        setTimeout(() => process.send('ready'), 2000); // a window closes: the scope is in the metrics
      });
    }`);
  const r = runApp(['-r', 'rloop/register'], { RLOOP_METRICS_PORT: String(port) }, [app]);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stderr, '', 'every worker monitored, none told its port is taken');
  assert.strictEqual(r.stdout, 'none 1 2\n', 'the primary\'s endpoint, then worker 1\'s and worker 2\'s');
});

test('RLOOP_METRICS_PORT alone is metrics only: the endpoint serves the app\'s scopes, no capture runs, no report is written', async () => {
  const free = require('node:net').createServer().listen(0, '127.0.0.1');
  await new Promise((r) => free.once('listening', r));
  const port = free.address().port;
  await new Promise((r) => free.close(r));
  const before = reports();
  // The app's own HTTP server: an automatic scope, served while the app runs.
  const app = `const http = require('node:http');
    const server = http.createServer((req, res) => { const end = Date.now() + 30; while (Date.now() < end); res.end('ok'); }).listen(0, '127.0.0.1', () => {
      http.get('http://127.0.0.1:' + server.address().port + '/work', (r) => r.resume().on('end', () => setTimeout(() => {
        http.get('http://127.0.0.1:${port}/metrics', (m) => { let body = ''; m.on('data', (d) => { body += d; }).on('end', () => {
          console.log(m.statusCode, body.includes('\\nrloop_scope_busy_seconds_total{thread="0",scope="GET /work"} ') ? 'scope served' : body);
          server.close();
        }); });
      }, 1200)));
    });`;
  const r = runApp(['-r', 'rloop/register'], { RLOOP_METRICS_PORT: String(port) }, ['-e', app]);
  assert.strictEqual(r.status, 0, r.stderr);
  assert.strictEqual(r.stderr, '');
  assert.match(r.stdout, /^200 scope served\n/);
  assert.deepStrictEqual(reports(), before, 'no report written');
});

test('npm start through NODE_OPTIONS: the app is captured, npm is left alone (its report would replace the app\'s)', (t) => {
  const dir = fs.mkdtempSync(path.join(tmp, 'npm-'));
  const app = path.join(dir, 'app.js');
  fs.writeFileSync(app, "process.stdout.write(`pid ${process.pid}\\n`); const end = Date.now() + 100; while (Date.now() < end);\n");
  const scripts = { start: `"${process.execPath}" app.js` };
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ name: 'npm-app', version: '1.0.0', scripts }));
  const r = spawnSync('npm', ['start', '--silent'], {
    cwd: dir,
    encoding: 'utf8',
    timeout: 60000,
    env: {
      PATH: process.env.PATH,
      HOME: dir,
      NODE_OPTIONS: `--require ${path.join(ROOT, 'register', 'index.js')}`,
      RLOOP_JSON: path.join(dir, 'report.json'),
      npm_config_offline: 'true', // npm asks no registry: the script is all it runs
      npm_config_update_notifier: 'false',
      npm_config_cache: path.join(dir, 'cache'),
    },
  });
  if (r.error?.code === 'ENOENT') return t.skip('needs npm');
  assert.strictEqual(r.status, 0, r.stderr);
  const pid = Number(/^pid (\d+)$/m.exec(r.stdout)?.[1]);
  assert.strictEqual(r.stderr, '');
  const report = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
  assert.strictEqual(report.meta.pid, pid, 'the report is the app\'s, not npm\'s');
  const { isLauncher } = require('../../register/launcher'); // not ../register: that starts rloop here
  for (const bin of ['/usr/bin/npm', '/usr/lib/node_modules/npm/bin/npm-cli.js', 'npx-cli.js', 'yarn.js', 'pnpm.cjs', 'corepack']) {
    assert.ok(isLauncher(['node', bin]), bin);
  }
  for (const bin of ['/srv/app/server.js', '/srv/npm-tools/build.js', 'yarnish.js', undefined]) assert.ok(!isLauncher(['node', bin]), String(bin));
});

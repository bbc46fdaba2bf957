'use strict';
// Zero-code use: `node -r rloop/register app.js` (or NODE_OPTIONS="-r rloop/register").
// Starts a monitor and one capture from RLOOP_* environment variables and writes the report
// when the capture ends — after RLOOP_DURATION ms, or when the app exits, however it exits.
// RLOOP_METRICS_PORT without any capture variable is metrics only: the monitor and its
// endpoint run until the app exits, no capture runs and no report is written.
// Every variable is checked before anything starts: with a bad one, rloop says so on stderr
// and stays off, and the app runs as without it. An unknown RLOOP_* variable may be the app's
// own: it gets one line of warning, and rloop runs.

const { isMainThread } = require('node:worker_threads');
const { isLauncher } = require('./launcher');

const ENV = {
  RLOOP_DELAY: 'ms to wait before the capture starts (default 0), so that the app\'s start-up stays out of it',
  RLOOP_DURATION: 'ms to capture, or "exit" (default): until the app exits',
  RLOOP_JSON: 'report path (default rloop-{pid}.json); {pid}, {time}, {n} are filled in',
  RLOOP_HTML: 'HTML report path',
  RLOOP_PROFILE: '1 to take a CPU profile during the capture (default 0)',
  RLOOP_PROFILE_INTERVAL_US: 'CPU sampling interval (default 100)',
  RLOOP_CPUPROFILE: '.cpuprofile path (with RLOOP_PROFILE=1)',
  RLOOP_PPROF: 'pprof path: the profile gzipped, its samples labelled by scope (with RLOOP_PROFILE=1)',
  RLOOP_HEAP_PROFILE: '1 to sample allocations during the capture: bytes by function and scope (default 0)',
  RLOOP_HEAP_PPROF: 'pprof path of the allocations sampled (with RLOOP_HEAP_PROFILE=1)',
  RLOOP_HEAP_SNAPSHOT: 'heap snapshot path, taken when a timed capture ends',
  RLOOP_WINDOW_MS: 'ELU window (default 1000)',
  RLOOP_LAG_THRESHOLD: 'ms of blocked loop that make a stall (default 50); 0 turns lag off',
  RLOOP_IO_THRESHOLD: 'ms an I/O operation takes to be slow (default 500); "off" turns I/O tracking off',
  RLOOP_METRICS_PORT: 'serve Prometheus metrics on 127.0.0.1 at this port (docs/metrics.md; a cluster\'s worker N at the port + N); alone, without a capture variable, no capture runs',
  RLOOP_METRICS_TOKEN: 'with RLOOP_METRICS_PORT: every request to the endpoint needs `Authorization: Bearer <token>` (16 to 256 visible characters)',
  RLOOP_AUTO_SCOPES: 'automatic scopes, comma-separated: http, timers (default both), or "off"',
};

// The variables that ask for a capture; with RLOOP_METRICS_PORT and none of them, none runs.
const CAPTURE = ['RLOOP_DELAY', 'RLOOP_DURATION', 'RLOOP_JSON', 'RLOOP_HTML', 'RLOOP_PROFILE', 'RLOOP_PROFILE_INTERVAL_US', 'RLOOP_CPUPROFILE', 'RLOOP_PPROF', 'RLOOP_HEAP_PROFILE', 'RLOOP_HEAP_PPROF', 'RLOOP_HEAP_SNAPSHOT'];

function integer(name, text) {
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** `{ http, timers }` from RLOOP_AUTO_SCOPES: 'off', or kinds separated by commas. */
function autoScopes(text) {
  const { AUTO_SCOPES } = require('../js/options');
  const kinds = text === 'off' ? [] : text.split(',').map((k) => k.trim());
  const bad = kinds.find((k) => !AUTO_SCOPES.includes(k));
  if (bad !== undefined) throw new Error(`RLOOP_AUTO_SCOPES must be "off" or some of ${AUTO_SCOPES.join(',')}, got ${JSON.stringify(text)}`);
  return Object.fromEntries(AUTO_SCOPES.map((k) => [k, kinds.includes(k)]));
}

/**
 * start() and capture() options from `env`, and the RLOOP_* variables rloop does not know;
 * throws on a value that is not even of the right form, naming the variable.
 */
function fromEnv(env) {
  const unknown = Object.keys(env).filter((k) => k.startsWith('RLOOP_') && !(k in ENV));
  const get = (name) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const start = {};
  const capture = { json: get('RLOOP_JSON') ?? 'rloop-{pid}.json' };
  const duration = get('RLOOP_DURATION') ?? 'exit';
  capture.durationMs = duration === 'exit' ? Infinity : integer('RLOOP_DURATION', duration);
  if (get('RLOOP_HTML')) capture.html = get('RLOOP_HTML');
  const profile = get('RLOOP_PROFILE') ?? '0';
  if (!['0', '1'].includes(profile)) throw new Error(`RLOOP_PROFILE must be 0 or 1, got ${JSON.stringify(profile)}`);
  if (profile === '1') {
    const interval = get('RLOOP_PROFILE_INTERVAL_US');
    capture.profile = interval === undefined ? true : { intervalUs: integer('RLOOP_PROFILE_INTERVAL_US', interval) };
    if (get('RLOOP_CPUPROFILE')) capture.cpuprofile = get('RLOOP_CPUPROFILE');
    if (get('RLOOP_PPROF')) capture.pprof = get('RLOOP_PPROF');
  }
  const heapProfile = get('RLOOP_HEAP_PROFILE') ?? '0';
  if (!['0', '1'].includes(heapProfile)) throw new Error(`RLOOP_HEAP_PROFILE must be 0 or 1, got ${JSON.stringify(heapProfile)}`);
  if (heapProfile === '1') {
    capture.heapProfile = true;
    if (get('RLOOP_HEAP_PPROF')) capture.heapPprof = get('RLOOP_HEAP_PPROF');
  }
  if (get('RLOOP_HEAP_SNAPSHOT')) capture.heapSnapshot = get('RLOOP_HEAP_SNAPSHOT');
  if (get('RLOOP_WINDOW_MS')) start.windowMs = integer('RLOOP_WINDOW_MS', get('RLOOP_WINDOW_MS'));
  const lag = get('RLOOP_LAG_THRESHOLD');
  if (lag === '0') start.lag = false;
  else if (lag !== undefined) start.lagThreshold = integer('RLOOP_LAG_THRESHOLD', lag);
  const io = get('RLOOP_IO_THRESHOLD');
  if (io === 'off') start.io = false;
  else if (io !== undefined) start.ioThreshold = integer('RLOOP_IO_THRESHOLD', io);
  const metricsPort = get('RLOOP_METRICS_PORT');
  if (metricsPort !== undefined) start.metrics = { port: clusterPort(integer('RLOOP_METRICS_PORT', metricsPort)) };
  if (metricsPort !== undefined && get('RLOOP_METRICS_TOKEN') !== undefined) start.metrics.token = get('RLOOP_METRICS_TOKEN');
  start.autoScopes = autoScopes(get('RLOOP_AUTO_SCOPES') ?? 'http,timers');
  const delay = get('RLOOP_DELAY');
  const metricsOnly = metricsPort !== undefined && CAPTURE.every((name) => get(name) === undefined);
  return { start, capture: metricsOnly ? null : capture, delayMs: delay === undefined ? 0 : integer('RLOOP_DELAY', delay), unknown };
}

// A cluster's processes all inherit RLOOP_METRICS_PORT: the primary serves at the port, worker N
// (cluster.worker.id) at the port + N, each its own metrics. One port for all would leave every
// worker unmonitored (its port taken: rloop off) and the endpoint the primary's alone, which
// does none of the work. Port 0 stays 0: an ephemeral port each.
function clusterPort(port) {
  if (port === 0) return 0;
  const cluster = require('node:cluster');
  return cluster.isWorker ? port + cluster.worker.id : port;
}

// The variable an option comes from, to name it in messages.
const VARIABLE_OF = {
  durationMs: 'RLOOP_DURATION', json: 'RLOOP_JSON', html: 'RLOOP_HTML', intervalUs: 'RLOOP_PROFILE_INTERVAL_US',
  cpuprofile: 'RLOOP_CPUPROFILE', pprof: 'RLOOP_PPROF', heapPprof: 'RLOOP_HEAP_PPROF', heapSnapshot: 'RLOOP_HEAP_SNAPSHOT', windowMs: 'RLOOP_WINDOW_MS',
  lagThreshold: 'RLOOP_LAG_THRESHOLD', ioThreshold: 'RLOOP_IO_THRESHOLD', 'metrics.port': 'RLOOP_METRICS_PORT', 'metrics.token': 'RLOOP_METRICS_TOKEN',
};

/** An error as one line of ours: the variable named, rloop's own prefix left out. */
function reason(e, env) {
  const text = String(e?.message ?? e).replace(/^rloop: /, '').replace(/\s+/g, ' ');
  const variable = VARIABLE_OF[/option '([\w.]+)'/.exec(text)?.[1]];
  if (variable === undefined) return text;
  return `${variable}${env[variable] ? `=${JSON.stringify(env[variable])}` : ' (default)'}: ${text}`;
}

function register(env) {
  const say = (line) => process.stderr.write(`rloop: ${line}\n`);
  let mon;
  let capture;
  let delayMs;
  try {
    const { startOptions } = require('../js/options');
    const { captureOptions, WRITTEN } = require('../js/capture/options');
    const given = fromEnv(env);
    if (given.unknown.length > 0) say(`ignoring ${given.unknown.join(', ')}, not rloop's (known: ${Object.keys(ENV).join(', ')})`);
    // Validated in full before anything starts: a capture option failing after start() would
    // leave the monitor, its hooks and threads running with no capture.
    const start = startOptions(given.start);
    capture = given.capture && captureOptions(given.capture);
    // Where the report went, on a terminal only: a log pipeline or a test harness reads stderr
    // as it would without rloop.
    if (capture && process.stderr.isTTY) capture[WRITTEN] = (files) => say(`report written: ${files.map((f) => require('node:path').resolve(f)).join(', ')}`);
    delayMs = given.delayMs;
    mon = require('../js/index').start(start);
  } catch (e) {
    return say(`not started: ${reason(e, env)}`);
  }
  mon.on('error', (e) => say(reason(e, env))); // rloop's own failures, the report's at exit among them
  if (capture === null) return; // metrics only: the monitor serves them until the app exits
  // One capture is all zero-code use runs: when it ends, written or not, rloop is off again.
  const run = () => mon.capture(capture).then(
    () => mon.stop(),
    (e) => {
      mon.stop();
      say(`capture failed, rloop stopped: ${reason(e, env)}`);
    },
  );
  // A timer only when asked for: one created here is seen by the app's hooks (docs/performance.md: Invisible).
  if (delayMs > 0) setTimeout(run, delayMs).unref();
  else run();
}

if (isMainThread && !isLauncher()) register(process.env);

module.exports = { fromEnv, ENV };

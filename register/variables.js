'use strict';
// The RLOOP_* variables of zero-code use, read into start() and capture() options. A module of
// its own so that it can be required without starting rloop, as requiring register/ does. The
// options they set, their defaults and limits are the options' table (js/options.js), which names
// each variable; `ENV` is this adapter's help, in its own words where zero-code use differs (its
// defaults, the forms of text), and test/package/options.test.js holds the two together.

// A duration is written with its unit (10s, 500ms, 2m); a bare number is in ms (µs for
// RLOOP_PROFILE_INTERVAL_US).
const ENV = {
  RLOOP_DELAY: "how long to wait before the capture starts, such as 500ms or 10s (default 0s), so that the app's start-up stays out of it",
  RLOOP_DURATION: 'how long to capture, such as 10s, 500ms or 2m, or "exit" (default): until the app exits',
  RLOOP_JSON: 'report path (default rloop-{pid}.json); {pid}, {time}, {n} are filled in',
  RLOOP_HTML: 'HTML report path',
  RLOOP_PROFILE: '1 to take a CPU profile during the capture (default 0)',
  RLOOP_PROFILE_INTERVAL_US: 'CPU sampling interval (default 100us)',
  RLOOP_CPUPROFILE: '.cpuprofile path (with RLOOP_PROFILE=1)',
  RLOOP_PPROF: 'pprof path: the profile gzipped, its samples labelled by scope (with RLOOP_PROFILE=1)',
  RLOOP_HEAP_PROFILE: '1 to sample allocations during the capture: bytes by function and scope (default 0)',
  RLOOP_HEAP_PPROF: 'pprof path of the allocations sampled (with RLOOP_HEAP_PROFILE=1)',
  RLOOP_HEAP_SNAPSHOT: 'heap snapshot path, taken when a timed capture ends',
  RLOOP_WINDOW_MS: 'ELU window (default 1s)',
  RLOOP_LAG_THRESHOLD: 'busy loop that makes a stall (default 50ms); "off" turns lag off (0 too)',
  RLOOP_IO_THRESHOLD: 'how long an I/O operation takes to be slow (default 500ms); "off" turns I/O tracking off',
  RLOOP_METRICS_PORT: 'serve Prometheus metrics on 127.0.0.1 at this port (docs/metrics.md; a cluster\'s worker N at the port + N); alone, without a capture variable, no capture runs',
  RLOOP_METRICS_TOKEN: 'with RLOOP_METRICS_PORT: every request to the endpoint needs `Authorization: Bearer <token>` (16 to 256 visible characters)',
  RLOOP_AUTO_SCOPES: 'automatic scopes, comma-separated: http, timers (default both), or "off"',
};

// The variables that ask for a capture; with RLOOP_METRICS_PORT and none of them, none runs.
const CAPTURE = ['RLOOP_DELAY', 'RLOOP_DURATION', 'RLOOP_JSON', 'RLOOP_HTML', 'RLOOP_PROFILE', 'RLOOP_PROFILE_INTERVAL_US', 'RLOOP_CPUPROFILE', 'RLOOP_PPROF', 'RLOOP_HEAP_PROFILE', 'RLOOP_HEAP_PPROF', 'RLOOP_HEAP_SNAPSHOT'];

function integer(name, text) {
  if (!/^\d+$/.test(text)) throw new TypeError(`${name} must be a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** 0 or 1, as false or true. */
function flag(name, text = '0') {
  if (!['0', '1'].includes(text)) throw new TypeError(`${name} must be 0 or 1, got ${JSON.stringify(text)}`);
  return text === '1';
}

/** `{ http, timers }` from RLOOP_AUTO_SCOPES: 'off', or kinds separated by commas. */
function autoScopes(text, kinds) {
  const given = text === 'off' ? [] : text.split(',').map((k) => k.trim());
  const bad = given.find((k) => !kinds.includes(k));
  if (bad !== undefined) throw new TypeError(`RLOOP_AUTO_SCOPES must be "off" or some of ${kinds.join(',')}, got ${JSON.stringify(text)}`);
  return Object.fromEntries(kinds.map((k) => [k, given.includes(k)]));
}

/**
 * start() and capture() options from `env`, and the RLOOP_* variables rloop does not know;
 * throws on a value that is not even of the right form, naming the variable. `OPTIONS` and
 * `duration` are rloop's (js/index.js, for zero-code use).
 */
function fromEnv(env, { OPTIONS, duration }) {
  const unknown = Object.keys(env).filter((k) => k.startsWith('RLOOP_') && !(k in ENV));
  const get = (name) => (env[name] === undefined || env[name] === '' ? undefined : env[name]);
  const start = {};
  const capture = { json: get('RLOOP_JSON') ?? 'rloop-{pid}.json' };
  const length = get('RLOOP_DURATION') ?? 'exit';
  capture.durationMs = length === 'exit' ? Infinity : duration('RLOOP_DURATION', length);
  if (get('RLOOP_HTML')) capture.html = get('RLOOP_HTML');
  if (flag('RLOOP_PROFILE', get('RLOOP_PROFILE'))) {
    const interval = get('RLOOP_PROFILE_INTERVAL_US');
    capture.profile = interval === undefined ? true : { intervalUs: duration('RLOOP_PROFILE_INTERVAL_US', interval, 'us') };
    if (get('RLOOP_CPUPROFILE')) capture.cpuprofile = get('RLOOP_CPUPROFILE');
    if (get('RLOOP_PPROF')) capture.pprof = get('RLOOP_PPROF');
  }
  if (flag('RLOOP_HEAP_PROFILE', get('RLOOP_HEAP_PROFILE'))) {
    capture.heapProfile = true;
    if (get('RLOOP_HEAP_PPROF')) capture.heapPprof = get('RLOOP_HEAP_PPROF');
  }
  if (get('RLOOP_HEAP_SNAPSHOT')) capture.heapSnapshot = get('RLOOP_HEAP_SNAPSHOT');
  if (get('RLOOP_WINDOW_MS')) start.windowMs = duration('RLOOP_WINDOW_MS', get('RLOOP_WINDOW_MS'));
  // "off" turns each switch off, as RLOOP_AUTO_SCOPES's does; 0 for lag is its older form.
  const lag = get('RLOOP_LAG_THRESHOLD');
  if (lag === 'off' || lag === '0') start.lag = false;
  else if (lag !== undefined) start.lagThresholdMs = duration('RLOOP_LAG_THRESHOLD', lag);
  const io = get('RLOOP_IO_THRESHOLD');
  if (io === 'off') start.io = false;
  else if (io !== undefined) start.ioThresholdMs = duration('RLOOP_IO_THRESHOLD', io);
  const metricsPort = get('RLOOP_METRICS_PORT');
  if (metricsPort !== undefined) start.metrics = { port: clusterPort(integer('RLOOP_METRICS_PORT', metricsPort)) };
  if (metricsPort !== undefined && get('RLOOP_METRICS_TOKEN') !== undefined) start.metrics.token = get('RLOOP_METRICS_TOKEN');
  const kinds = OPTIONS.filter((o) => o.label.startsWith('autoScopes.')).map((o) => o.name);
  start.autoScopes = autoScopes(get('RLOOP_AUTO_SCOPES') ?? kinds.join(','), kinds);
  const delay = get('RLOOP_DELAY');
  const metricsOnly = metricsPort !== undefined && CAPTURE.every((name) => get(name) === undefined);
  return { start, capture: metricsOnly ? null : capture, delayMs: delay === undefined ? 0 : duration('RLOOP_DELAY', delay), unknown };
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

/** The variable each option comes from, by the label its errors name it by ('metrics.port'). */
function variableOf(OPTIONS) {
  return Object.fromEntries(OPTIONS.filter((o) => o.variable !== undefined).map((o) => [o.label, o.variable]));
}

module.exports = { ENV, fromEnv, variableOf };

'use strict';
// Zero-code use: `node -r rloop/register app.js` (or NODE_OPTIONS="-r rloop/register").
// Starts a monitor and one capture from RLOOP_* environment variables and writes the report
// when the capture ends — after RLOOP_DURATION ms, or when the app exits, however it exits.
// A bad variable is reported on stderr and rloop stays off: the app runs as without it.

const { isMainThread } = require('node:worker_threads');

const ENV = {
  RLOOP_DURATION: 'ms to capture, or "exit" (default): until the app exits',
  RLOOP_JSON: 'report path (default rloop-{pid}.json); {pid}, {time}, {n} are filled in',
  RLOOP_HTML: 'HTML report path',
  RLOOP_PROFILE: '1 to take a CPU profile during the capture (default 0)',
  RLOOP_PROFILE_INTERVAL_US: 'CPU sampling interval (default 100)',
  RLOOP_CPUPROFILE: '.cpuprofile path (with RLOOP_PROFILE=1)',
  RLOOP_HEAP_SNAPSHOT: 'heap snapshot path, taken when a timed capture ends',
  RLOOP_WINDOW_MS: 'ELU window (default 1000)',
  RLOOP_LAG_THRESHOLD: 'ms of blocked loop that make a stall (default 50); 0 turns lag off',
  RLOOP_IO_THRESHOLD: 'ms an I/O operation takes to be slow (default 500); "off" turns I/O tracking off',
};

function integer(name, text) {
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a whole number, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** start() and capture() options from `env`; throws on a bad value, naming the variable. */
function fromEnv(env) {
  const unknown = Object.keys(env).find((k) => k.startsWith('RLOOP_') && !(k in ENV));
  if (unknown) throw new Error(`unknown variable ${unknown} (known: ${Object.keys(ENV).join(', ')})`);
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
  }
  if (get('RLOOP_HEAP_SNAPSHOT')) capture.heapSnapshot = get('RLOOP_HEAP_SNAPSHOT');
  if (get('RLOOP_WINDOW_MS')) start.windowMs = integer('RLOOP_WINDOW_MS', get('RLOOP_WINDOW_MS'));
  const lag = get('RLOOP_LAG_THRESHOLD');
  if (lag === '0') start.lag = false;
  else if (lag !== undefined) start.lagThreshold = integer('RLOOP_LAG_THRESHOLD', lag);
  const io = get('RLOOP_IO_THRESHOLD');
  if (io === 'off') start.io = false;
  else if (io !== undefined) start.ioThreshold = integer('RLOOP_IO_THRESHOLD', io);
  return { start, capture };
}

function register(env) {
  let options;
  try {
    options = fromEnv(env);
    const rloop = require('../js/index');
    const mon = rloop.start(options.start);
    mon.capture(options.capture).catch((e) => process.stderr.write(`rloop: capture failed: ${e.message}\n`));
  } catch (e) {
    process.stderr.write(`rloop: not started: ${e.message}\n`);
  }
}

if (isMainThread) register(process.env);

module.exports = { fromEnv, ENV };

'use strict';
// Zero-code use: `node -r rloop/register app.js` (or NODE_OPTIONS="-r rloop/register").
// Starts a monitor and one capture from RLOOP_* environment variables (register/variables.js)
// and writes the report when the capture ends — after RLOOP_DURATION, or when the app exits,
// however it exits. RLOOP_METRICS_PORT without any capture variable is metrics only: the
// monitor and its endpoint run until the app exits, no capture runs and no report is written.
// Every variable is checked before anything starts: with a bad one, rloop says so on stderr
// and stays off, and the app runs as without it. An unknown RLOOP_* variable may be the app's
// own: it gets one line of warning, and rloop runs. Of rloop, this uses the public API and the
// one entry js/index.js keeps for zero-code use.

const { isMainThread } = require('node:worker_threads');
const { isLauncher } = require('./launcher');
const { ENV, fromEnv, variableOf } = require('./variables');

/** An error as one line of ours: the variable named, rloop's own prefix left out. */
function reason(e, env, variables) {
  const text = String(e?.message ?? e).replace(/^rloop: /, '').replace(/\s+/g, ' ');
  const variable = variables[/option '([\w.]+)'/.exec(text)?.[1]];
  if (variable === undefined) return text;
  return `${variable}${env[variable] ? `=${JSON.stringify(env[variable])}` : ' (default)'}: ${text}`;
}

function register(env) {
  const say = (line) => process.stderr.write(`rloop: ${line}\n`);
  let variables = {};
  let mon;
  let capture;
  let delayMs;
  try {
    // Loaded inside the try: an addon that cannot load is one line too, and the app runs.
    const rloop = require('../js/index');
    const { checkOptions, OPTIONS, duration, WRITTEN } = rloop[Symbol.for('rloop.zeroCode')];
    variables = variableOf(OPTIONS);
    const given = fromEnv(env, { OPTIONS, duration });
    if (given.unknown.length > 0) say(`ignoring ${given.unknown.join(', ')}, not rloop's (known: ${Object.keys(ENV).join(', ')})`);
    // Checked in full before anything starts: a capture option failing after start() would
    // leave the monitor, its hooks and threads running with no capture.
    const checked = checkOptions(given.start, given.capture);
    capture = checked.capture;
    // Where the report went, on a terminal only: a log pipeline or a test harness reads stderr
    // as it would without rloop.
    if (capture && process.stderr.isTTY) capture[WRITTEN] = (files) => say(`report written: ${files.map((f) => require('node:path').resolve(f)).join(', ')}`);
    delayMs = given.delayMs;
    mon = rloop.start(checked.start);
  } catch (e) {
    return say(`not started: ${reason(e, env, variables)}`);
  }
  mon.on('error', (e) => say(reason(e, env, variables))); // rloop's own failures, the report's at exit among them
  if (capture === null) return; // metrics only: the monitor serves them until the app exits
  // One capture is all zero-code use runs: when it ends, written or not, rloop is off again.
  const run = () => mon.capture(capture).then(
    () => mon.stop(),
    (e) => {
      mon.stop();
      say(`capture failed, rloop stopped: ${reason(e, env, variables)}`);
    },
  );
  // A timer only when asked for: one created here is seen by the app's hooks (docs/performance.md: Invisible).
  if (delayMs > 0) setTimeout(run, delayMs).unref();
  else run();
}

if (isMainThread && !isLauncher()) register(process.env);

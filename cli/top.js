'use strict';
// `rloop top <pid>`: a full-screen live view of a running process, refreshed every window:
// thread ELU, scopes by ELU with bars and per-key p99, stalls and slow I/O as they happen.
// Keys: s sorts, p pauses, q (or Ctrl-C) quits; the terminal is restored however it ends.

const { parseArgs } = require('node:util');
const { AttachError } = require('./attach/inspector');
const connection = require('./attach/connection');
const { renderTop, live } = require('../js/top/screen');

function options(args) {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { port: { type: 'string' }, host: { type: 'string' }, target: { type: 'string', default: '0' }, 'no-auto-scopes': { type: 'boolean' } } });
  } catch (e) {
    throw new AttachError(e.message);
  }
  const { values: v, positionals } = parsed;
  const pid = positionals.length === 1 ? Number(positionals[0]) : undefined;
  if (pid !== undefined && !(Number.isInteger(pid) && pid > 0)) throw new AttachError(`not a PID: ${positionals[0]}`);
  if (pid === undefined && v.port === undefined) throw new AttachError('top needs a PID, or --port of an open inspector');
  const port = v.port === undefined ? undefined : Number(v.port);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new AttachError(`--port must be a port number, got ${JSON.stringify(v.port)}`);
  return { pid, port, host: v.host, target: Number(v.target) || 0, start: { autoScopes: !v['no-auto-scopes'] } };
}

/** Runs until q, Ctrl-C, SIGTERM or the target's exit; resolves to the exit code. */
async function top(args, stdin, out, err) {
  const o = options(args);
  if (!out.isTTY) throw new AttachError('top needs a terminal; use rloop attach for a report');
  let screen = null;
  const early = []; // events before the screen is up
  const onEvent = (type, data) => (screen ? screen.event(type, data) : early.push([type, data]));
  const conn = await connection.open({ ...o, log: (l) => err.write(`rloop: ${l}\n`), events: ['window', 'lag', 'slowIO'] }, onEvent);
  screen = live({ info: conn.info, stdin, out });
  for (const [type, data] of early) screen.event(type, data);
  const onSignal = () => screen.end('signal');
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  conn.s.once('gone', () => screen.end('exit'));
  conn.main.once('NodeRuntime.waitingForDisconnect', () => {
    conn.exiting = true;
    screen.end('exit');
  });
  const code = (await screen.done) === 'exit' ? 2 : 0;
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  await connection.close(conn);
  if (code === 2) err.write('rloop: the target exited\n');
  return code;
}

/** top(), its failures one line on `err` and exit code 1. */
async function run(args, stdin, out, err) {
  try {
    return await top(args, stdin, out, err);
  } catch (e) {
    err.write(`rloop: ${e instanceof AttachError ? e.message : e.stack}\n`);
    return 1;
  }
}

module.exports = { run, renderTop };

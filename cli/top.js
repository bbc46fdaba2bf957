'use strict';
// `rloop top <pid>`: a full-screen live view of a running process, refreshed every window:
// thread ELU, scopes by ELU with bars and per-key p99, stalls and slow I/O as they happen.
// Keys: s sorts, p pauses, q (or Ctrl-C) quits; the terminal is restored however it ends.

const { parseArgs } = require('node:util');
const { AttachError } = require('./attach/inspector');
const connection = require('./attach/connection');
const terminal = require('./attach/terminal');
const { num, ms, pct } = require('../js/report/format');

const SORTS = ['elu', 'calls', 'p99', 'name'];
const EVENTS_KEPT = 50;
const ENTER = '\x1b[?1049h\x1b[?25l'; // alternate screen, cursor hidden
const LEAVE = '\x1b[?25h\x1b[?1049l';
const HOME = '\x1b[H\x1b[2J';

const BY = {
  elu: (a, b) => b.busyMs - a.busyMs,
  calls: (a, b) => b.calls - a.calls,
  p99: (a, b) => (b.keys?.p99Ms ?? -1) - (a.keys?.p99Ms ?? -1),
  name: (a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
};

/** A line's bar in colour, once the line is cut to the width (colour codes have no width). */
const bars = (line, c) => line.replace(/[█·]{2,}/, (b) => c.green(b));
const fit = (s, width) => (s.length > width ? `${s.slice(0, Math.max(0, width - 1))}…` : s.padEnd(width));

/**
 * The screen, a pure function: `view` is { info, window, events: [{ at, line }], sort, paused }
 * (event lines plain text). No line is wider than `columns` (colour codes aside), nor the screen
 * taller than `rows`.
 */
function renderTop(view, { columns = 80, rows = 24, color = false } = {}) {
  const c = terminal.palette(color);
  const i = view.info;
  const w = view.window;
  const out = [];
  const head = `rloop top  PID ${i.pid}  Node ${i.node}  ${i.thread ? `worker thread ${i.thread}` : 'main thread'}  sort: ${view.sort}${view.paused ? '  PAUSED' : ''}`;
  out.push(c.bold(fit(head, columns)));
  out.push(c.dim(fit('keys: s sort  p pause  q quit', columns)));
  if (!w) {
    out.push('', 'waiting for the first window…');
  } else {
    const lag = w.lag ? `  stalls ${num(w.lag.stalls)}${w.lag.stalls ? ` (max ${ms(w.lag.maxMs)})` : ''}` : '';
    out.push(bars(fit(`thread ELU ${terminal.bar(w.thread.elu)} ${pct(w.thread.elu)}  busy ${ms(w.thread.busyMs)} of ${ms(w.durationMs)}${lag}`, columns), c));
    out.push('');
    const nameWidth = Math.max(10, Math.min(40, columns - 70));
    out.push(c.bold(fit(`${'SCOPE'.padEnd(nameWidth)}  ${'ELU'.padEnd(29)}  ${'BUSY'.padStart(9)}  ${'CALLS'.padStart(7)}  KEY p99`, columns)));
    const scopes = [...w.scopes].sort(BY[view.sort]);
    const room = Math.max(1, rows - out.length - 6 - Math.min(view.events.length, 5));
    for (const s of [...scopes.slice(0, room), w.unattributed]) {
      const p99 = s.keys ? `${ms(s.keys.p99Ms)} (${num(s.keys.count)} keys)` : '';
      out.push(bars(fit(`${fit(s.name, nameWidth)}  ${terminal.bar(s.elu)} ${pct(s.elu).padStart(8)}  ${ms(s.busyMs).padStart(9)}  ${num(s.calls).padStart(7)}  ${p99}`, columns), c));
    }
    if (scopes.length > room) out.push(c.dim(`… ${num(scopes.length - room)} more scopes`));
  }
  out.push('', c.bold('stalls and slow I/O, latest first'));
  const left = Math.max(0, rows - out.length);
  for (const e of view.events.slice(0, left)) out.push(fit(`${new Date(e.at).toISOString().slice(11, 19)} ${e.line}`, columns));
  return out.slice(0, rows).join('\n');
}

function options(args) {
  let parsed;
  try {
    parsed = parseArgs({ args, allowPositionals: true, options: { port: { type: 'string' }, host: { type: 'string' }, target: { type: 'string', default: '0' } } });
  } catch (e) {
    throw new AttachError(e.message);
  }
  const { values: v, positionals } = parsed;
  const pid = positionals.length === 1 ? Number(positionals[0]) : undefined;
  if (pid !== undefined && !(Number.isInteger(pid) && pid > 0)) throw new AttachError(`not a PID: ${positionals[0]}`);
  if (pid === undefined && v.port === undefined) throw new AttachError('top needs a PID, or --port of an open inspector');
  const port = v.port === undefined ? undefined : Number(v.port);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new AttachError(`--port must be a port number, got ${JSON.stringify(v.port)}`);
  return { pid, port, host: v.host, target: Number(v.target) || 0 };
}

/** Runs until q, Ctrl-C, SIGTERM or the target's exit; resolves to the exit code. */
async function top(args, stdin, out, err) {
  const o = options(args);
  if (!out.isTTY) throw new AttachError('top needs a terminal; use rloop attach for a report');
  const view = { info: null, window: null, events: [], sort: SORTS[0], paused: false };
  const color = terminal.wantsColor(out);
  const plain = terminal.palette(false); // event lines are cut to the width: no colour codes in them
  // Paused, the screen holds still: only a key redraws it.
  const draw = (force = false) => {
    if (view.info && (force || !view.paused)) out.write(HOME + renderTop(view, { columns: out.columns, rows: out.rows, color }));
  };
  const onEvent = (type, data) => {
    if (type === 'window') view.window = data;
    else {
      view.events.unshift({ at: Date.now(), line: type === 'lag' ? terminal.lagLine(data, plain) : terminal.ioLine(data, plain) });
      view.events.length = Math.min(view.events.length, EVENTS_KEPT);
    }
    draw();
  };
  const conn = await connection.open({ ...o, log: (l) => err.write(`rloop: ${l}\n`), events: ['window', 'lag', 'slowIO'] }, onEvent);
  view.info = conn.info;
  let finish;
  const done = new Promise((resolve) => { finish = resolve; });
  const restore = () => out.write(LEAVE);
  process.on('exit', restore); // however the command ends, the terminal is the user's again
  out.write(ENTER);
  draw(true);
  const onKey = (key) => {
    const k = key.toString();
    if (k === 'q' || k === '\x03') finish(0);
    else if (k === 's') view.sort = SORTS[(SORTS.indexOf(view.sort) + 1) % SORTS.length];
    else if (k === 'p') view.paused = !view.paused;
    draw(true);
  };
  if (stdin.isTTY) stdin.setRawMode(true);
  stdin.on('data', onKey);
  stdin.resume();
  const onSignal = () => finish(0);
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const onResize = () => draw(true);
  out.on('resize', onResize);
  conn.s.once('gone', () => finish(2));
  conn.main.once('NodeRuntime.waitingForDisconnect', () => {
    conn.exiting = true;
    finish(2);
  });
  const code = await done;
  stdin.off('data', onKey);
  if (stdin.isTTY) stdin.setRawMode(false);
  stdin.pause();
  process.off('SIGTERM', onSignal);
  process.off('SIGINT', onSignal);
  out.off('resize', onResize);
  restore();
  process.off('exit', restore);
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

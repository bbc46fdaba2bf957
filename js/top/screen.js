'use strict';
// The live view of `rloop top`, for a target attached to (cli/top.js) or for the app itself
// (js/top/index.js): the screen as a pure function, and the full-screen session that draws it each
// window on a terminal, keys s sorts, p pauses, q (or Ctrl-C) ends it; the terminal is restored
// however it ends.

const terminal = require('../report/terminal');
const { liveLines } = require('./lines');
const { num, ms, pct } = require('../report/format');

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
    const lag = w.lag ? `  stalls ${num(w.lag.stalls)}${w.lag.stalls ? ` (longest ${ms(w.lag.maxMs)})` : ''}` : '';
    out.push(bars(fit(`thread ELU ${terminal.bar(w.thread.elu)} ${pct(w.thread.elu)}  busy ${ms(w.thread.busyMs)} of ${ms(w.durationMs)}${lag}`, columns), c));
    out.push('');
    // Below 100 columns the bar halves, so that a name keeps 24 characters at 80.
    const barWidth = columns < 100 ? 10 : 20;
    const nameWidth = Math.max(columns < 100 ? 24 : 10, Math.min(40, columns - 50 - barWidth));
    out.push(c.bold(fit(`${'SCOPE'.padEnd(nameWidth)}  ${'ELU'.padEnd(barWidth + 9)}  ${'BUSY'.padStart(9)}  ${'CALLS'.padStart(7)}  KEY p99`, columns)));
    const scopes = [...w.scopes].sort(BY[view.sort]);
    const room = Math.max(1, rows - out.length - 6 - Math.min(view.events.length, 5));
    for (const s of [...scopes.slice(0, room), w.unattributed]) {
      const p99 = s.keys ? `${ms(s.keys.p99Ms)} (${num(s.keys.count)} keys)` : '';
      out.push(bars(fit(`${fit(s.name, nameWidth)}  ${terminal.bar(s.elu, barWidth)} ${pct(s.elu).padStart(8)}  ${ms(s.busyMs).padStart(9)}  ${num(s.calls).padStart(7)}  ${p99}`, columns), c));
    }
    if (scopes.length > room) out.push(c.dim(`… ${num(scopes.length - room)} more scopes`));
  }
  out.push('', c.bold('stalls and slow I/O, latest first'));
  const left = Math.max(0, rows - out.length);
  for (const e of view.events.slice(0, left)) out.push(fit(`${new Date(e.at).toISOString().slice(11, 19)} ${e.line}`, columns));
  return out.slice(0, rows).join('\n');
}

/**
 * Takes the terminal (`stdin` raw, `out` on its alternate screen) for the view of `info`
 * ({ pid, node, thread }): `event(type, data)` feeds it 'window', 'lag' and 'slowIO';
 * `done` resolves to what ended it ('q', 'ctrl-c', or the reason given to `end()`), once the
 * terminal is the user's again.
 */
function live({ info, stdin, out }) {
  const view = { info, window: null, events: [], sort: SORTS[0], paused: false };
  const color = terminal.wantsColor(out);
  const plain = terminal.palette(false); // event lines are cut to the width: no colour codes in them
  const lines = liveLines((line) => {
    view.events.unshift({ at: Date.now(), line });
    view.events.length = Math.min(view.events.length, EVENTS_KEPT);
    draw();
  }, plain);
  // Paused, the screen holds still: only a key redraws it.
  const draw = (force = false) => {
    if (force || !view.paused) out.write(HOME + renderTop(view, { columns: out.columns, rows: out.rows, color }));
  };
  const restore = () => out.write(LEAVE);
  let finish;
  const ended = new Promise((resolve) => { finish = resolve; });
  const onKey = (key) => {
    const k = key.toString();
    if (k === 'q') return finish('q');
    if (k === '\x03') return finish('ctrl-c');
    if (k === 's') view.sort = SORTS[(SORTS.indexOf(view.sort) + 1) % SORTS.length];
    else if (k === 'p') view.paused = !view.paused;
    draw(true);
  };
  const onResize = () => draw(true);
  const wasRaw = stdin.isRaw;
  process.on('exit', restore); // however the process ends, the terminal is the user's again
  out.write(ENTER);
  draw(true);
  if (stdin.isTTY) stdin.setRawMode(true);
  stdin.on('data', onKey);
  stdin.resume();
  out.on('resize', onResize);
  const done = ended.then((why) => {
    stdin.off('data', onKey);
    if (stdin.isTTY) stdin.setRawMode(Boolean(wasRaw));
    stdin.pause();
    out.off('resize', onResize);
    lines.drop();
    restore();
    process.off('exit', restore);
    return why;
  });
  return {
    event(type, data) {
      if (type === 'window') view.window = data;
      else lines.event(type, data);
      draw();
    },
    end: (why) => finish(why),
    done,
  };
}

module.exports = { renderTop, live };

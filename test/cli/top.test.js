'use strict';
// `rloop top`: driven in a real pseudo-terminal (util-linux `script`) against a real app: the
// alternate screen, the app's known scopes, refreshes each window, the sort key, quitting on q
// and restoring the terminal, and nothing left in the app. The screen itself as a pure function.

const test = require('node:test');
const assert = require('node:assert');
const { spawn, execFileSync } = require('node:child_process');
const { once } = require('node:events');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { renderTop } = require('../../cli/top');
const { listening } = require('../../cli/attach/inspector');
const { CLI, FIXTURES, startApp, rloop, assertLeftNothing } = require('../fixtures/attach-helpers');

const hasScript = (() => {
  try {
    execFileSync('script', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

const ENTER = '\x1b[?1049h';
const LEAVE = '\x1b[?1049l';
const plain = (s) => s.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');

/** Node running `args` in a pty of 100×30; `keys` are [delayMs, text] typed in turn. */
async function inPty(args, keys) {
  const command = `stty cols 100 rows 30; exec ${[process.execPath, ...args].map((a) => JSON.stringify(String(a))).join(' ')}`;
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let screen = '';
  child.stdout.on('data', (d) => { screen += d; });
  child.stderr.on('data', (d) => { screen += d; });
  const frames = [];
  for (const [delay, text] of keys) {
    await sleep(delay);
    frames.push(screen.length);
    child.stdin.write(text);
  }
  const [code] = await once(child, 'exit');
  return { code, screen, frames };
}

test('rloop top in a pseudo-terminal: the known scopes, refreshed each window, sorted on s, q quits and restores the terminal', { skip: !hasScript && 'util-linux script is not installed' }, async (t) => {
  const app = await startApp(path.join(FIXTURES, 'app.cjs'));
  t.after(() => app.kill());
  const inspectorsBefore = listening(app.pid);
  const { code, screen, frames } = await inPty([CLI, 'top', app.pid], [[5000, 's'], [1500, 'q']]);
  assert.strictEqual(code, 0, plain(screen));
  assert.ok(screen.includes(ENTER), 'the alternate screen is entered');
  assert.ok(screen.trimEnd().endsWith(LEAVE), 'and left last, with the cursor shown again');
  assert.ok(screen.lastIndexOf('\x1b[?25h') > screen.lastIndexOf('\x1b[?25l'));
  const drawn = plain(screen.slice(0, frames[0]));
  // Refreshed every window: several screens, each showing the app's scopes.
  assert.ok((drawn.match(/thread ELU/g) ?? []).length >= 3, drawn);
  for (const name of ['parse', 'stall', 'client']) assert.match(drawn, new RegExp(`^${name} +[█·]+ +[\\d.]+ %`, 'm'));
  assert.match(drawn, /sort: elu/);
  assert.match(drawn, /⚠ lag \d+ ms {2}scope stall/);
  assert.match(plain(screen.slice(frames[0])), /sort: calls/);
  await assertLeftNothing(app, inspectorsBefore);
});

const SELF = path.join(FIXTURES, 'top-self.cjs');

test("rloop.top(): the app's own view in its terminal, its scopes refreshed; q ends it, the app runs on with its terminal back", { skip: !hasScript && 'util-linux script is not installed' }, async () => {
  const { code, screen, frames } = await inPty([SELF], [[4000, 's'], [1500, 'q']]);
  const text = plain(screen);
  assert.strictEqual(code, 0, text);
  const drawn = plain(screen.slice(0, frames[0]));
  assert.match(drawn, new RegExp(`rloop top {2}PID \\d+ {2}Node ${process.version} {2}main thread {2}sort: elu`));
  assert.ok((drawn.match(/thread ELU/g) ?? []).length >= 2, drawn);
  for (const name of ['parse', 'stall']) assert.match(drawn, new RegExp(`^${name} +[█·]+ +[\\d.]+ %`, 'm'));
  assert.match(drawn, /⚠ lag \d+ ms {2}scope stall/);
  assert.match(plain(screen.slice(frames[0])), /sort: calls/);
  // The screen left before the app's next line; the monitor the view started is stopped.
  const left = screen.lastIndexOf(LEAVE);
  assert.ok(left > screen.lastIndexOf(ENTER) && left < screen.indexOf('view ended'), 'the terminal restored first');
  assert.match(text, /view ended, monitored 0, raw false\r?\napp still runs/);
  assert.doesNotMatch(text, /SIGINT/);
});

test('rloop.top(): Ctrl-C ends the view and reaches the app as the SIGINT the terminal would have sent', { skip: !hasScript && 'util-linux script is not installed' }, async () => {
  const { code, screen } = await inPty([SELF], [[2500, '\x03']]);
  const text = plain(screen);
  assert.strictEqual(code, 3, text);
  assert.match(text, /app got SIGINT/);
  assert.ok(screen.lastIndexOf(LEAVE) < screen.indexOf('app got SIGINT'));
  assert.doesNotMatch(text, /app still runs/);
});

test('rloop.top() without a terminal, or given no monitor: a TypeError naming the option', () => {
  const rloop = require('../..');
  const tty = { isTTY: true, write() {}, setRawMode() {} };
  assert.throws(() => rloop.top({ stdout: { write() {} }, stdin: tty }), { name: 'TypeError', message: "rloop: top() needs a terminal: option 'stdout' is not a TTY" });
  assert.throws(() => rloop.top({ stdout: tty, stdin: { on() {} } }), { name: 'TypeError', message: "rloop: top() needs a terminal: option 'stdin' is not a TTY" });
  assert.throws(() => rloop.top({ stdout: tty, stdin: tty, monitor: 'main' }), { name: 'TypeError', message: "rloop: option 'monitor' must be a monitor (rloop.start()), got string" });
  assert.strictEqual(rloop.monitor(), null, 'nothing started');
});

test('rloop top without a terminal says so, exit 1', async (t) => {
  const app = await startApp(path.join(FIXTURES, 'app.cjs'));
  t.after(() => app.kill());
  const r = await rloop(['top', app.pid]);
  assert.strictEqual(r.code, 1);
  assert.match(r.stderr, /^rloop: top needs a terminal; use rloop attach for a report\n$/);
});

test('the screen fits the terminal: no line wider than it, no more lines than it has; sorts and pauses show', () => {
  const scopes = Array.from({ length: 40 }, (_, i) => ({
    name: `scope-${i}-${'x'.repeat(i)}`, elu: i / 100, busyMs: i * 10, calls: 40 - i,
    ...(i % 2 ? { keys: { count: i, dropped: 0, p50Ms: 1, p99Ms: i, maxMs: i, worst: [] } } : {}),
  }));
  const view = {
    info: { pid: 1, node: 'v26.0.0', thread: 0 },
    window: { durationMs: 1000, thread: { elu: 0.5, busyMs: 500 }, unattributed: { name: '(unattributed)', elu: 0.1, busyMs: 100, calls: 3 }, scopes, lag: { stalls: 1, maxMs: 120 } },
    events: Array.from({ length: 30 }, (_, i) => ({ at: i, line: `⚠ lag ${i} ms ${'y'.repeat(200)}` })),
    sort: 'calls',
    paused: true,
  };
  for (const [columns, rows] of [[80, 24], [120, 50], [40, 10]]) {
    const lines = renderTop(view, { columns, rows }).split('\n');
    assert.ok(lines.length <= rows, `${lines.length} lines for ${rows} rows`);
    for (const l of lines) assert.ok([...l].length <= columns, `${[...l].length} > ${columns}: ${l}`);
  }
  const text = renderTop(view, { columns: 120, rows: 50 });
  assert.match(text, /sort: calls {2}PAUSED/);
  const names = text.split('\n').filter((l) => l.startsWith('scope-')).map((l) => Number(l.split('-')[1]));
  assert.deepStrictEqual(names, [...names].sort((a, b) => a - b), 'most calls first');
  assert.match(text, /^scope-1-x +[█·]+ +[\d.]+ % .* 1 ms \(1 keys\)/m);
  assert.match(renderTop({ ...view, sort: 'elu' }, { columns: 120, rows: 50 }), /^scope-39-/m);
  // At 80 columns a route's name stays readable, and its ELU, busy time and calls too.
  const route = { name: 'GET /api/v1/orders/:id', elu: 0.25, busyMs: 250, calls: 12, keys: { count: 3, dropped: 0, p50Ms: 1, p99Ms: 80, maxMs: 90, worst: [] } };
  const narrow = renderTop({ ...view, window: { ...view.window, scopes: [route] } }, { columns: 80, rows: 24 });
  assert.match(narrow, /^GET \/api\/v1\/orders\/:id +[█·]{10} +25(\.0)? % +250 ms +12 {2}80/m);
});

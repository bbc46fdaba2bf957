'use strict';
// Leaving without a goodbye, and two attaches handing over: a CLI killed with SIGKILL is taken
// out by the target's watchdog (it sees the connection's socket closed), and an attach arriving just after the last one
// left takes over the inspector's pending close instead of being cut off by it.

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { setTimeout: sleep } = require('node:timers/promises');
const { listening } = require('../../cli/attach/inspector');
const connection = require('../../cli/attach/connection');
const session = require('../../cli/attach/session');
const agent = require('../../cli/attach/agent');
const { FIXTURES, startApp, ask, rloop, seen, assertLeftNothing } = require('../fixtures/attach-helpers');

const CJS = path.join(FIXTURES, 'app.cjs');

/** Kills the CLI mid-capture; the target, started with `args`, must take rloop out and close the inspector. */
async function killedMidCapture(t, args) {
  const app = await startApp(CJS, { args });
  t.after(() => app.kill());
  t.after(() => { if (app.exitCode !== null && app.exitCode !== 0) console.log(app.output); });
  const inspectorsBefore = listening(app.pid);
  const run = rloop(['attach', app.pid, '-d', 60]);
  const said = await seen(run.child.stderr, /capturing/);
  assert.doesNotMatch(said, /cannot see this command's connection/);
  assert.strictEqual((await ask(app, 'state')).now.monitored, 1);
  run.child.kill('SIGKILL');
  const killedAt = Date.now();
  await run;
  // Within the watchdog's look, the close's delay, and room for a loaded machine.
  const boundMs = agent.WATCHDOG_MS + agent.CLOSE_AFTER_MS + 8000;
  while (Date.now() - killedAt < boundMs && listening(app.pid).length > inspectorsBefore.length) await sleep(100);
  t.diagnostic(`the inspector closed ${Date.now() - killedAt} ms after the kill`);
  assert.deepStrictEqual(listening(app.pid), inspectorsBefore, `the inspector closed within ${boundMs} ms`);
  await assertLeftNothing(app, inspectorsBefore);
  assert.strictEqual(app.exitCode, null, 'the app runs on');
}

test('a CLI killed with SIGKILL mid-capture: the target takes rloop out and closes the inspector it opened', (t) => killedMidCapture(t, []));

// Its watchdog on the app's fake clock would never look: rloop and the inspector left in for good.
test('the same in an app whose own fake timers replaced every timer (jest, sinon): the watchdog looks on real time', (t) => killedMidCapture(t, ['--fake-timers']));

// inspector.close() while a worker holds a session to the thread crashes Node: the stack sampler
// of the app's own monitor is paused for the close, which then happens as for any target.
test("leaving an app that runs its own monitor, stalling all the time: the inspector rloop opened is closed, the app's monitor runs on", async (t) => {
  const app = await startApp(CJS, { args: ['--monitor'] });
  t.after(() => app.kill());
  t.after(() => { if (app.exitCode !== null && app.exitCode !== 0) console.log(app.output); });
  const inspectorsBefore = listening(app.pid);
  for (let round = 0; round < 3; round++) {
    const r = await rloop(['attach', app.pid, '-d', 1, '--no-profile']);
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stderr, /the monitor already running there/);
    assert.doesNotMatch(r.stderr, /left the inspector open/);
    const left = Date.now();
    while (Date.now() - left < agent.CLOSE_AFTER_MS + 8000 && listening(app.pid).length > inspectorsBefore.length) await sleep(100);
    assert.deepStrictEqual(listening(app.pid), inspectorsBefore, `round ${round}: the inspector rloop opened is closed`);
    const { now } = await ask(app, 'state');
    assert.strictEqual(now.monitored, 1, "the app's own monitor runs on");
    assert.strictEqual(app.exitCode, null, 'the app runs on');
  }
});

test('a CLI still connected is not taken out: its capture runs its whole duration', async (t) => {
  const app = await startApp(CJS);
  t.after(() => app.kill());
  const inspectorsBefore = listening(app.pid);
  const r = await rloop(['attach', app.pid, '-d', 5 * agent.WATCHDOG_MS / 1000, '--no-profile']);
  assert.strictEqual(r.code, 0, r.stderr);
  assert.doesNotMatch(r.stderr, /cannot see/);
  assert.doesNotMatch(r.stdout, /partial/, 'the capture ran its whole duration');
  assert.match(r.stdout, /^ {2}stall /m);
  await assertLeftNothing(app, inspectorsBefore);
});

test('an attach arriving just after the last one left takes over the pending close of the inspector it opened', async (t) => {
  const app = await startApp(CJS);
  t.after(() => app.kill());
  t.after(() => { if (app.exitCode !== null && app.exitCode !== 0) console.log(app.output); });
  const inspectorsBefore = listening(app.pid);
  const lines = [];
  const o = { log: (l) => lines.push(l), events: ['lag'], start: { lagThresholdMs: 50, ioThresholdMs: 500, io: true }, target: 0 };
  const first = await connection.open({ ...o, pid: app.pid }, () => {});
  assert.strictEqual(first.opened, true, 'the first attach opened the inspector');
  // The second connects; the first leaves (its monitor stopped, the agent gone), and before it
  // closes its connection the second loads rloop (one evaluate later: well within the close's delay).
  const connected = await connection.connect({ ...o, port: first.inspector.port });
  const left = await connection.leave(first);
  assert.strictEqual(left.closing, true, 'leaving armed the close');
  const lags = [];
  const second = await connection.load(connected, o, (type) => lags.push(type));
  assert.strictEqual(second.info.sessions, 1);
  assert.strictEqual(second.info.started, true, 'the second started a monitor of its own');
  await connection.close(first);
  // Well past the first's close delay, the second is still attached, its monitor running.
  await sleep(agent.CLOSE_AFTER_MS + 2500);
  assert.strictEqual(second.s.closed, false, 'the second attach kept its connection');
  assert.strictEqual((await second.s.evaluate(agent.call(agent.read))).threads, 1);
  // The app stalls 120 ms each second: a loaded machine may delay the first one's event, so
  // it is awaited (bounded); missing, the target says whether it saw stalls and who listened.
  for (const end = Date.now() + 8000; lags.length === 0 && Date.now() < end;) await sleep(100);
  const seenThere = lags.length > 0 ? null : await second.s.evaluate(`(() => { const a = globalThis[Symbol.for('${agent.KEY}')]; return JSON.stringify({ listeners: a.monitor.listenerCount('lag'), stalls: a.monitor.history().map((w) => w.lag?.stalls) }); })()`);
  assert.ok(lags.length >= 1, `and its events stream; the target: ${seenThere}`);
  assert.deepStrictEqual(listening(app.pid).length, inspectorsBefore.length + 1);
  // It inherited the close: its leaving closes the inspector the first opened.
  assert.strictEqual((await connection.close(second)).closing, true);
  await assertLeftNothing(app, inspectorsBefore);
  assert.deepStrictEqual(lines, []);
});

// The close a previous attach armed can fire after the next attach found the inspector open
// and before it takes the close over: seen on a loaded machine as ECONNRESET. Each of the two
// places is made to happen here by holding the next attach's connect until the close has fired.
for (const when of ['before its connection', 'once connected']) {
  test(`an attach that the inspector's pending close cuts off ${when} opens it again and attaches`, async (t) => {
    const app = await startApp(CJS);
    t.after(() => app.kill());
    const inspectorsBefore = listening(app.pid);
    const lines = [];
    const o = { log: (l) => lines.push(l), events: [], start: {}, target: 0, pid: app.pid };
    const first = await connection.open(o, () => {});
    assert.strictEqual((await connection.close(first)).closing, true, 'leaving armed the close');
    const closed = async () => {
      while (listening(app.pid).some((p) => p.port === first.inspector.port)) await sleep(20);
    };
    const connect = session.connect;
    t.after(() => { session.connect = connect; });
    session.connect = async (url) => {
      session.connect = connect; // only this attach's first try is held
      if (when === 'before its connection') return closed().then(() => connect(url));
      const s = await connect(url);
      await closed();
      return s;
    };
    const second = await connection.open(o, () => {});
    assert.strictEqual(second.opened, true, 'it opened the inspector again, so it closes it');
    assert.strictEqual(second.info.sessions, 1);
    assert.strictEqual((await connection.close(second)).closing, true);
    await assertLeftNothing(app, inspectorsBefore);
    assert.deepStrictEqual(lines, []);
  });
}

// A target whose main thread stays blocked never answers a command. An inspector that accepts
// the connection and answers nothing stands in for it.
test('a target that answers nothing: rloop attach gives up within its limit, says so, exit 1, and lets go of the connection', { timeout: 60_000 }, async (t) => {
  const http = require('node:http');
  const crypto = require('node:crypto');
  let sockets = 0;
  let ended = 0;
  const server = http.createServer((req, res) => {
    const { port } = server.address();
    res.end(JSON.stringify([{ webSocketDebuggerUrl: `ws://127.0.0.1:${port}/silent` }]));
  });
  server.on('upgrade', (req, socket) => {
    sockets++;
    socket.on('end', () => { ended++; socket.destroy(); }).resume(); // read, never answered; half-open, as http's upgrades are
    const accept = crypto.createHash('sha1').update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`).digest('base64');
    socket.write(`HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => server.close());
  const began = Date.now();
  const r = await rloop(['attach', '--port', server.address().port, '-d', 1]);
  const tookMs = Date.now() - began;
  assert.strictEqual(r.code, 1, r.stderr);
  assert.match(r.stderr, /^rloop: the target did not answer Runtime\.evaluate within 10 s: its main thread is blocked/m);
  assert.ok(tookMs >= 10_000 && tookMs < 25_000, `gave up after ${tookMs} ms`);
  await sleep(200);
  assert.deepStrictEqual({ sockets, ended }, { sockets: 1, ended: 1 }, 'its one connection, ended by the command');
});

test('a CLI killed with SIGKILL while attached to a worker: the worker takes rloop out, the main thread closes the inspector rloop opened', async (t) => {
  const app = await startApp(path.join(FIXTURES, 'worker-app.cjs'));
  t.after(() => app.kill());
  t.after(() => { if (app.exitCode !== null && app.exitCode !== 0) console.log(app.output); });
  const inspectorsBefore = listening(app.pid);
  const run = rloop(['attach', app.pid, '--target', 1, '-d', 60, '--no-profile']);
  await seen(run.child.stderr, /capturing/);
  assert.strictEqual((await ask(app, 'state')).now.monitored, 1, 'the worker is monitored');
  run.child.kill('SIGKILL');
  const killedAt = Date.now();
  await run;
  const boundMs = agent.WATCHDOG_MS * 2 + agent.CLOSE_AFTER_MS + 8000;
  while (Date.now() - killedAt < boundMs && listening(app.pid).length > inspectorsBefore.length) await sleep(100);
  t.diagnostic(`the inspector closed ${Date.now() - killedAt} ms after the kill`);
  assert.deepStrictEqual(listening(app.pid), inspectorsBefore, `the inspector closed within ${boundMs} ms`);
  assert.strictEqual((await ask(app, 'state')).now.monitored, 0, 'no thread monitored');
  assert.strictEqual(app.exitCode, null, 'the app runs on');
});

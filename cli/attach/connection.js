'use strict';
// One attached session, from the command line's options to rloop running in the target and
// back out: find or open the inspector, pick the thread, load rloop there, stream its events,
// and leave nothing behind.

const crypto = require('node:crypto');
const path = require('node:path');
const { AttachError, activate, atPort, LOOPBACK } = require('./inspector');
const session = require('./session');
const agent = require('./agent');

const CLI_RLOOP = path.join(__dirname, '..', '..', 'js', 'index.js');

/** The inspector's main-thread entry and the process's workers, for --list-targets. */
async function listTargets(main) {
  const found = await session.workers(main);
  return [{ n: 0, what: 'main thread' }, ...found.map((w, i) => ({ n: i + 1, what: `worker ${w.workerId}`, title: w.title, url: w.url, worker: w }))];
}

/**
 * Opens a connection: `{ pid, port, host, target, log }` → `{ s, info, close(), opened }` where
 * `s` is the chosen thread's session. `onEvent(type, data)` hears the target's events.
 */
async function open(o, onEvent) {
  const c = await connect(o);
  return o.listTargets ? c : load(c, o, onEvent);
}

/** The inspector found or opened, connected to, and the thread picked; rloop not loaded yet. */
async function connect(o) {
  const host = o.host ?? '127.0.0.1';
  if (!LOOPBACK.has(host)) o.log(`warning: the inspector has no authentication; ${host} is not loopback, anyone who reaches it can run code in the target`);
  let inspector;
  let main;
  let held;
  // An inspector a previous attach left closing may close between being found and this
  // attach taking its close over (the connection reset, or dropped): then once more, from the
  // start, where a signal opens it again. With --port nothing opens it again.
  for (let again = o.port === undefined; ; again = false) {
    inspector = o.port !== undefined ? await atPort(host, o.port) : await activate(o.pid, o.log);
    try {
      main = await session.connect(inspector.wsUrl);
    } catch (e) {
      if (again) continue;
      throw new AttachError(`cannot connect to the inspector at ${inspector.host}:${inspector.port}: ${e.message}`);
    }
    held = await main.evaluate(agent.call(agent.hold)).catch((e) => e);
    if (!(held instanceof session.TargetGone) || !again) break;
  }
  const c = { main, s: main, inspector, opened: inspector.opened || held === true, log: o.log };
  return failing(c, async () => {
    if (held instanceof Error) throw held;
    if (o.listTargets || o.target > 0) {
      c.targets = await listTargets(main);
      if (o.target > 0) {
        const t = c.targets[o.target];
        if (!t) throw new AttachError(`no target ${o.target}: the process has ${c.targets.length - 1} worker(s) (see --list-targets)`);
        c.s = t.worker.session();
      }
    }
    // Exiting with an inspector client attached, Node waits for it to leave: this says when.
    if (!o.listTargets) await main.send('NodeRuntime.notifyWhenWaitingForDisconnect', { enabled: true }).catch(silentOnly);
    return c;
  });
}

/** Loads rloop into the connected thread (`c` from connect()) and starts its events. */
function load(c, o, onEvent) {
  return failing(c, async () => {
    c.id = crypto.randomBytes(6).toString('hex');
    const binding = `__rloop_attach_${c.id}`;
    await c.s.send('Runtime.addBinding', { name: binding });
    c.s.on('Runtime.bindingCalled', (p) => {
      if (p.name !== binding) return;
      let m;
      try {
        m = JSON.parse(p.payload);
      } catch {
        return;
      }
      onEvent(m.type, m.data);
    });
    c.binding = binding;
    c.peer = { port: c.inspector.port, from: c.main.ws.localPort };
    c.info = await c.s.evaluate(agent.callFromLoop(agent.install, {
      id: c.id,
      cliRloop: CLI_RLOOP,
      binding,
      start: o.start,
      events: o.events,
      opened: c.opened,
      // The target's end of this connection, for its watchdog: should this process die without
      // leaving (SIGKILL), the target sees the socket close and takes rloop out.
      peer: c.peer,
      watchdogMs: agent.WATCHDOG_MS,
      closeAfterMs: agent.CLOSE_AFTER_MS,
    }, agent.closeInspector, agent.link, agent.hold, agent.realTimer), { awaitPromise: true });
    // A worker closes nothing of its main thread: there, a guard closes the inspector rloop
    // opened should this process die without leaving.
    if (c.s !== c.main && c.opened) {
      c.guarded = await c.main.evaluate(agent.call(agent.guard, { id: c.id, peer: c.peer, watchdogMs: agent.WATCHDOG_MS, closeAfterMs: agent.CLOSE_AFTER_MS }, agent.closeInspector, agent.link, agent.realTimer));
    }
    return c;
  });
}

/** `step()`'s result; if it fails, the connection closed and the failure said as an AttachError. */
async function failing(c, step) {
  try {
    return await step();
  } catch (e) {
    c.silent = e instanceof session.TargetSilent; // then nothing more is asked of it: the connection just closes
    await close(c);
    throw e instanceof AttachError || e instanceof session.TargetGone ? e : new AttachError(`loading rloop into the target failed: ${e.message}`);
  }
}

/** A command's failure that may be passed over, unless the target did not answer at all. */
function silentOnly(e) {
  if (e instanceof session.TargetSilent) throw e;
}

/**
 * Takes rloop out of the target: this session's listeners and binding, and the monitor if rloop
 * started it and no other session is attached (a capture running then ends, partial). Once.
 */
function leave(c) {
  c.leaving ??= c.id && !c.s.closed && !c.exiting && !c.silent
    ? c.s.evaluate(agent.callFromLoop(agent.detach, { id: c.id }), { awaitPromise: true })
      .then(async (left) => {
        await c.s.send('Runtime.removeBinding', { name: c.binding }).catch(() => {});
        return left;
      })
      .catch(() => null) // the target is gone
    : Promise.resolve(null);
  return c.leaving;
}

/** Leaves, and closes the connection; the inspector too if rloop opened it. */
async function close(c) {
  const left = await leave(c);
  if (c.s !== c.main) await c.s.close();
  if (c.guarded && !c.main.closed) await c.main.evaluate(agent.call(agent.unguard, { id: c.id })).catch(() => {});
  // The last of rloop's sessions closes the inspector if one of them opened it (another attach
  // may still be running): leaving armed the close, but a worker's agent closes nothing of its
  // main thread, and if leaving failed the one that opened it closes it.
  if (!c.main.closed && !c.exiting && !c.silent && !left?.closing && (left === null ? c.opened : left.opened)) {
    if (left?.monitored > 0 && !left.pausable) {
      // A monitor of a copy of rloop too old to pause its stack sampler runs on: the sampler may
      // hold a session at any time.
      c.log(`left the inspector open (${c.inspector.host}:${c.inspector.port}): the app's rloop is too old to close it safely while its monitor runs`);
    } else {
      await c.main.evaluate(agent.call(agent.closeInspector, { afterMs: agent.CLOSE_AFTER_MS }, agent.realTimer)).catch(() => {});
    }
  }
  c.main.close();
  return left;
}

module.exports = { open, connect, load, leave, close, listTargets };

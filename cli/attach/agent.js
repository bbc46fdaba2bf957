'use strict';
// What runs inside the target, sent as source through Runtime.evaluate. Each function is
// self-contained (it is serialized); `install` leaves one non-enumerable global, the agent,
// shared by every attached session, and the last session to leave removes it and stops the
// monitor if rloop started it. A session whose connection closed without leaving (its CLI
// killed) is taken out the same way. Nothing here may throw into the app: errors go back to the CLI.

const KEY = 'rloop.attach'; // Symbol.for(KEY) on globalThis while any session is attached
// How often the target looks whether each session's connection is still open (the watchdog).
const WATCHDOG_MS = 1000;

/**
 * Loads rloop (a copy the app already runs, else the app's installed one, else the CLI's own
 * `cliRloop`) and starts a monitor unless one runs; `binding` is this session's Runtime binding.
 */
function install({ key, id, cliRloop, binding, start, events, opened, peer, watchdogMs, closeAfterMs }, closeInspector, link, hold, realTimer) {
  // A close armed after this attach connected (connect() took over any armed before).
  if (hold({ key })) opened = true;
  const KEY_SYM = Symbol.for(key);
  // The inspector console's `require` where process.getBuiltinModule is missing (Node < 20.16).
  const builtin = process.getBuiltinModule ?? require;
  const Module = builtin('module');
  const path = builtin('path');
  let agent = globalThis[KEY_SYM];
  if (agent === undefined) {
    let rloop = null;
    let file = null;
    let from = 'running';
    for (const m of Object.values(Module._cache)) {
      const x = m?.exports;
      if (/[\\/]js[\\/]index\.js$/.test(m?.filename ?? '') && typeof x?.monitor === 'function' && typeof x.threads === 'function' && x.monitor() !== null) {
        rloop = x;
        file = m.filename;
        break;
      }
    }
    if (rloop === null) {
      from = 'app';
      for (const base of [process.argv[1], path.join(process.cwd(), 'index.js')]) {
        if (typeof base !== 'string') continue;
        try {
          file = Module.createRequire(path.resolve(base)).resolve('rloop');
          break;
        } catch {
          // not installed there
        }
      }
      if (file === null) {
        file = cliRloop;
        from = 'cli';
      }
      rloop = Module.createRequire(file)(file);
    }
    let monitor = rloop.monitor();
    const started = monitor === null;
    if (started) monitor = rloop.start(start);
    else from = 'running';
    agent = { rloop, monitor, started, from, sessions: new Map(), opened: false, nodered: null, watchdog: null };
    const { isMainThread } = builtin('worker_threads');
    // The last session to leave arms the inspector's close in the same turn: an attach that
    // arrives after it finds the close pending and takes it over, none can slip in between.
    agent.leave = (sid) => {
      const me = agent.sessions.get(sid);
      if (me !== undefined) {
        for (const [type, fn] of me.listeners) agent.monitor.off(type, fn);
        agent.sessions.delete(sid);
        delete globalThis[me.binding]; // Runtime.removeBinding leaves the function on the global
      }
      if (agent.sessions.size > 0) return { stopped: false, left: agent.sessions.size, opened: false, monitored: 0, pausable: false, closing: false };
      agent.watchdog?.();
      delete globalThis[KEY_SYM];
      agent.nodered?.on?.stop(); // RED.hooks.remove('*.rloop'): Node-RED's message path as before
      if (agent.started) agent.monitor.stop();
      const monitored = agent.rloop.threads().length;
      // While a monitor runs, its stack sampler may hold a session: closing is safe only where
      // the sampler can be paused for it (a copy of rloop too old to cannot).
      const pausable = typeof agent.rloop[Symbol.for('rloop.pauseSampler')] === 'function';
      // A worker's inspector is its main thread's: the CLI closes that one (connection.close()).
      const closing = agent.opened && (monitored === 0 || pausable) && isMainThread && closeInspector({ key, afterMs: closeAfterMs }, realTimer);
      return { stopped: agent.started, left: 0, opened: agent.opened, monitored, pausable, closing };
    };
    // Node-RED: per-node attribution by its message hooks, with the parts of the rloop loaded: its
    // package's entry point rloop/node-red/attach, found from the loaded copy itself (a copy older
    // than that entry point has them by path, or none); a failure leaves the capture without it,
    // and says why, never the app broken.
    try {
      const load = Module.createRequire(file);
      let nodered;
      try {
        nodered = load('rloop/node-red/attach'); // the package's own, by its name (self-reference)
      } catch (e) {
        if (e.code !== 'ERR_PACKAGE_PATH_NOT_EXPORTED') throw e;
        nodered = load(path.join(path.dirname(file), '..', 'node-red', 'attach.js'));
      }
      const RED = nodered.find(Module._cache);
      if (RED !== null) {
        const version = typeof RED.version === 'function' ? RED.version() : RED.version;
        const on = nodered.start(RED, monitor);
        agent.nodered = { version: String(version), attribution: on?.by ?? 'plugin', on };
      }
    } catch (e) {
      if (e.code !== 'MODULE_NOT_FOUND') agent.nodered = { version: null, attribution: `none (${e.message.split('\n')[0]})`, on: null };
    }
    Object.defineProperty(globalThis, KEY_SYM, { value: agent, configurable: true, enumerable: false, writable: false });
  }
  const send = (type, data) => {
    try {
      const fn = globalThis[binding];
      if (typeof fn === 'function') fn(JSON.stringify({ type, data }));
    } catch {
      // the CLI is gone; detach() removes the listener
    }
  };
  const listeners = events.map((type) => [type, (e) => send(type, e)]);
  for (const [type, fn] of listeners) agent.monitor.on(type, fn);
  agent.sessions.set(id, { listeners, binding, link: link(peer) });
  agent.opened ||= opened; // the last session to leave closes an inspector rloop opened
  // A session whose socket is gone (its CLI died without leaving) is left, as its CLI would have:
  // one readlink a session each look, and nothing sent over the connection.
  agent.watchdog ??= realTimer(watchdogMs, () => {
    for (const [sid, s] of agent.sessions) if (s.link !== null && !s.link.open()) agent.leave(sid);
  });
  return {
    pid: process.pid,
    node: process.version,
    thread: builtin('worker_threads').threadId,
    from: agent.from,
    started: agent.started,
    sessions: agent.sessions.size,
    windowMs: agent.monitor.windowMs,
    linked: agent.sessions.get(id).link !== null,
    nodered: agent.nodered && { version: agent.nodered.version, attribution: agent.nodered.attribution },
  };
}

/**
 * This session's connection, as the inspector holds it in this process (the socket from the
 * inspector's port to the CLI's, in Linux /proc): `open()` says whether it still is; null where it
 * is not seen (another network namespace between them).
 */
function link({ port, from }) {
  const fs = (process.getBuiltinModule ?? require)('fs');
  const hex = (n) => `:${n.toString(16).toUpperCase().padStart(4, '0')}`;
  try {
    let inode = null;
    for (const file of ['/proc/self/net/tcp', '/proc/self/net/tcp6']) {
      for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
        const f = line.trim().split(/\s+/); // f[3] '01': established
        if (f[3] === '01' && f[1].endsWith(hex(port)) && f[2].endsWith(hex(from))) inode = f[9];
      }
    }
    const socket = `socket:[${inode}]`;
    for (const fd of inode === null ? [] : fs.readdirSync('/proc/self/fd')) {
      try {
        if (fs.readlinkSync(`/proc/self/fd/${fd}`) === socket) {
          return {
            open() {
              try {
                return fs.readlinkSync(`/proc/self/fd/${fd}`) === socket;
              } catch {
                return false; // closed
              }
            },
          };
        }
      } catch {
        // closed meanwhile
      }
    }
  } catch {
    // no /proc
  }
  return null;
}

/**
 * Runs one capture in the target and resolves to its report as JSON. `options.json` (a temp
 * file) is where the capture's exit guard writes the partial report if the target exits first;
 * it is removed once the report came back.
 */
async function capture({ key, options }) {
  const agent = globalThis[Symbol.for(key)];
  const fs = (process.getBuiltinModule ?? require)('fs');
  try {
    // With Node-RED attribution from attach, the report names the nodes (report.nodered).
    return JSON.stringify(await (agent.nodered?.on ?? agent.monitor).capture(options));
  } finally {
    if (options.json) fs.rmSync(options.json, { force: true });
  }
}

/** The live window, and how many threads rloop monitors. An older rloop in the target has elu() only. */
function read({ key }) {
  const { monitor, rloop } = globalThis[Symbol.for(key)];
  return { window: (monitor.liveWindow ?? monitor.elu).call(monitor), threads: rloop.threads().length };
}

/**
 * Leaves: this session's listeners and binding go; the last session stops what rloop started
 * and arms the close of an inspector rloop opened (`closing`), unless a monitor runs on.
 */
function detach({ key, id }) {
  return globalThis[Symbol.for(key)]?.leave(id) ?? { stopped: false, left: 0, opened: false, monitored: 0, pausable: false, closing: false };
}

/**
 * The main thread's side of a worker's session through an inspector rloop opened: should the
 * CLI die without leaving, the worker's watchdog takes rloop out of the worker, but a worker
 * closes nothing of its main thread; this looks at the same connection and closes the inspector
 * once no session of rloop's is left. The CLI leaving removes it (unguard) and closes as ever.
 */
function guard({ key, id, peer, watchdogMs, closeAfterMs }, closeInspector, link, realTimer) {
  const GUARDS = Symbol.for(`${key}.guards`);
  const l = link(peer);
  if (l === null) return false;
  if (globalThis[GUARDS] === undefined) Object.defineProperty(globalThis, GUARDS, { value: new Map(), configurable: true, enumerable: false });
  const guards = globalThis[GUARDS];
  const Module = (process.getBuiltinModule ?? require)('module');
  // Threads rloop monitors, process-wide, by a copy loaded here whose stack sampler cannot be
  // paused for the close (the worker's leaves by its watchdog).
  const monitored = () => Object.values(Module._cache).some((m) => /[\\/]js[\\/]index\.js$/.test(m?.filename ?? '') && typeof m.exports?.threads === 'function'
    && typeof m.exports[Symbol.for('rloop.pauseSampler')] !== 'function' && m.exports.threads().length > 0);
  let looks = 0;
  const cancel = realTimer(watchdogMs, () => {
    if (l.open()) return;
    // As the CLI leaving would: never closed while such a monitor runs (its stack sampler may hold
    // a session), waiting a few looks for the worker's own watchdog to take rloop out.
    if (monitored() && ++looks < 10) return;
    cancel();
    guards.delete(id);
    if (guards.size === 0) delete globalThis[GUARDS];
    if (guards.size > 0 || looks >= 10) return; // another session is left, or a monitor runs on
    const main = globalThis[Symbol.for(key)]; // an attach to the main thread: its last leave closes
    if (main !== undefined) main.opened = true;
    else if (globalThis[Symbol.for(`${key}.closing`)] === undefined) closeInspector({ key, afterMs: closeAfterMs }, realTimer);
  });
  guards.set(id, cancel);
  return true;
}

/** Removes this session's guard (guard()), as its CLI leaves. */
function unguard({ key, id }) {
  const guards = globalThis[Symbol.for(`${key}.guards`)];
  guards?.get(id)?.();
  guards?.delete(id);
  if (guards?.size === 0) delete globalThis[Symbol.for(`${key}.guards`)];
}

/**
 * Takes over the inspector's close a previous attach armed (closeInspector()), not done yet:
 * this attach closes it instead. True if there was one. Run on the main thread, where it is armed.
 */
function hold({ key }) {
  const CLOSING = Symbol.for(`${key}.closing`);
  const closing = globalThis[CLOSING];
  if (closing === undefined) return false;
  closing();
  delete globalThis[CLOSING];
  return true;
}

/**
 * Closes the inspector rloop opened, `afterMs` from now (a CLI still connected then is dropped).
 * inspector.close() while a worker holds a session to this thread crashes Node (seen on 20 and
 * 26): rloop's stack sampler opens one per stall, for at most its answer timeout (1 s). Every
 * sampler loaded here that can be paused is, until the close is done; one that cannot opens none
 * once no thread is monitored, which the callers wait for. The close is unref'd: the app may
 * exit meanwhile.
 */
function closeInspector({ key, afterMs }, realTimer) {
  // An attach that comes meanwhile cancels this close and inherits it (hold()), while the
  // samplers pause too.
  const CLOSING = Symbol.for(`${key}.closing`);
  const builtin = process.getBuiltinModule ?? require;
  const inspector = builtin('inspector');
  const PAUSE = Symbol.for('rloop.pauseSampler');
  let cancelled = false;
  const close = async () => {
    const pausers = Object.values(builtin('module')._cache).map((m) => m?.exports?.[PAUSE]).filter((f) => typeof f === 'function');
    const resumes = await Promise.all(pausers.map((pause) => pause((ms, fn) => realTimer(ms, fn, false))));
    try {
      if (!cancelled) {
        delete globalThis[CLOSING];
        inspector.close();
      }
    } finally {
      for (const resume of resumes) resume();
    }
  };
  const stop = realTimer(afterMs, () => close().catch(() => {}), false);
  const cancel = () => {
    cancelled = true;
    stop();
  };
  Object.defineProperty(globalThis, CLOSING, { value: cancel, configurable: true, enumerable: false });
  return true;
}

/**
 * Calls `fn` once `ms` from now, and every `ms` after if `repeat`, on real time; returns what
 * cancels it. `fn` never throws into the app. Not a timer: an app's fake timers replace every
 * one a module can reach (@sinonjs/fake-timers, as jest and sinon install it, the timers
 * modules too; node:test's mock.timers, on Node 26 AbortSignal.timeout too), and a watchdog on
 * them would never look. Atomics.waitAsync times out on V8's own clock and, as an unref'd timer,
 * keeps no process alive.
 */
function realTimer(ms, fn, repeat = true) {
  const cell = new Int32Array(new SharedArrayBuffer(4));
  const wait = () => {
    const w = Atomics.waitAsync(cell, 0, 0, ms); // not async once cancelled: the cell is 1
    if (w.async) w.value.then((result) => {
      if (result !== 'timed-out') return; // cancelled
      try {
        fn();
      } catch {
        // nowhere to say it from a timer; the CLI sees what did not happen
      }
      if (repeat) wait();
    });
  };
  wait();
  return () => {
    Atomics.store(cell, 0, 1);
    Atomics.notify(cell, 0);
  };
}

// rloop's URL on its frames: the target's CPU profile shows this code as rloop's, not the app's.
const SOURCE_URL = '\n//# sourceURL=rloop:attach';

/** `fn` applied to `arg` (and to the functions `helpers`), as JS source. */
function applied(fn, arg, helpers) {
  return `(${fn})(${[JSON.stringify({ key: KEY, ...arg }), ...helpers].join(', ')})`;
}

/** `fn` applied to `arg` (and to the functions `helpers`), as an expression for Runtime.evaluate. */
function call(fn, arg = {}, ...helpers) {
  return applied(fn, arg, helpers) + SOURCE_URL;
}

/**
 * As call(), for what starts or stops anything: `fn` runs from the target's event loop, and the
 * expression is a promise of its value (evaluate it with awaitPromise). The inspector runs a
 * command as an interrupt inside whatever JS runs then: inside an async hook's callback, Node
 * loses a hook enabled or disabled there, and calls a disabled one for the rest of that event;
 * inside rloop's own hooks, they would be entered again. The promise is held until the
 * inspector's reaction to it has run: V8's inspector holds what it awaits weakly.
 */
function callFromLoop(fn, arg = {}, ...helpers) {
  // The console's `require` (Node < 20.16 has no getBuiltinModule) only exists while the
  // command runs: `fn` gets it as a parameter.
  return `((require) => {
  const p = new Promise((resolve, reject) => (process.getBuiltinModule ?? require)('timers').setImmediate(() => {
    try { resolve(${applied(fn, arg, helpers)}); } catch (e) { reject(e); }
    p.then(keep, keep);
  }));
  const keep = () => void p;
  return p;
})(typeof require === 'function' ? require : undefined)${SOURCE_URL}`;
}

module.exports = { install, capture, read, detach, guard, unguard, hold, closeInspector, link, realTimer, call, callFromLoop, KEY, WATCHDOG_MS, CLOSE_AFTER_MS: 1500 };

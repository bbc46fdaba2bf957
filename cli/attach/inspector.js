'use strict';
// Finding a process's inspector: one already open (its listening sockets, from /proc), or one
// opened with SIGUSR1 — only once the process is known to be Node, since SIGUSR1 kills a
// process that does not handle it.

const fs = require('node:fs');
const http = require('node:http');
const { setTimeout: sleep } = require('node:timers/promises');

/** A failure the user can act on: printed as one line, exit code 1. */
class AttachError extends Error {}

const SIGUSR1_BIT = 1n << 9n; // signal 10, bit 9 of the masks in /proc/<pid>/status
// As loop-detective: 0.5 s doubling to 4 s, 5 tries with a PID, one with a port.
const BACKOFF_MS = [500, 1000, 2000, 4000, 4000];

/** Checks `pid` is a live process this user may signal, running Node; returns its command name. */
function checkNode(pid) {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if (e.code === 'ESRCH') throw new AttachError(`no process with PID ${pid}`);
    if (e.code === 'EPERM') throw new AttachError(`not allowed to attach to PID ${pid} (another user's process: run as that user)`);
    throw e;
  }
  const status = read(`/proc/${pid}/status`);
  if (status === null) throw new AttachError(`cannot read /proc/${pid}/status: attaching by PID needs Linux's /proc; elsewhere start the app with --inspect and give --port`);
  const name = /^Name:\s*(.*)$/m.exec(status)?.[1] ?? '?';
  // Node blocks SIGUSR1 in every thread and waits for it in one of its own (which opens the
  // inspector): then the signal cannot kill it. A process that neither catches nor blocks it would die.
  const caught = (mask(status, 'SigCgt') & SIGUSR1_BIT) !== 0n;
  if (!caught && !threadStatuses(pid).every((s) => (mask(s, 'SigBlk') & SIGUSR1_BIT) !== 0n)) {
    throw new AttachError(`PID ${pid} (${name}) is not a Node.js process that can open its inspector: SIGUSR1 would kill it (not Node, or started with --disable-sigusr1)`);
  }
  return name;
}

function mask(status, field) {
  return BigInt(`0x${new RegExp(`^${field}:\\s*([0-9a-f]+)$`, 'm').exec(status)?.[1] ?? '0'}`);
}

function threadStatuses(pid) {
  let tasks = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return [''];
  }
  return tasks.map((t) => read(`/proc/${pid}/task/${t}/status`) ?? '');
}

function read(file) {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return null;
  }
}

/** The TCP ports `pid` listens on: [{ host, port, inode }] (a socket opened again has a new inode). */
function listening(pid) {
  const inodes = new Set();
  let fds = [];
  try {
    fds = fs.readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  for (const fd of fds) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(fs.readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  return listeners(`/proc/${pid}/net`).filter((p) => inodes.has(p.inode));
}

/** The TCP sockets listening in the network namespace `/proc/.../net` shows, any process's. */
function listeners(net = '/proc/net') {
  const out = [];
  for (const [file, v6] of [['tcp', false], ['tcp6', true]]) {
    for (const line of (read(`${net}/${file}`) ?? '').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue; // 0A: LISTEN
      const [addr, port] = f[1].split(':');
      out.push({ host: v6 ? hostOf6(addr) : hostOf4(addr), port: parseInt(port, 16), inode: f[9] });
    }
  }
  return out;
}

function hostOf4(hex) {
  return [3, 2, 1, 0].map((i) => parseInt(hex.slice(i * 2, i * 2 + 2), 16)).join('.');
}

function hostOf6(hex) {
  if (/^0{24}/.test(hex) || /^0{20}FFFF0000/i.test(hex)) return hex.slice(24) === '0100007F' ? '::1' : '::';
  return hex === '00000000000000000000000001000000' ? '::1' : '::';
}

/** GET http://host:port/json/list: the inspector's targets, or why not. */
function targetsAt(host, port, timeoutMs = 2000) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host, port, path: '/json/list', timeout: timeoutMs, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => {
        try {
          const list = JSON.parse(body);
          if (Array.isArray(list) && list.every((t) => typeof t.webSocketDebuggerUrl === 'string')) return resolve(list);
        } catch {
          // not JSON
        }
        reject(new AttachError(`${host}:${port} answers, but is not a Node.js inspector`));
      });
    });
    req.on('timeout', () => req.destroy(new AttachError(`${host}:${port} did not answer within ${timeoutMs} ms: not an inspector?`)));
    req.on('error', (e) => reject(e instanceof AttachError ? e : new AttachError(`nothing answers at ${host}:${port} (${e.code || e.message})`)));
  });
}

/** The first of `ports` that is an inspector: { host, port, wsUrl }, or null. */
async function inspectorAmong(ports) {
  for (const { host, port } of ports) {
    const connectTo = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host;
    try {
      const [t] = await targetsAt(connectTo, port, 1000);
      if (t) return { host: connectTo, port, wsUrl: t.webSocketDebuggerUrl };
    } catch {
      // not an inspector
    }
  }
  return null;
}

/** The process's command line and NODE_OPTIONS, as words. */
function nodeArgs(pid) {
  const args = (read(`/proc/${pid}/cmdline`) ?? '').split('\0');
  const nodeOptions = /(?:^|\0)NODE_OPTIONS=([^\0]*)/.exec(read(`/proc/${pid}/environ`) ?? '')?.[1];
  return [...args, ...(nodeOptions ?? '').split(/\s+/)];
}

/** The port `--inspect[-brk|-wait][=[host:]port]` gives the process (0: any), or null without one. */
function inspectFlag(pid) {
  for (const a of nodeArgs(pid)) {
    const m = /^--inspect(?:-brk|-wait)?(?:=(?:.*:)?(\d+))?$/.exec(a);
    if (m) return m[1] === undefined ? 9229 : Number(m[1]);
  }
  return null;
}

/** The port SIGUSR1 opens the inspector on: `--inspect-port` (`--debug-port`), else --inspect's, else 9229 (0: any). */
function signalPort(pid) {
  const args = nodeArgs(pid);
  for (let i = 0; i < args.length; i++) {
    const m = /^--(?:inspect|debug)-port(?:=(.*))?$/.exec(args[i]);
    const port = m && /(?:^|:)(\d+)$/.exec(m[1] ?? args[i + 1] ?? '');
    if (port) return Number(port[1]);
  }
  return inspectFlag(pid) ?? 9229;
}

/**
 * The inspector of `pid`, opened with SIGUSR1 if it is not open yet: { host, port, wsUrl,
 * opened } (`opened`: rloop opened it, so rloop closes it). `log(line)` hears each retry. The
 * app's own servers are never sent a request, unless the inspector is open without a flag
 * saying where (opened earlier by a signal): it is then looked for among them after the first try.
 */
async function activate(pid, log) {
  checkNode(pid);
  const before = listening(pid);
  const flagged = inspectFlag(pid);
  if (flagged !== null) {
    const open = await inspectorAmong(before.filter((p) => flagged === 0 || p.port === flagged));
    if (open) return { ...open, opened: false };
  }
  // Where the port SIGUSR1 would open is another process's (a second attach at once, another app's
  // inspector), the target prints the failure on its stderr: not signalled.
  const port = signalPort(pid);
  if (port !== 0 && !before.some((p) => p.port === port) && listeners().some((p) => p.port === port)) {
    throw new AttachError(`PID ${pid} opens its inspector on port ${port}, which another process holds (another attach now? an app run with --inspect?): not signalled, as the target would print the failure on its stderr; try again once it is free, or give the app --inspect-port=0`);
  }
  const isNew = (p) => !before.some((b) => b.inode === p.inode);
  for (let i = 0; i < BACKOFF_MS.length; i++) {
    // Again at each try: one sent while an inspector was still open (closing) opened nothing.
    process.kill(pid, 'SIGUSR1');
    // The first try looks every 50 ms: an idle process opens its inspector within a few ms.
    let found = null;
    for (let waited = 0; waited < BACKOFF_MS[i] && found === null; waited += i === 0 ? 50 : BACKOFF_MS[i]) {
      await sleep(i === 0 ? 50 : BACKOFF_MS[i]);
      try {
        process.kill(pid, 0);
      } catch {
        throw new AttachError(`PID ${pid} exited`);
      }
      found = await inspectorAmong(listening(pid).filter(isNew));
    }
    if (found) return { ...found, opened: true };
    if (i === 0) {
      const open = await inspectorAmong(before); // SIGUSR1 opens nothing where one is open already
      if (open) return { ...open, opened: false };
    }
    if (i < BACKOFF_MS.length - 1) log(`inspector of PID ${pid} not open yet, retrying in ${BACKOFF_MS[i + 1] / 1000} s`);
  }
  throw new AttachError(`PID ${pid} did not open its inspector after SIGUSR1 (its port taken by another process? try: rloop attach --port N with node --inspect-port=N)`);
}

/** The inspector at host:port, tried once: { host, port, wsUrl, opened: false }. */
async function atPort(host, port) {
  const [t] = await targetsAt(host, port);
  if (!t) throw new AttachError(`the inspector at ${host}:${port} lists no target`);
  return { host, port, wsUrl: t.webSocketDebuggerUrl, opened: false };
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

module.exports = { AttachError, activate, atPort, checkNode, listening, LOOPBACK };

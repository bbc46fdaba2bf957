'use strict';
// A Chrome DevTools Protocol session over the inspector's WebSocket, and sessions of the
// process's worker threads tunnelled through it (the NodeWorker domain).

const { EventEmitter } = require('node:events');
const { AttachError } = require('./inspector');
const { WebSocket } = require('./ws');

// How long a command may go unanswered, the capture's excepted. A target closing its inspector
// waits in close() for every client to leave, its loop stopped: a command that came just then
// would wait forever, and the target with it, had this end no limit.
const ANSWER_WITHIN_MS = 10_000;

class Session extends EventEmitter {
  #send; // (text) => void
  #next = 1;
  #pending = new Map(); // id -> { resolve, reject, method, timer }
  closed = false;

  constructor(send) {
    super();
    this.#send = send;
  }

  /**
   * Resolves to the command's result; rejects with the protocol's error, when the target goes,
   * or with TargetSilent after `withinMs` without an answer.
   */
  send(method, params = {}, withinMs = ANSWER_WITHIN_MS) {
    if (this.closed) return Promise.reject(new TargetGone());
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      const timer = withinMs === Infinity ? null : setTimeout(() => this.#settle(id, new TargetSilent(method, withinMs)), withinMs);
      this.#pending.set(id, { resolve, reject, method, timer });
      this.#send(JSON.stringify({ id, method, params }));
    });
  }

  /**
   * Evaluates `expression` in the target; resolves to its value (JSON-able). `awaitPromise` only
   * for a value that is a promise the target holds (agent.callFromLoop's): V8's inspector holds
   * what it awaits weakly, and on Node 22 a GC in a busy target collected a synchronous install's
   * value wrapped for awaiting ("Promise was collected"). `withinMs`: as send()'s.
   */
  async evaluate(expression, { awaitPromise = false, withinMs = ANSWER_WITHIN_MS } = {}) {
    const r = await this.send('Runtime.evaluate', { expression, awaitPromise, returnByValue: true, includeCommandLineAPI: true }, withinMs);
    if (r.exceptionDetails) {
      const d = r.exceptionDetails;
      throw new Error(d.exception?.description?.split('\n')[0] ?? d.text);
    }
    return r.result.value;
  }

  receive(text) {
    let m;
    try {
      m = JSON.parse(text);
    } catch {
      return;
    }
    if (m.id === undefined) {
      this.emit('event', m);
      this.emit(m.method, m.params);
      return;
    }
    const p = this.#pending.get(m.id);
    if (p !== undefined) this.#settle(m.id, m.error ? new Error(`${p.method}: ${m.error.message}`) : null, m.result);
  }

  /** Ends the command `id`: rejected with `error`, else resolved to `result`. */
  #settle(id, error, result) {
    const p = this.#pending.get(id);
    this.#pending.delete(id);
    clearTimeout(p.timer);
    if (error) p.reject(error);
    else p.resolve(result);
  }

  gone() {
    if (this.closed) return;
    this.closed = true;
    for (const id of [...this.#pending.keys()]) this.#settle(id, new TargetGone());
    this.emit('gone');
  }
}

/** A command the target did not answer in time (its main thread blocked, in JS or native code, or closing its inspector). */
class TargetSilent extends AttachError {
  constructor(method, ms) {
    super(`the target did not answer ${method} within ${ms / 1000} s: its main thread is blocked (in JS or native code, or closing its inspector); try again`);
  }
}

/** The target went away (exited, or closed its inspector) while a command was pending. */
class TargetGone extends Error {
  constructor() {
    super('the target closed the connection');
  }
}

/** A session of the main thread at `wsUrl`; `.close()` ends it. */
async function connect(wsUrl) {
  const ws = await WebSocket.connect(wsUrl);
  const s = new Session((text) => ws.send(text));
  ws.on('message', (text) => s.receive(text));
  ws.on('close', () => s.gone());
  s.close = () => ws.close();
  s.ws = ws;
  return s;
}

/**
 * The worker threads of the process behind `main`, as NodeWorker reports them: `[{ workerId,
 * title, url, sessionId }]`, each with `.session()` tunnelling a Session to it.
 */
async function workers(main, waitMs = 300) {
  const found = [];
  const attached = (p) => found.push(p);
  main.on('NodeWorker.attachedToWorker', attached);
  await main.send('NodeWorker.enable', { waitForDebuggerOnStart: false });
  // Already running workers are reported right after enable; give their events a moment.
  await new Promise((r) => setTimeout(r, waitMs));
  main.off('NodeWorker.attachedToWorker', attached);
  return found.map(({ sessionId, workerInfo }) => ({
    sessionId,
    workerId: workerInfo.workerId,
    title: workerInfo.title,
    url: workerInfo.url,
    session: () => workerSession(main, sessionId),
  }));
}

function workerSession(main, sessionId) {
  const s = new Session((message) => { main.send('NodeWorker.sendMessageToWorker', { sessionId, message }).catch(() => {}); });
  const onMessage = (p) => { if (p.sessionId === sessionId) s.receive(p.message); };
  const onDetached = (p) => { if (p.sessionId === sessionId) s.gone(); };
  main.on('NodeWorker.receivedMessageFromWorker', onMessage);
  main.on('NodeWorker.detachedFromWorker', onDetached);
  main.on('gone', () => s.gone());
  s.close = () => {
    main.off('NodeWorker.receivedMessageFromWorker', onMessage);
    main.off('NodeWorker.detachedFromWorker', onDetached);
    return main.send('NodeWorker.detach', { sessionId }).catch(() => {});
  };
  return s;
}

module.exports = { connect, workers, TargetGone, TargetSilent };

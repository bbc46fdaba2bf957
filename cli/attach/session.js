'use strict';
// A Chrome DevTools Protocol session over the inspector's WebSocket, and sessions of the
// process's worker threads tunnelled through it (the NodeWorker domain).

const { EventEmitter } = require('node:events');
const { WebSocket } = require('./ws');

class Session extends EventEmitter {
  #send; // (text) => void
  #next = 1;
  #pending = new Map(); // id -> { resolve, reject, method }
  closed = false;

  constructor(send) {
    super();
    this.#send = send;
  }

  /** Resolves to the command's result; rejects with the protocol's error, or when the target goes. */
  send(method, params = {}) {
    if (this.closed) return Promise.reject(new TargetGone());
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, method });
      this.#send(JSON.stringify({ id, method, params }));
    });
  }

  /**
   * Evaluates `expression` in the target; resolves to its value (JSON-able). `awaitPromise`: its
   * value is a promise, awaited; the target must hold it strongly until it settles, since V8's
   * inspector holds it weakly and a GC meanwhile fails the command ("Promise was collected"), as
   * on Node 22 it did for a synchronous install wrapped in Promise.resolve, in a busy target.
   */
  async evaluate(expression, { awaitPromise = false } = {}) {
    const r = await this.send('Runtime.evaluate', { expression, awaitPromise, returnByValue: true, includeCommandLineAPI: true });
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
    if (p === undefined) return;
    this.#pending.delete(m.id);
    if (m.error) p.reject(new Error(`${p.method}: ${m.error.message}`));
    else p.resolve(m.result);
  }

  gone() {
    if (this.closed) return;
    this.closed = true;
    for (const p of this.#pending.values()) p.reject(new TargetGone());
    this.#pending.clear();
    this.emit('gone');
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

module.exports = { connect, workers, TargetGone };

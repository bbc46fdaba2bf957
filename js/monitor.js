'use strict';
// One thread's monitor: owns the ledger and its scopes (js/attribution/scopes.js), starts what
// the options ask for (I/O tracking, automatic scopes, the metrics endpoint, captures), and
// emits each closed window. Reads come from the addon, which keeps the windows.

const { EventEmitter } = require('node:events');
const { threadId } = require('node:worker_threads');
const native = require('./native');
const hooks = require('./attribution/hooks');
const { Scopes } = require('./attribution/scopes');
const { now, ORIGIN, offsetFrom, setTimeout, clearTimeout } = require('./clock');
const io = require('./io');
const { Capture } = require('./capture/capture');
const { captureOptions, watchOptions } = require('./capture/options');
const heap = require('./capture/heap');
const { interruptStalls, startSampler } = require('./stalls/sampler');
const { redactStall } = require('./redact');
const { liveOriginals } = require('./capture/source-maps');
const { attempt } = require('./attempt');
const endpoint = require('./metrics/endpoint');
const { useGc } = require('./metrics/gc');
const auto = require('./auto');

/** `fn()` charged to no scope: what it starts (timers) is rloop's own work. */
function unattributed(fn) {
  const prev = hooks.enter(hooks.UNATTRIBUTED);
  try {
    return fn();
  } finally {
    hooks.restore(prev);
  }
}

/** A live event with its stacks at their original locations where small source maps say; as it was if that failed. */
const located = (event) => attempt(liveOriginals, event) ?? event;

class Monitor extends EventEmitter {
  #native;
  #options;
  #scopes; // the contexts charged, by name and key (js/attribution/scopes.js)
  #running = true;
  #timer; // the timer that emits 'window', only while someone listens
  #lastSeq = 0;
  #onStop;
  #io; // the I/O tracker, unless io: false
  #captures = new Set();
  #lagOn = false; // the addon has a lag callback
  #metrics = null; // the metrics endpoint, if asked for
  #auto; // automatic scopes (js/auto/)
  #releaseGc = () => {}; // ends this monitor's use of the garbage collections' observer (js/metrics/gc.js)

  constructor(options, onStop) {
    super();
    this.#options = options;
    this.#onStop = onStop;
    // First: a port that cannot be listened on fails start() before anything is installed.
    if (options.metrics) this.#metrics = endpoint.serve(options.metrics, () => this.#recordTimeline());
    const cells = native.ledgerCells(options.maxScopes, options.keySlots);
    const ledger = hooks.newLedger(cells);
    this.#native = new native.NativeMonitor(ledger.buffer, {
      ...options,
      threadId,
      clockOffsetMs: -offsetFrom(native.monotonicMs), // performance.now() - monotonicMs()
      timeOrigin: ORIGIN,
      lagThresholdMs: options.lag ? options.lagThresholdMs : undefined,
    });
    this.on('newListener', (event) => this.#listening(event, true));
    this.on('removeListener', (event) => this.#listening(event, false));
    this.#scopes = new Scopes(this.#native, options);
    if (options.io) {
      this.#io = io.track({ thresholdMs: options.ioThresholdMs, onSlow: (e) => this.#slowIO(e), context: hooks.current, incoming: (request) => this.#auto.incoming(request) });
    }
    // The worker sampler is asked for after a stall only where the interrupt could not be armed.
    if (options.lag) interruptStalls();
    hooks.install(ledger, this.#scopes.slots, options.lag ? () => startSampler((e) => this.#fail(e)) : null);
    this.#auto = auto.start(this, options.autoScopes);
    if (options.metrics) this.#releaseGc = unattributed(() => useGc((e) => this.#fail(e)));
  }

  /** What the automatic scopes named so far, and what they could not (docs/api.md: Automatic scopes). */
  autoScopes() {
    return this.#auto.stats();
  }

  /** `{ host, port, path }` of the metrics endpoint, or null. */
  get metrics() {
    const m = this.#metrics;
    return m && !this.stopped ? { host: m.host, port: m.port, path: m.path } : null;
  }

  get windowMs() {
    return this.#options.windowMs;
  }

  /** The live window: the one open now, read so far (a callback still running is included), with `last`. */
  liveWindow() {
    return this.#native.liveWindow();
  }

  /** The 0.x name of liveWindow(), kept as an alias: `elu` names a ratio, which this is not. */
  elu() {
    return this.liveWindow();
  }

  /** The last `history` complete windows, oldest first. */
  history() {
    return this.#native.history(0);
  }

  /** Busy time per scope since start. */
  totals() {
    return this.#native.totals();
  }

  /**
   * Runs one capture (see docs/captures.md) and resolves to its report, written where asked.
   * `durationMs: Infinity` runs until stop() or the process ends.
   */
  capture(options) {
    try {
      return this.#capture(captureOptions(options));
    } catch (e) {
      return Promise.reject(e); // a function returning a promise rejects, never throws
    }
  }

  #capture(o) {
    if (this.stopped) throw new Error('rloop: monitor is stopped');
    // Starting (the profiler's start) and finishing (the profile's analysis, the report) are
    // rloop's own work: unattributed, whatever scope the code asking for the capture runs in (an
    // inspector's request runs inside whatever JS is running when it comes).
    const c = unattributed(() => new Capture(this, this.#inner(), o));
    this.#captures.add(c);
    this.#auto.captures(1);
    const timer = o.durationMs === Infinity ? undefined : unattributed(() => setTimeout(() => c.finish(), o.durationMs).unref());
    return c.result.finally(() => {
      clearTimeout(timer);
      this.#captures.delete(c);
      this.#auto.captures(-1);
    });
  }

  /** Runs a capture every `everyMs` (each `durationMs` long) until the returned handle's stop(). */
  watch(options) {
    const { everyMs, capture: o } = watchOptions(options);
    let timer;
    let watching = true;
    const next = () => {
      if (!watching || this.stopped) return;
      const started = now(); // monotonic: a step of the wall clock moves no capture
      this.#capture(o)
        .catch((e) => this.#fail(e))
        .finally(() => {
          if (watching) timer = setTimeout(next, Math.max(0, everyMs - (now() - started))).unref();
        });
    };
    next();
    return {
      stop() {
        watching = false;
        clearTimeout(timer);
      },
    };
  }

  /** Streams a heap snapshot of this thread to `path`; resolves to the path. */
  captureHeapSnapshot(path, options) {
    return heap.captureHeapSnapshot(path, options);
  }

  #inner() {
    const n = this.#native;
    return {
      options: this.#options,
      totals: () => n.totals(),
      recordTimeline: (o) => this.#recordTimeline(o),
      collectIo: () => (this.#io ? this.#io.collect() : null),
      pendingIo: () => (this.#io ? this.#io.pendingNow() : []),
      fail: (e) => this.#fail(e),
      record: (draft) => n.record(draft),
      recordIo: (id, event) => n.recordIo(id, event),
      takeRecording: (id) => n.takeRecording(id),
      heapAfterGc: () => n.heapAfterGc(),
    };
  }

  /**
   * Starts the scope timeline of a CPU profile; returns a function that ends it and gives
   * `{ transitions: [[performance.now() ms, scope name, null (unattributed) or false (outside
   * callbacks), key?]], dropped, keysDropped, routes }`, `routes` the names of the HTTP route
   * scopes among them. The key of a keyed context only with `keys` (a capture's): the metrics
   * endpoint exposes no keys.
   */
  #recordTimeline({ keys = false } = {}) {
    const take = hooks.recordTimeline();
    return () => {
      const { transitions, dropped, keysDropped } = take();
      const nameOf = (slot) => this.#scopes.nameOf(slot);
      const routes = this.#scopes.routes();
      const entry = keys ? ([t, slot, key]) => (key === undefined ? [t, nameOf(slot)] : [t, nameOf(slot), key]) : ([t, slot]) => [t, nameOf(slot)];
      return { transitions: transitions.map(entry), dropped, keysDropped: keys ? keysDropped : 0, routes };
    };
  }

  #slowIO(event) {
    if (event.state === undefined) { // ended: its time is known (a pending one comes again when it ends)
      try {
        native.recordSlowIo(threadId, event.type, event.durationMs, event.error !== undefined || event.status >= 500);
      } catch (e) {
        this.#fail(e);
      }
    }
    for (const c of this.#captures) c.slowIO(event);
    // Listeners get the caller at its original location (a capture maps its own as it ends).
    if (this.listenerCount('slowIO') > 0) this.emit('slowIO', located(event));
  }

  /** An internal failure: an 'error' event if someone listens, never an exception in the app. */
  #fail(error) {
    if (this.listenerCount('error') > 0) this.emit('error', error);
  }

  /** Removes every hook and handle; idempotent. Running captures end and write, partial. */
  stop() {
    if (!this.#running) return;
    this.#running = false;
    for (const c of this.#captures) c.finishSync('stopped');
    this.#io?.stop();
    this.#auto.stop();
    this.#releaseGc();
    hooks.uninstall();
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#native.stop();
    this.#metrics?.close();
    this.#onStop(this);
  }

  get stopped() {
    return !this.#running;
  }

  /**
   * What delivers 'lag' and 'window' exists only while someone listens: the thread-safe
   * function for lag events, the interval that emits windows. `adding`: from 'newListener'
   * (before the listener is added), else from 'removeListener' (after it is gone).
   */
  #listening(event, adding) {
    if (event !== 'lag' && event !== 'window') return;
    const wanted = !this.stopped && this.listenerCount(event) + (adding ? 1 : 0) > 0;
    try {
      if (event === 'lag' && this.#options.lag && wanted !== this.#lagOn) {
        this.#native.onLag(wanted ? (e) => this.emit('lag', redactStall(located(e))) : null);
        this.#lagOn = wanted;
      } else if (event === 'window' && wanted !== (this.#timer !== undefined)) {
        if (wanted) this.#startWindows();
        else this.#timer = clearTimeout(this.#timer);
      }
    } catch (e) {
      this.#fail(e);
    }
  }

  #startWindows() {
    this.#lastSeq = this.#native.lastSeq(); // windows from now on, as a listener always got
    // Unattributed, whatever scope the code adding the listener runs in; the timers it sets
    // again inherit that.
    unattributed(() => this.#nextWindow());
  }

  /** Fires just after the addon closes the current window, so each emits as it closes. */
  #nextWindow() {
    const wait = Math.max(0, this.#native.nextDue() - now()) + 1;
    const timer = setTimeout(() => {
      this.#emitWindows();
      if (this.#timer === timer && !this.stopped) { // not stopped or replaced meanwhile
        try {
          this.#nextWindow();
        } catch (e) {
          this.#timer = undefined;
          this.#fail(e);
        }
      }
    }, wait);
    timer.unref();
    this.#timer = timer;
  }

  /** The context charged for `name` (and `key`): js/attribution/scopes.js `context`. */
  context(name, key, automatic = false) {
    return this.#scopes.context(name, key, automatic);
  }

  /** Moves key context `ctx` to the scope `name`: js/attribution/scopes.js `rescope`. */
  rescope(ctx, name) {
    return this.#scopes.rescope(ctx, name);
  }

  /** rloop's own timer work: a failure goes to #fail, never into the app. */
  #emitWindows() {
    let windows;
    try {
      windows = this.#native.history(this.#lastSeq);
    } catch (e) {
      this.#fail(e);
      return;
    }
    for (const w of windows) {
      this.#lastSeq = w.seq;
      this.emit('window', w); // a listener's own exception is the app's, as with any emitter
    }
  }
}

module.exports = { Monitor };

'use strict';
// One thread's monitor: owns the ledger, registers scopes and keys with the addon, and
// emits each closed window. Reads come from the addon, which keeps the windows.

const { EventEmitter } = require('node:events');
const { threadId } = require('node:worker_threads');
const native = require('./native');
const hooks = require('./attribution/hooks');
const { OTHER, FIRST_SCOPE } = require('./attribution/ledger');
const { now, ORIGIN, offsetFrom, setTimeout, clearTimeout } = require('./clock');
const io = require('./io');
const { Capture } = require('./capture/capture');
const { captureOptions, watchOptions } = require('./capture/options');
const heap = require('./capture/heap');
const { interruptStalls, startSampler } = require('./stalls/sampler');
const { redactStall } = require('./redact');
const { OUTSIDE_CALLBACKS, FULL } = require('./attribution/timeline');
const endpoint = require('./metrics/endpoint');
const { useGc } = require('./metrics/gc');
const auto = require('./auto');

// Slots: unattributed, OTHER ('(other)'), then scopes from FIRST_SCOPE, then keys.
const OTHER_NAME = '(other)';
const NOT_RECORDED = '(not recorded)'; // a profile's samples after its timeline filled up

/** `fn()` charged to no scope: what it starts (timers) is rloop's own work. */
function unattributed(fn) {
  const prev = hooks.enter(hooks.UNATTRIBUTED);
  try {
    return fn();
  } finally {
    hooks.restore(prev);
  }
}

class Monitor extends EventEmitter {
  #native;
  #addScope; // addScope(name) -> slot, a raw native function
  #bindNative; // bindKey(slot, scope, key), a raw native function
  #rescopeNative; // rescopeKey(slot, scope), a raw native function
  #options;
  #scopes = new Map(); // name -> context of the scope without a key, at most maxScopes
  #bySlot = []; // slot -> the same contexts
  #other = new Map(); // automatic -> the one context of every name past maxScopes: '(other)'
  #full = false; // the addon holds maxScopes names: it looks every name up from then on
  #keyBase;
  #keyScopes; // key slot - keyBase -> the scope of the key bound to it
  #nextKey = 0;
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
    this.#addScope = this.#native.scopeAdder();
    this.#bindNative = this.#native.keyBinder();
    this.#rescopeNative = this.#native.keyRescoper();
    if (options.io) {
      this.#io = io.track({ thresholdMs: options.ioThresholdMs, onSlow: (e) => this.#slowIO(e), context: hooks.current, incoming: (request) => this.#auto.incoming(request) });
    }
    this.#keyBase = FIRST_SCOPE + options.maxScopes;
    this.#keyScopes = []; // grows as the ring first reaches a slot: unused slots cost nothing
    // The worker sampler is asked for after a stall only where the interrupt could not be armed.
    if (options.lag) interruptStalls();
    hooks.install(ledger, this.#keyBase + options.keySlots, options.lag ? () => startSampler((e) => this.#fail(e)) : null);
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
      const nameOf = (slot) => {
        if (slot === OUTSIDE_CALLBACKS) return false;
        if (slot === FULL) return NOT_RECORDED;
        if (slot === OTHER) return OTHER_NAME;
        return this.#bySlot[slot]?.name ?? this.#keyScopes[slot - this.#keyBase]?.name ?? null;
      };
      const routes = new Set();
      for (const scope of this.#scopes.values()) if (scope.automatic === 'route') routes.add(scope.name);
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
    this.emit('slowIO', event);
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
        this.#native.onLag(wanted ? (e) => this.emit('lag', redactStall(e)) : null);
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

  /**
   * The context charged for `name` (and `key`), registering what is new; `automatic`: false, or
   * the kind of scope an automatic-scope adapter gives ('route', 'timer'). Once the registry is
   * full the addon looks every name up: a Map lookup makes V8 keep an internalized copy of a
   * fresh string, and an app naming a scope per call would have a million kept (bench/memory.md
   * measures it) where the names past the cap are meant to cost nothing.
   */
  context(name, key, automatic = false) {
    const scope = this.#full ? this.#bySlot[this.#addScope(name)] ?? this.#overflow(automatic) : this.#scopes.get(name) ?? this.#register(name, automatic);
    return key === undefined ? scope : this.#bindKey(scope, key);
  }

  #register(name, automatic) {
    const slot = this.#addScope(name);
    if (slot === OTHER) {
      this.#full = true; // names are never unregistered
      return this.#overflow(automatic);
    }
    const scope = hooks.context(slot, null, name, undefined);
    scope.automatic = automatic;
    this.#scopes.set(name, scope);
    this.#bySlot[slot] = scope;
    return scope;
  }

  /**
   * The context of a name past maxScopes, '(other)' as the windows say: one for all of them,
   * counted by the addon. Nothing is kept or allocated per name: an app naming a scope per
   * request would otherwise grow V8's young generation by 16 MB (a context per call, or a cache
   * of names seen; see bench/memory.md, fifth pass).
   */
  #overflow(automatic) {
    let other = this.#other.get(automatic);
    if (other === undefined) {
      other = hooks.context(OTHER, null, OTHER_NAME, undefined);
      other.automatic = automatic;
      this.#other.set(automatic, other);
    }
    return other;
  }

  /**
   * Moves key context `ctx` to the scope `name` (of its scope's kind), with what its key was
   * charged in the current window so far: a request whose route became known after it began.
   * Returns `ctx`, or a new context of the key once a newer key took its slot (its time so far
   * then stays with its scope).
   */
  rescope(ctx, name) {
    const scope = this.context(name, undefined, ctx.scope.automatic);
    if (!hooks.owns(ctx)) return this.#bindKey(scope, ctx.key);
    this.#rescopeNative(ctx.slot, scope.slot);
    hooks.moveKey(ctx, scope);
    this.#keyScopes[ctx.slot - this.#keyBase] = scope;
    return ctx;
  }

  #bindKey(scope, key) {
    const n = this.#options.keySlots;
    let j = this.#nextKey++ % n;
    // Never rebind the slot being charged right now (a key entered inside its own callback).
    if (this.#keyBase + j === hooks.running()) j = this.#nextKey++ % n;
    const ctx = hooks.keyContext(this.#keyBase + j, scope, key); // late work of the slot's old key goes to its scope
    this.#keyScopes[j] = scope;
    this.#bindNative(ctx.slot, scope.slot, key);
    return ctx;
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

'use strict';
// Slow async I/O: outgoing http/https requests, fetch, dns lookups and TCP connects, and
// incoming HTTP requests. Timed from Node's diagnostics channels; dns has no channel, so
// dns.lookup and dns.promises.lookup are wrapped, and put back on stop().
//
// Per operation the hot path stores one record (start time, context, and for outgoing
// operations a stack captured but not formatted) on the object the channels pass around, and
// at the end updates two running totals in O(1). The stack is formatted only for a slow one.
// Nothing here may throw into the app: every entry point runs through attempt() (js/attempt.js).

const dc = require('node:diagnostics_channel');
const dns = require('node:dns');
const { syncBuiltinESMExports } = require('node:module');
const { isIP } = require('node:net');
const { now } = require('../clock');
const { describe } = require('../validate');
const { requestPath } = require('../redact');
const { httpTarget, fetchTarget, failedTarget, hostPort, errorName, captureStack, pendingEvent, clip, slowEvent } = require('./events');
const { Pending } = require('./pending');
const { Totals } = require('./totals');
const { wakeAt, stopWaking } = require('../attribution/wakers');
const { inStretch } = require('../attribution/charge');
const { round } = require('../round');
const { activeTrace } = require('../trace');
const { attempt, swallowed } = require('../attempt');

const DEFAULT_THRESHOLD_MS = 500;
const MAX_THRESHOLD_MS = 3600000;
const NO_CONTEXT = Object.freeze({ scope: null, key: null });
const stoppedWrappers = new WeakMap(); // a wrapper whose tracker stopped -> what it wraps

// Since Node 22.12 and 23.2, 'http.client.request.created' is published by the ClientRequest
// constructor, on the caller's stack. Before, only 'http.client.request.start' exists, published
// a tick later without the caller's frames, so request() and get() are wrapped to begin there:
// those of http and https once the app has loaded them (at start, or by its first request),
// never loaded by rloop (an app's set-up before it loads them is its own; https loads tls).
const HTTP_CREATED = hasCreatedChannel(process.versions.node.split('.').map(Number));

function hasCreatedChannel([major, minor]) {
  return major > 23 || (major === 23 && minor >= 2) || (major === 22 && minor >= 12);
}

/**
 * Starts timing I/O. `onSlow(event)` is called for each operation that took `thresholdMs` or
 * more; `context()` gives the `{ scope, key }` an operation is charged to, read when it starts;
 * `incoming(request)` the `{ scope, key, route }` of an incoming request as the automatic HTTP
 * scopes know it, read as it ends (its route may come after its start), or null.
 */
// Marks what rloop itself serves (the Node-RED plugin's admin routes, a capture's request among
// them): never the app's I/O, slow or not.
const OWN = Symbol.for('rloop.own');
const own = (rec) => rec.owner?.[OWN] === true;

function track(options) {
  const { thresholdMs, onSlow, context, incoming } = trackOptions(options);
  const REC = Symbol('rloop.io'); // per tracker, so that two trackers time the same objects apart
  const pending = new Pending();
  const totals = new Totals();
  const collectors = new Set(); // Totals of captures running now
  const swallowedBefore = swallowed();
  let stopped = false;

  // A subscriber gets itself as `top`: the stack is captured from below it, skipping rloop's frames.
  const guard = (fn) => function guarded(message) {
    attempt(fn, message, guarded);
  };

  /**
   * A record of an operation on `owner` (what DESCRIBE[type] names it from) starting now, with
   * the stack below `top` if given, and the app's OpenTelemetry span active here; null once stopped.
   */
  function begin(type, top, owner) {
    if (stopped) return null;
    const rec = { type, t0: now(), ctx: context(), trace: activeTrace(), owner };
    if (top !== undefined) captureStack(rec, top);
    if (pending.add(rec)) wakeAt(checkOverdue, rec.t0 + thresholdMs);
    return rec;
  }

  function beginOn(owner, type, top) {
    if (owner[REC] === undefined) owner[REC] = begin(type, top, owner);
  }

  /**
   * An incoming request's record with what the HTTP scopes know of it by now: its route, and its
   * scope and key unless the app's own scope charged it (then the record's, from its start, stay).
   */
  function known(rec, request) {
    const r = incoming(request);
    if (r === null) return rec;
    if (r.scope !== null) rec.ctx = r;
    rec.route = r.route;
    return rec;
  }

  const inFlight = (rec, ms) => pendingEvent(rec.type === 'http-in' ? known(rec, rec.owner.req) : rec, ms);
  const tellOverdue = (rec, ms) => (own(rec) ? pending.delete(rec) : onSlow(inFlight(rec, ms)));
  // Run by js/attribution/wakers.js, through attempt().
  function checkOverdue(now) {
    return pending.overdue(now, thresholdMs, tellOverdue);
  }

  /** The record of `owner`'s running operation, which ends now; undefined or null if none. */
  function take(owner) {
    const rec = owner[REC];
    if (rec) owner[REC] = null;
    return rec;
  }

  function end(rec, method, where, status, error) {
    if (stopped) return;
    const told = pending.delete(rec);
    if (own(rec)) return;
    const at = now();
    const ms = at - rec.t0;
    const clipped = clip(where);
    const failed = error !== undefined || status >= 500;
    // An incoming request is summed by its route where known: one row per route, not per path.
    const route = rec.route !== undefined;
    const summed = route ? rec.route : clipped;
    totals.add(rec.type, summed, ms, failed, route);
    for (const c of collectors) c.add(rec.type, summed, ms, failed, route);
    if (ms < thresholdMs) return;
    const event = slowEvent(rec, method, clipped, status, error, ms);
    // Where the loop read an outgoing operation's end: the report tells from it whether a stall
    // ended just as the loop woke to read it, the one stall that may have held it.
    if (rec.type !== 'http-in') event.stretchMs = round(inStretch(at), 3);
    if (told) event.reportedPending = true;
    onSlow(event);
  }

  function onHttpCreated({ request }, top) {
    beginOn(request, request.protocol === 'https:' ? 'https' : 'http', top);
  }

  function onHttpResponse({ request, response }) {
    const rec = take(request);
    if (rec) end(rec, request.method, httpTarget(request), response.statusCode);
  }

  function onHttpError({ request, error }) {
    const rec = take(request);
    if (rec) end(rec, request.method, httpTarget(request), undefined, errorName(error));
  }

  function onFetchCreated({ request }, top) {
    beginOn(request, 'fetch', top);
  }

  function onFetchHeaders({ request, response }) {
    const rec = take(request);
    if (rec) end(rec, request.method, fetchTarget(request), response.statusCode);
  }

  function onFetchError({ request, error }) {
    const rec = take(request);
    if (rec) end(rec, request.method, fetchTarget(request), undefined, errorName(error));
  }

  // No channel says when a socket connects: 'connect' does, or 'close' before it. Listening for
  // 'error' would keep an app without a listener alive; 'close' comes a loop phase later. The
  // first to come removes the other: the app counts a connected socket's listeners (Node's own
  // test-http-connect does), and sees them as without rloop.
  function onSocket({ socket }, top) {
    if (socket[REC]) return;
    socket[REC] = begin('tcp', top, socket);
    const settled = () => {
      socket.removeListener('connect', settled);
      socket.removeListener('close', settled);
      attempt(settleSocket, socket);
    };
    socket.once('connect', settled);
    socket.once('close', settled);
  }

  function settleSocket(socket) {
    const rec = take(socket);
    if (!rec) return;
    if (socket.destroyed) {
      const err = socket.errored;
      end(rec, 'connect', failedTarget(err), undefined, errorName(err) ?? 'closed before connect');
    } else if (socket.remoteAddress !== undefined) { // a pipe has none: not TCP
      end(rec, 'connect', hostPort(socket.remoteAddress, socket.remotePort));
    }
  }

  function onServerRequest({ response }) {
    beginOn(response, 'http-in');
  }

  function onServerResponse({ request, response }) {
    const rec = take(response);
    if (rec) end(known(rec, request), request.method, requestPath(request.url), response.statusCode);
  }

  function endLookup(rec, hostname, err) {
    end(rec, 'lookup', String(hostname), undefined, errorName(err));
  }

  function trackLookup(original) {
    return function lookup(hostname) {
      const last = arguments.length - 1;
      const callback = arguments[last];
      const rec = typeof callback === 'function' ? attempt(begin, 'dns', lookup, hostname) : null;
      if (!rec) return Reflect.apply(original, this, arguments);
      const args = Array.prototype.slice.call(arguments);
      args[last] = function onLookup(err) {
        attempt(endLookup, rec, hostname, err);
        return Reflect.apply(callback, this, arguments);
      };
      return Reflect.apply(original, this, args);
    };
  }

  /**
   * dns.promises.lookup, timed without a `.then` on its promise (a promise the app's own hooks
   * would see): the callback lookup does the work, under the one promise the original makes.
   * Names that settle at once (empty, an IP address) and calls once stopped go to the original.
   */
  function trackPromiseLookup(original, callbackLookup) {
    return function lookup(hostname, options) {
      const rec = typeof hostname === 'string' && hostname !== '' && isIP(hostname) === 0 ? attempt(begin, 'dns', lookup, hostname) : null;
      if (!rec) return Reflect.apply(original, this, arguments);
      const all = typeof options === 'object' && options !== null && options.all === true;
      let outcome = null; // [err, result], should a patched dns.lookup call back at once
      let settle = (err, result) => { outcome = [err, result]; };
      try {
        // Throws as the original does, before any promise, for options it refuses.
        Reflect.apply(callbackLookup, dns, [hostname, options, function onLookup(err, address, family) {
          attempt(endLookup, rec, hostname, err ?? undefined);
          settle(err, all ? address : { address, family });
        }]);
      } catch (e) {
        pending.delete(rec);
        throw e;
      }
      return new Promise((resolve, reject) => {
        settle = (err, result) => (err ? reject(err) : resolve(result));
        if (outcome !== null) settle(...outcome);
      });
    };
  }

  function trackRequest(original) {
    return function request() {
      const req = Reflect.apply(original, this, arguments);
      attempt(onHttpCreated, { request: req }, request);
      return req;
    };
  }

  const unwrapped = new Set(HTTP_CREATED ? [] : ['http', 'https']);
  function wrap(name) {
    unwrapped.delete(name);
    const mod = require(`node:${name}`); // loaded already: by the app, or by this request
    restores.push(patch(mod, 'request', trackRequest), patch(mod, 'get', trackRequest));
    syncBuiltinESMExports();
  }
  function onHttpStart(message, top) {
    onHttpCreated(message, top);
    const name = message.request.protocol === 'https:' ? 'https' : 'http';
    if (unwrapped.has(name)) wrap(name);
  }

  const subscriptions = [
    HTTP_CREATED ? ['http.client.request.created', onHttpCreated] : ['http.client.request.start', onHttpStart],
    ['http.client.response.finish', onHttpResponse],
    ['http.client.request.error', onHttpError],
    ['undici:request:create', onFetchCreated],
    ['undici:request:headers', onFetchHeaders],
    ['undici:request:error', onFetchError],
    ['net.client.socket', onSocket],
    ['http.server.request.start', onServerRequest],
    ['http.server.response.finish', onServerResponse],
  ].map(([name, fn]) => [name, guard(fn)]);
  for (const [name, fn] of subscriptions) dc.subscribe(name, fn);

  const callbackLookup = dns.lookup; // what the promise lookup runs on, untracked
  const restores = [patch(dns, 'lookup', trackLookup), patch(dns.promises, 'lookup', (original) => trackPromiseLookup(original, callbackLookup))];
  for (const name of unwrapped) if (process.moduleLoadList.includes(`NativeModule ${name}`)) wrap(name);
  syncBuiltinESMExports(); // `import { lookup } from 'node:dns'` sees the wrapper too

  function stop() {
    if (stopped) return;
    stopped = true;
    stopWaking(checkOverdue);
    for (const [name, fn] of subscriptions) dc.unsubscribe(name, fn);
    for (const restore of restores) restore();
    syncBuiltinESMExports();
  }

  return {
    /** Totals per type, then per target, the costliest first. */
    aggregates: () => totals.list(),
    /** Totals of the operations that end from now until the collector's stop(): a capture's. */
    collect() {
      const mine = new Totals();
      collectors.add(mine);
      return { aggregates: () => mine.list(), stop: () => collectors.delete(mine) };
    },
    /** Slow-I/O events (state 'pending') of the operations in flight for the threshold or more now. */
    pendingNow: () => pending.older(now(), thresholdMs).filter(([rec]) => !own(rec)).map(([rec, ms]) => inFlight(rec, ms)),
    /** Operations in flight that were not tracked for being overdue (too many at once). */
    get untracked() {
      return pending.untracked;
    },
    stop,
    /** Exceptions of rloop's own swallowed on this thread since this tracker started (js/attempt.js): its own, and any other part's. */
    get errors() {
      return swallowed() - swallowedBefore;
    },
  };
}

function trackOptions(options = {}) {
  const { thresholdMs = DEFAULT_THRESHOLD_MS, onSlow = () => {}, context = () => NO_CONTEXT, incoming = () => null } = options;
  if (typeof thresholdMs !== 'number' || Number.isNaN(thresholdMs)) {
    throw new TypeError(`rloop: option 'ioThreshold' must be a number of ms, got ${describe(thresholdMs)}`);
  }
  if (!(thresholdMs >= 0 && thresholdMs <= MAX_THRESHOLD_MS)) {
    throw new RangeError(`rloop: option 'ioThreshold' must be 0 to ${MAX_THRESHOLD_MS} ms, got ${thresholdMs}`);
  }
  for (const [name, fn] of [['onSlow', onSlow], ['context', context], ['incoming', incoming]]) {
    if (typeof fn !== 'function') throw new TypeError(`rloop: io ${name} must be a function, got ${describe(fn)}`);
  }
  return { thresholdMs, onSlow, context, incoming };
}

/**
 * Replaces obj[key] by wrap(original), given the original's name, length and symbol-keyed
 * properties (util.promisify reads one on dns.lookup). Returns the undo. A wrapper laid over
 * ours by someone else is left alone (ours passes calls through, being stopped); one laid by
 * another tracker stopped earlier is removed with ours, so trackers may stop in any order.
 */
function patch(obj, key, wrap) {
  const original = obj[key];
  const wrapper = wrap(original);
  for (const prop of ['name', 'length', ...Object.getOwnPropertySymbols(original)]) {
    Object.defineProperty(wrapper, prop, Object.getOwnPropertyDescriptor(original, prop));
  }
  obj[key] = wrapper;
  return () => {
    stoppedWrappers.set(wrapper, original);
    if (obj[key] === wrapper) obj[key] = unwrapStopped(original);
  };
}

function unwrapStopped(fn) {
  while (stoppedWrappers.has(fn)) fn = stoppedWrappers.get(fn);
  return fn;
}

module.exports = { track };

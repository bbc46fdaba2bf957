'use strict';
// Automatic scopes, for code that has none (docs/api.md: Automatic scopes): adapters at the edge that
// charge through the monitor's contexts, as the app's own scope() does, and always lose to it.
// HTTP scopes are always on once asked for; timers are named only while a capture runs (a stack
// per timer costs microseconds), which in zero-code use is from the start.

const http = require('./http');
const timers = require('./timers');

/** Starts what `options` ({ http, timers }) asks for on `monitor`; returns `{ captures(delta), incoming(request), stop(), stats() }`. */
function start(monitor, options) {
  const web = options.http ? http.start(monitor) : null;
  const named = options.timers ? timers.start(monitor) : null;
  let running = 0; // captures running
  return {
    /** A capture starts (+1) or ends (-1). */
    captures(delta) {
      running += delta;
      named?.naming(running > 0);
    },
    /** What the HTTP scopes know of an incoming request (js/auto/http.js), or null. */
    incoming: (request) => web?.incoming(request) ?? null,
    stop() {
      web?.stop();
      named?.stop();
    },
    /** `{ http: { routes, overflowed } | null, timers: { sites, overflowed } | null }`. */
    stats: () => ({ http: web?.stats() ?? null, timers: named?.stats() ?? null }),
  };
}

module.exports = { start };

'use strict';
// Automatic scopes, for code that has none (README: Automatic scopes): adapters at the edge that
// charge through the monitor's contexts, as the app's own scope() does, and always lose to it.

const http = require('./http');
const timers = require('./timers');

/** Starts what `options` ({ http, timers }) asks for on `monitor`; returns `{ stop(), stats() }`. */
function start(monitor, options) {
  const on = {};
  if (options.http) on.http = http.start(monitor);
  if (options.timers) on.timers = timers.start(monitor);
  return {
    stop() {
      for (const part of Object.values(on)) part.stop();
    },
    /** `{ http: { routes, overflowed } | null, timers: { sites, overflowed } | null }`. */
    stats: () => ({ http: on.http?.stats() ?? null, timers: on.timers?.stats() ?? null }),
  };
}

module.exports = { start };

'use strict';
// The metrics endpoint: a Rust thread answers scrapes (src/metrics/server.rs); nothing of it
// runs on the event loop.

const native = require('../native');

/** Starts serving; `{ host, port, path, close() }`, `port` the one listened on. Throws if it cannot listen. */
function serve({ host, port, path, topScopes }) {
  const server = new native.MetricsServer(host, port, path, topScopes);
  return { host, port: server.port, path, close: () => server.close() };
}

module.exports = { serve };

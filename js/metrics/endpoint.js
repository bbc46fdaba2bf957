'use strict';
// The metrics endpoint: a Rust thread answers scrapes (src/metrics/server.rs); nothing of it
// runs on the event loop but the profiles pulled from it (js/metrics/pull.js).

const native = require('../native');
const { pullProfiles } = require('./pull');

/**
 * Starts serving; `{ host, port, path, close() }`, `port` the one listened on. Throws if it
 * cannot listen. `recordTimeline`: the monitor's, for the profiles pulled (with `pprof`).
 */
function serve({ host, port, path, topScopes, token, pprof }, recordTimeline) {
  let server = null;
  const answer = (id, status, contentType, body) => server?.answer(id, status, contentType, body);
  const onProfile = pprof ? pullProfiles(answer, recordTimeline) : null;
  server = new native.MetricsServer(host, port, path, topScopes, token, onProfile);
  return { host, port: server.port, path, close: () => server.close() };
}

module.exports = { serve };

'use strict';
// The metric families of every monitored thread, as the endpoint serves them (src/metrics/),
// read once per collection: a registry asks for each metric in turn within a few ms.

const native = require('../native');

const FRESH_MS = 20;
let cached = null;

/** `[{ name, otel, unit, help, type, samples: [{ suffix, labels, value }] }]`. */
function families(topScopes) {
  const now = performance.now();
  if (cached === null || cached.topScopes !== topScopes || now - cached.at > FRESH_MS) {
    cached = { topScopes, at: now, families: JSON.parse(native.metricFamilies(topScopes)) };
  }
  return cached.families;
}

module.exports = { families };

'use strict';
// Options of the metrics endpoint (start({ metrics })) and of the adapters: one table (see
// js/validate.js for what an entry says).

const { boolean, describe, fromTable } = require('../validate');

const METRICS = Object.freeze([
  { name: 'port', required: '0 for any free port', range: [0, 65535], variable: 'RLOOP_METRICS_PORT', meaning: 'TCP port; 0: a free one' },
  // Loopback: binding elsewhere is a choice (docs/metrics.md says what it exposes).
  { name: 'host', default: '127.0.0.1', check: (label, value) => text(label, value, 253), meaning: 'address to listen on' },
  { name: 'path', default: '/metrics', check: metricsPath, meaning: 'the one path answered' },
  { name: 'topScopes', default: 50, range: [1, 10000], meaning: "scopes named per thread and scrape, the busiest since start; the rest are '(other)'" },
  { name: 'token', default: null, check: token, variable: 'RLOOP_METRICS_TOKEN', meaning: 'where set, every request needs `Authorization: Bearer <token>`' },
  { name: 'pprof', default: true, check: boolean, meaning: 'serve profiles at /debug/pprof/profile and /debug/pprof/heap, under the same rules' },
]);
const TOKEN_LENGTH = [16, 256];

function text(name, value, max) {
  if (typeof value !== 'string') throw new TypeError(`rloop: option '${name}' must be a string, got ${describe(value)}`);
  if (value.length === 0 || value.length > max) throw new RangeError(`rloop: option '${name}' must be 1 to ${max} characters, got ${value.length}`);
  return value;
}

function metricsPath(name, value) {
  text(name, value, 256);
  if (!/^\/[\x21-\x7e]*$/.test(value) || value.includes('?')) {
    throw new RangeError(`rloop: option '${name}' must start with '/' and hold no spaces or '?', got ${describe(value)}`);
  }
  return value;
}

function token(name, value) {
  if (value === null) return null;
  text(name, value, TOKEN_LENGTH[1]);
  if (value.length < TOKEN_LENGTH[0] || !/^[\x21-\x7e]+$/.test(value)) {
    throw new RangeError(`rloop: option '${name}' must be ${TOKEN_LENGTH[0]} to ${TOKEN_LENGTH[1]} visible ASCII characters (no spaces)`);
  }
  return value;
}

/** start()'s `metrics` option, defaults filled in; `port` is required (0: any free port). */
function metricsOptions(given) {
  const o = fromTable(METRICS, given, { what: 'metrics', object: "option 'metrics'", prefix: 'metrics.' });
  // Not enumerable: a report's meta.options spreads the options, and a secret has no place there.
  Object.defineProperty(o, 'token', { enumerable: false });
  return o;
}

const ADAPTER = METRICS.filter((e) => e.name === 'topScopes');

/** The adapters' options: `{ topScopes }`. */
function adapterOptions(given) {
  return fromTable(ADAPTER, given, { what: 'adapter' });
}

module.exports = { METRICS, metricsOptions, adapterOptions };

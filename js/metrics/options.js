'use strict';
// Options of the metrics endpoint (start({ metrics })) and of the adapters.

const { integerIn, boolean, describe, plainObject, knownOnly, withDefaults } = require('../validate');

const METRICS_DEFAULTS = Object.freeze({
  host: '127.0.0.1', // loopback: binding elsewhere is a choice (docs/metrics.md says what it exposes)
  path: '/metrics',
  topScopes: 50, // scopes named per thread and scrape, the busiest since start; the rest are '(other)'
  token: null, // where set, every request needs `Authorization: Bearer <token>`
  pprof: true, // CPU profiles pulled at /debug/pprof/profile (js/metrics/pull.js), under the same rules
});
const TOKEN_LENGTH = [16, 256];
const TOP_SCOPES = [1, 10000];

function text(name, value, max) {
  if (typeof value !== 'string') throw new TypeError(`rloop: option '${name}' must be a string, got ${describe(value)}`);
  if (value.length === 0 || value.length > max) throw new RangeError(`rloop: option '${name}' must be 1 to ${max} characters, got ${value.length}`);
  return value;
}

/** start()'s `metrics` option, defaults filled in; `port` is required (0: any free port). */
function metricsOptions(given) {
  const o = withDefaults(METRICS_DEFAULTS, knownOnly('metrics', plainObject('option \'metrics\'', given), ['port', ...Object.keys(METRICS_DEFAULTS)]));
  if (o.port === undefined) throw new TypeError("rloop: option 'metrics.port' is required (0 for any free port)");
  integerIn('metrics.port', o.port, [0, 65535]);
  text('metrics.host', o.host, 253);
  text('metrics.path', o.path, 256);
  if (!/^\/[\x21-\x7e]*$/.test(o.path) || o.path.includes('?')) {
    throw new RangeError(`rloop: option 'metrics.path' must start with '/' and hold no spaces or '?', got ${describe(o.path)}`);
  }
  integerIn('metrics.topScopes', o.topScopes, TOP_SCOPES);
  if (o.token !== null) {
    text('metrics.token', o.token, TOKEN_LENGTH[1]);
    if (o.token.length < TOKEN_LENGTH[0] || !/^[\x21-\x7e]+$/.test(o.token)) {
      throw new RangeError(`rloop: option 'metrics.token' must be ${TOKEN_LENGTH[0]} to ${TOKEN_LENGTH[1]} visible ASCII characters (no spaces)`);
    }
  }
  boolean('metrics.pprof', o.pprof);
  // Not enumerable: a report's meta.options spreads the options, and a secret has no place there.
  Object.defineProperty(o, 'token', { enumerable: false });
  return o;
}

/** The adapters' options: `{ topScopes }`. */
function adapterOptions(given) {
  const o = withDefaults({ topScopes: METRICS_DEFAULTS.topScopes }, knownOnly('adapter', plainObject('adapter options', given), ['topScopes']));
  integerIn('topScopes', o.topScopes, TOP_SCOPES);
  return o;
}

module.exports = { metricsOptions, adapterOptions, METRICS_DEFAULTS };

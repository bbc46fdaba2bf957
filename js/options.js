'use strict';
// The options of start() and scope()/enter(): defaults, limits and their checks (the checks
// every option parser shares are js/validate.js).

const { integerIn, boolean, describe, plainObject, knownOnly } = require('./validate');

const START_DEFAULTS = Object.freeze({
  windowMs: 1000, // one rolling window
  history: 60, // complete windows kept
  maxScopes: 10000, // distinct scope names; more are charged to '(other)' and counted
  maxKeys: 10000, // distinct keys recorded per window; more are counted as dropped
  worstKeys: 5, // worst keys listed per scope and window
  keySlots: 65536, // keys charged at once; a key's slot is reused after this many newer keys
  lag: true, // watch for stalls and emit 'lag'
  lagThreshold: 50, // ms of busy loop without a poll that make a stall
  io: true, // track async I/O and emit 'slowIO'
  ioThreshold: 500, // ms an I/O operation takes to be slow
  metrics: null, // { port, host, path, topScopes }: serve a Prometheus endpoint (js/metrics/options.js); null: none
  autoScopes: false, // scopes for code that has none: incoming HTTP by route, timers by creation site (js/auto/)
});

const START_LIMITS = Object.freeze({
  windowMs: [10, 3600000],
  history: [1, 86400],
  maxScopes: [1, 1000000],
  maxKeys: [0, 1000000],
  worstKeys: [0, 1000],
  keySlots: [16, 1 << 20], // a key slot in use costs 100–350 bytes (bench/memory.md): 1 M of them ≤ 350 MB
  lagThreshold: [1, 3600000],
  ioThreshold: [0, 3600000],
});

const MAX_NAME = 256;

/** Options of start(), defaults filled in. */
function startOptions(options) {
  const given = knownOnly('start()', plainObject('start() options', options), Object.keys(START_DEFAULTS));
  const out = {};
  for (const [name, fallback] of Object.entries(START_DEFAULTS)) {
    const value = given[name];
    if (name === 'metrics') out[name] = value == null ? null : require('./metrics/options').metricsOptions(value);
    else if (value === undefined) out[name] = name === 'autoScopes' ? autoScopes(fallback) : fallback;
    else if (name === 'autoScopes') out[name] = autoScopes(value);
    else if (typeof fallback === 'boolean') out[name] = boolean(name, value);
    else out[name] = integerIn(name, value, START_LIMITS[name]);
  }
  return out;
}

const AUTO_SCOPES = ['http', 'timers'];

/** `autoScopes`: true or false for all, or `{ http, timers }` (each a boolean, false if left out). */
function autoScopes(value) {
  if (typeof value === 'boolean') return { http: value, timers: value };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`rloop: option 'autoScopes' must be true, false or { http, timers }, got ${describe(value)}`);
  }
  knownOnly("'autoScopes'", value, AUTO_SCOPES);
  const out = {};
  for (const kind of AUTO_SCOPES) out[kind] = value[kind] === undefined ? false : boolean(`autoScopes.${kind}`, value[kind]);
  return out;
}

/** A scope name: a non-empty string, at most MAX_NAME characters. */
function scopeName(name) {
  if (typeof name !== 'string') throw new TypeError(`rloop: scope name must be a string, got ${describe(name)}`);
  if (name.length === 0 || name.length > MAX_NAME) {
    throw new RangeError(`rloop: scope name must be 1 to ${MAX_NAME} characters, got ${name.length}`);
  }
  return name;
}

/** The `key` of scope()/enter() options as a string, or undefined. */
function scopeKey(options) {
  if (options === undefined) return undefined; // the common case, per request: no allocation
  const { key } = knownOnly('scope', plainObject('scope options', options), ['key']);
  if (key === undefined) return undefined;
  if (typeof key !== 'string' && typeof key !== 'number') {
    throw new TypeError(`rloop: option 'key' must be a string or a number, got ${describe(key)}`);
  }
  const s = String(key);
  return s.length > MAX_NAME ? s.slice(0, MAX_NAME) : s;
}

module.exports = { START_DEFAULTS, AUTO_SCOPES, startOptions, scopeName, scopeKey };

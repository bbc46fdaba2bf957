'use strict';
// The options of start() and scope()/enter(): one table (see js/validate.js for what an entry
// says), and the options of zero-code use checked without starting anything.

const { boolean, describe, plainObject, knownOnly, fromTable, flatten } = require('./validate');
const { METRICS, metricsOptions } = require('./metrics/options');
const { CAPTURE, captureOptions } = require('./capture/options');

const AUTO_SCOPES = Object.freeze([
  { name: 'http', default: false, check: boolean, meaning: 'incoming HTTP requests by route' },
  { name: 'timers', default: false, check: boolean, meaning: 'timers by where they were created, while a capture runs' },
]);

const START = Object.freeze([
  { name: 'windowMs', default: 1000, range: [10, 3600000], unit: 'ms', variable: 'RLOOP_WINDOW_MS', meaning: 'window length; windows keep to a fixed schedule' },
  { name: 'history', default: 60, range: [1, 86400], meaning: 'complete windows kept, within 4 MB' },
  { name: 'maxScopes', default: 10000, range: [1, 1000000], meaning: "distinct scope names kept; more are charged to '(other)' and counted" },
  { name: 'maxKeys', default: 10000, range: [0, 1000000], meaning: 'keys whose names are kept per window (the busiest); the rest are counted as dropped' },
  { name: 'worstKeys', default: 5, range: [0, 1000], meaning: 'worst keys listed per scope and window' },
  // A key slot in use costs 100–350 bytes (bench/memory.md): 1 M of them ≤ 350 MB.
  { name: 'keySlots', default: 65536, range: [16, 1 << 20], meaning: "keys charged at once; a key's slot is reused after this many newer keys" },
  { name: 'lag', default: true, check: boolean, meaning: "lag tracking: each window's stretches (Window.lag), and 'lag' for each stall" },
  {
    name: 'lagThresholdMs', alias: 'lagThreshold', default: 50, range: [1, 3600000], unit: 'ms', variable: 'RLOOP_LAG_THRESHOLD',
    flag: { name: 'threshold', short: 't', arg: '<duration>' }, meaning: 'busy loop without a poll that makes a stall',
  },
  { name: 'io', default: true, check: boolean, flag: { name: 'no-io' }, meaning: "track async I/O and emit 'slowIO'; false installs nothing" },
  {
    name: 'ioThresholdMs', alias: 'ioThreshold', default: 500, range: [0, 3600000], unit: 'ms', variable: 'RLOOP_IO_THRESHOLD',
    flag: { name: 'io-threshold', arg: '<duration>' }, meaning: 'how long an I/O operation takes to be slow',
  },
  {
    name: 'metrics', default: null, check: (name, value) => (value === null ? null : metricsOptions(value)), options: METRICS,
    meaning: 'serve Prometheus metrics from a Rust thread; null: none',
  },
  {
    name: 'autoScopes', default: false, check: autoScopes, options: AUTO_SCOPES, variable: 'RLOOP_AUTO_SCOPES', flag: { name: 'no-auto-scopes' },
    meaning: 'scopes for code that has none: incoming HTTP by route, timers by creation site',
  },
]);

/** Options of start(), defaults filled in. */
function startOptions(options) {
  return fromTable(START, options, { what: 'start()' });
}

/** `autoScopes`: true or false for all, or `{ http, timers }` (each a boolean, false if left out). */
function autoScopes(name, value) {
  if (typeof value === 'boolean') return { http: value, timers: value };
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`rloop: option '${name}' must be true, false or { http, timers }, got ${describe(value)}`);
  }
  return fromTable(AUTO_SCOPES, value, { what: `'${name}'`, prefix: `${name}.` });
}

/**
 * Every option of start() and capture(), those nested in another by a dotted label
 * ('metrics.port'); `family` is the table it is documented in.
 */
const OPTIONS = Object.freeze([
  ...flatten(START).map((e) => ({ ...e, family: e.label.startsWith('metrics.') ? 'metrics' : 'start' })),
  ...flatten(CAPTURE).map((e) => ({ ...e, family: 'capture' })),
]);

/**
 * start() and capture() options checked as those calls check them, nothing started: zero-code
 * use checks every variable before it starts anything. `capture` null: no capture.
 */
function checkOptions(start, capture) {
  return { start: startOptions(start), capture: capture === null ? null : captureOptions(capture) };
}

const MAX_NAME = 256;

/** A scope name: a non-empty string, at most MAX_NAME characters. */
function scopeName(name) {
  if (typeof name !== 'string') throw new TypeError(`rloop: scope name must be a string, got ${describe(name)}`);
  if (name.length === 0 || name.length > MAX_NAME) {
    throw new RangeError(`rloop: scope name must be 1 to ${MAX_NAME} characters, got ${name.length}`);
  }
  return name;
}

const SCOPE_OPTIONS = Object.freeze(['key']);

/** The `key` of scope()/enter() options as a string, or undefined. */
function scopeKey(options) {
  if (options === undefined) return undefined; // the common case, per request: no allocation
  const { key } = knownOnly('scope', plainObject('scope options', options), SCOPE_OPTIONS);
  if (key === undefined) return undefined;
  if (typeof key !== 'string' && typeof key !== 'number') {
    throw new TypeError(`rloop: option 'key' must be a string or a number, got ${describe(key)}`);
  }
  const s = String(key);
  return s.length > MAX_NAME ? s.slice(0, MAX_NAME) : s;
}

module.exports = { START, OPTIONS, startOptions, checkOptions, scopeName, scopeKey };

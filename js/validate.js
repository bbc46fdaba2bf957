'use strict';
// The checks every option parser shares: a bad value throws a TypeError or RangeError naming the
// option. An option given as undefined is an option not given: it takes its default, everywhere.
//
// Each family of options (start(), capture(), metrics) is one table, an array of entries, that
// its parser reads through `fromTable` and the docs, index.d.ts, zero-code's variables and the
// attach flags are tested against (test/package/options.test.js). An entry:
//   name     the option; `alias` an older name still accepted (giving both is a TypeError)
//   default  its value when not given; with `required` (the reason, said in the error) none
//   range    [min, max] of an integer, checked unless `check(label, value, entry)` returns the value
//   options  the table of an option that takes an object of its own (`profile: { intervalUs }`)
//   unit     of a number ('ms', 'µs', 'bytes'); meaning, one line for help texts
//   variable the RLOOP_* variable of zero-code use (register/variables.js reads them)
//   flag     `rloop attach`'s flag { name, short, aliases, arg: its value's form (none: a switch),
//            bare: the unit of a bare number where it is not the option's }

function integerIn(name, value, [min, max]) {
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    throw new TypeError(`rloop: option '${name}' must be an integer, got ${describe(value)}`);
  }
  if (value < min || value > max) {
    throw new RangeError(`rloop: option '${name}' must be between ${min} and ${max}, got ${value}`);
  }
  return value;
}

function boolean(name, value) {
  if (typeof value !== 'boolean') throw new TypeError(`rloop: option '${name}' must be true or false, got ${describe(value)}`);
  return value;
}

/** What `value` is, for a message: 'undefined', 'an array', 'the number 5', 'the string "5s"'. */
function describe(value) {
  if (value === null || value === undefined) return String(value);
  if (typeof value === 'string') return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function';
  return `the ${typeof value} ${String(value)}`;
}

function plainObject(name, value) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`rloop: ${name} must be an object, got ${describe(value)}`);
  }
  return value;
}

const NO_ALIASES = Object.freeze([]);

/**
 * `given` itself; throws a TypeError naming the first own key neither in `known` nor in
 * `aliases`. Allocates nothing: scope() checks its options on every call.
 */
function knownOnly(what, given, known, aliases = NO_ALIASES) {
  for (const k in given) {
    if (Object.hasOwn(given, k) && !known.includes(k) && !aliases.includes(k)) throw new TypeError(`rloop: unknown ${what} option '${k}' (known: ${known.join(', ')})`);
  }
  return given;
}

/**
 * The options `given` checked against `table`, every one filled in: `what` names the options in
 * errors ('capture()'), `prefix` an option nested in another ('metrics.'), `defaults` replaces
 * entries' defaults (watch()'s duration).
 */
function fromTable(table, options, { what, object = `${what} options`, prefix = '', defaults = {} }) {
  const given = knownOnly(what, plainObject(object, options), table.map((e) => e.name), table.flatMap((e) => (e.alias ? [e.alias] : [])));
  const out = {};
  for (const entry of table) {
    let label = prefix + entry.name;
    let value = given[entry.name];
    if (entry.alias !== undefined && given[entry.alias] !== undefined) {
      if (value !== undefined) throw new TypeError(`rloop: options '${label}' and '${prefix + entry.alias}' (its alias) are both given: give one`);
      value = given[entry.alias];
      label = prefix + entry.alias;
    }
    if (value === undefined) value = entry.name in defaults ? defaults[entry.name] : entry.default;
    if (value === undefined && entry.required) throw new TypeError(`rloop: option '${label}' is required (${entry.required})`);
    out[entry.name] = entry.check ? entry.check(label, value, entry) : integerIn(label, value, entry.range);
  }
  return out;
}

/** Every entry of `table` and of the tables nested in it, with its `label`: 'metrics.port'. */
function flatten(table, prefix = '') {
  return table.flatMap((e) => [{ ...e, label: prefix + e.name }, ...(e.options ? flatten(e.options, `${prefix}${e.name}.`) : [])]);
}

// In ms. A duration written as text has a unit; a bare number is in its place's own unit
// (RLOOP_DURATION: ms, `rloop attach -d`: seconds).
const UNITS = { us: 0.001, µs: 0.001, ms: 1, s: 1000, m: 60000 };

/**
 * A duration written as text (`10s`, `500ms`, `2m`, `100us`; a bare number is in `bare`) in
 * `unit`; `name` (a variable, a flag) is named in the TypeError of text that is none.
 */
function duration(name, text, unit = 'ms', bare = unit) {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(us|µs|ms|s|m)?\s*$/.exec(text);
  if (m === null) {
    const bareIn = bare === 's' ? 'seconds' : bare;
    throw new TypeError(`${name} must be a duration such as 10s, 500ms or 2m (a bare number is in ${bareIn}), got ${JSON.stringify(text)}`);
  }
  // Rounded off past the sixth decimal: 1.1 * 1000 is 1100.0000000000002 in floating point.
  return Math.round((Number(m[1]) * UNITS[m[2] ?? bare]) / UNITS[unit] * 1e6) / 1e6;
}

module.exports = { integerIn, boolean, describe, plainObject, knownOnly, fromTable, flatten, duration };

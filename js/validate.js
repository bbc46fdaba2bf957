'use strict';
// The checks every option parser shares: a bad value throws a TypeError or RangeError naming the
// option. An option given as undefined is an option not given: it takes its default, everywhere.

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

/** `defaults` with what `given` sets over them; an option given as undefined keeps its default. */
function withDefaults(defaults, given) {
  const out = { ...defaults };
  for (const [name, value] of Object.entries(given)) if (value !== undefined) out[name] = value;
  return out;
}

function plainObject(name, value) {
  if (value === undefined) return {};
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new TypeError(`rloop: ${name} must be an object, got ${describe(value)}`);
  }
  return value;
}

/** `given` itself; throws a TypeError naming the first key not in `known`. */
function knownOnly(what, given, known) {
  const unknown = Object.keys(given).find((k) => !known.includes(k));
  if (unknown !== undefined) throw new TypeError(`rloop: unknown ${what} option '${unknown}' (known: ${known.join(', ')})`);
  return given;
}

module.exports = { integerIn, boolean, describe, withDefaults, plainObject, knownOnly };

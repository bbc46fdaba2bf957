'use strict';
// Frames for builtins V8's profiler does not see. JSON.parse/stringify are C++ builtins with no
// frame, and a regular expression has one ('RegExp: <source>') only once compiled to native
// code while the profile runs: its interpreted runs, and code compiled before the profile
// started, land on the caller as if the caller's own work. While a profile runs, these builtins
// are replaced by markers compiled under rloop's own script URLs (js/own.js hides
// them from the app's stacks), each calling the builtin with the same receiver and arguments.
//
// RegExp.prototype.exec is never replaced: the builtins behind String.prototype.replace, split,
// match… take their fast path only while exec is the original, and once it has been replaced V8
// keeps the slow one even after it is put back (measured on Node 20 and 26: 15× slower regex
// work for the rest of the process). Replacing the other methods costs nothing after.
// A function someone else put in place of a builtin is never replaced, nor removed; a frozen
// object is left alone.

const vm = require('node:vm');
const { JSON_MARKER_URL, REGEX_MARKER_URL } = require('../own');

// Strict code: a primitive or missing receiver reaches the builtin as given, so any TypeError
// is the builtin's own. The regex markers call `Function.prototype.call` bound to each builtin
// when rloop loaded, so an app that later changes either is not followed.
const SOURCES = {
  [JSON_MARKER_URL]: `(function (b) {
  return {
    'JSON.parse'(text, reviver) { return b.parse(text, reviver); },
    'JSON.stringify'(value, replacer, space) { return b.stringify(value, replacer, space); },
  };
})`,
  [REGEX_MARKER_URL]: `(function (b) {
  'use strict';
  return {
    'RegExp.prototype.test'(string) { return b.test(this, string); },
    'RegExp.prototype[Symbol.match]'(string) { return b.match(this, string); },
    'RegExp.prototype[Symbol.matchAll]'(string) { return b.matchAll(this, string); },
    'RegExp.prototype[Symbol.replace]'(string, replaceValue) { return b.replace(this, string, replaceValue); },
    'RegExp.prototype[Symbol.search]'(string) { return b.search(this, string); },
    'RegExp.prototype[Symbol.split]'(string, limit) { return b.split(this, string, limit); },
  };
})`,
};

// [object, key, marker name in the source, builtin]: the builtins as they were when rloop loaded.
const P = RegExp.prototype;
const TARGETS = [
  [JSON, 'parse', 'JSON.parse'],
  [JSON, 'stringify', 'JSON.stringify'],
  [P, 'test', 'RegExp.prototype.test'],
  ...['match', 'matchAll', 'replace', 'search', 'split'].map((m) => [P, Symbol[m], `RegExp.prototype[Symbol.${m}]`]),
].map(([object, key, name]) => ({ object, key, name, builtin: object[key], marker: null }));

const call = Function.prototype.call;
let compiled = false;
let marking = 0; // this thread's running profiles

/** Compiles the markers, once per thread: before a profile starts, so not in the app's time. */
function compile() {
  if (compiled) return;
  const builtins = (object) => Object.fromEntries(TARGETS.filter((t) => t.object === object)
    .map((t) => [typeof t.key === 'symbol' ? t.key.description.slice('Symbol.'.length) : t.key, object === JSON ? t.builtin : call.bind(t.builtin)]));
  const made = {
    ...vm.runInThisContext(SOURCES[JSON_MARKER_URL], { filename: JSON_MARKER_URL })(builtins(JSON)),
    ...vm.runInThisContext(SOURCES[REGEX_MARKER_URL], { filename: REGEX_MARKER_URL })(builtins(P)),
  };
  for (const t of TARGETS) {
    t.marker = made[t.name];
    // The profiler names frames from the source; code that reads .name or .length sees the builtin's.
    Object.defineProperty(t.marker, 'name', { value: t.builtin.name });
    Object.defineProperty(t.marker, 'length', { value: t.builtin.length });
  }
  compiled = true;
}

const writable = (object, key) => Object.getOwnPropertyDescriptor(object, key)?.writable === true;

/** Puts the markers in place of the builtins (counted: nested profiles mark once). */
function mark() {
  compile();
  if (marking++ > 0) return;
  for (const t of TARGETS) if (t.object[t.key] === t.builtin && writable(t.object, t.key)) t.object[t.key] = t.marker;
}

/** Puts the builtins back with the thread's last profile. */
function unmark() {
  if (--marking > 0) return;
  for (const t of TARGETS) if (t.object[t.key] === t.marker && writable(t.object, t.key)) t.object[t.key] = t.builtin;
}

module.exports = { mark, unmark, compile, JSON_MARKER_URL, REGEX_MARKER_URL };

'use strict';
// The options of capture() and watch(), checked as they are given, and the output paths they name.

const fs = require('node:fs');
const nodePath = require('node:path');
const { pid } = require('node:process'); // the process's own, whatever the app puts at global.process
const profiler = require('./profile');
const heapProfiler = require('./heap-profile');
const { describe, withDefaults, integerIn, boolean, plainObject, knownOnly } = require('../validate');
const { epochMs } = require('../clock');

const MAX_MS = 7 * 24 * 3600 * 1000; // a week: the longest capture or watch interval
const DEFAULTS = Object.freeze({
  durationMs: 10000,
  profile: false,
  heapProfile: false,
  heapStats: true,
  heapSnapshot: false,
  json: false,
  html: false,
  cpuprofile: false,
  pprof: false,
  heapPprof: false,
});
const PATHS = ['heapSnapshot', 'json', 'html', 'cpuprofile', 'pprof', 'heapPprof'];

const PLACEHOLDERS = ['{pid}', '{time}', '{n}'];
// Zero-code use (register/) is told the files a capture wrote, to say where the report went: a
// symbol, so no public option, and a callback only.
const WRITTEN = Symbol.for('rloop.written');
let captures = 0; // numbers this thread's captures for `{n}`

/**
 * An output path, or false. Checked now rather than when the capture ends, which may be at
 * exit: a report that cannot be written would be lost after all the collecting. Its folder must
 * exist and be writable, unless {time} or {n} name it (it differs per capture).
 */
function pathOption(name, value) {
  if (value === false) return false;
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`rloop: option '${name}' must be a file path or false, got ${describe(value)}`);
  }
  const unknown = value.match(/\{[A-Za-z_]\w*\}/g)?.find((p) => !PLACEHOLDERS.includes(p));
  if (unknown !== undefined) {
    throw new RangeError(`rloop: option '${name}' holds ${unknown}: only ${PLACEHOLDERS.join(', ')} are filled in`);
  }
  if (/\{(time|n)\}/.test(nodePath.dirname(value))) return value;
  const problem = unwritable(expand(value, captures + 1, epochMs()));
  if (problem !== null) throw new RangeError(`rloop: option '${name}': ${problem}`);
  return value;
}

/** Why `file` cannot be written, or null. */
function unwritable(file) {
  if (!permitted(file)) return `${nodePath.resolve(file)} may not be written: Node's permission model allows it with --allow-fs-write`;
  const dir = nodePath.resolve(nodePath.dirname(file)); // '.' would say little
  try {
    if (!fs.statSync(dir).isDirectory()) return `${dir} is not a folder`;
    fs.accessSync(dir, fs.constants.W_OK);
  } catch (e) {
    return e.code === 'ENOENT' ? `folder ${dir} does not exist` : `folder ${dir} cannot be written to (${e.code})`;
  }
  return fs.statSync(file, { throwIfNoEntry: false })?.isDirectory() ? `${file} is a folder` : null;
}

/**
 * Whether Node's permission model, if on, lets this process write `file`. The addon writes a
 * report itself when JS cannot (a signal on a blocked loop): past the model, which binds JS
 * only, so it is given no path the app may not write.
 */
function permitted(file) {
  return process.permission?.has('fs.write', nodePath.resolve(file)) ?? true;
}

/**
 * Capture options, defaults filled in (`defaults` over DEFAULTS: watch()'s); `durationMs:
 * Infinity` runs until stop() or exit.
 */
function captureOptions(options, what = 'capture()', defaults = DEFAULTS) {
  const given = knownOnly(what, plainObject(`${what} options`, options), Object.keys(DEFAULTS));
  const o = withDefaults(defaults, given);
  if (o.durationMs !== Infinity) integerIn('durationMs', o.durationMs, [1, MAX_MS]);
  if (typeof o.profile !== 'boolean' && (o.profile === null || typeof o.profile !== 'object' || Array.isArray(o.profile))) {
    throw new TypeError(`rloop: option 'profile' must be true, false or { intervalUs }, got ${describe(o.profile)}`);
  }
  if (o.profile !== false) o.profile = profiler.profileOptions(o.profile === true ? {} : o.profile);
  if (typeof o.heapProfile !== 'boolean' && (o.heapProfile === null || typeof o.heapProfile !== 'object' || Array.isArray(o.heapProfile))) {
    throw new TypeError(`rloop: option 'heapProfile' must be true, false or { samplingIntervalBytes }, got ${describe(o.heapProfile)}`);
  }
  if (o.heapProfile !== false) o.heapProfile = heapProfiler.heapProfileOptions(o.heapProfile === true ? {} : o.heapProfile);
  boolean('heapStats', o.heapStats);
  for (const name of PATHS) o[name] = pathOption(name, o[name]);
  // Not enumerable: the report's meta.options spreads these options, and this is none of them.
  if (typeof given[WRITTEN] === 'function') Object.defineProperty(o, WRITTEN, { value: given[WRITTEN] });
  return o;
}

/** watch() options: `everyMs`, and the options of each capture (10 s long, or everyMs if shorter). */
function watchOptions(options) {
  const { everyMs, ...rest } = plainObject('watch() options', options);
  integerIn('everyMs', everyMs, [1, MAX_MS]);
  const capture = captureOptions(rest, 'watch()', { ...DEFAULTS, durationMs: Math.min(DEFAULTS.durationMs, everyMs) });
  if (capture.durationMs > everyMs) {
    throw new RangeError(`rloop: option 'durationMs' (${capture.durationMs}) must not exceed 'everyMs' (${everyMs})`);
  }
  return { everyMs, capture };
}

/** `{pid}`, `{time}` (ISO, file-safe) and `{n}` (capture number) in output paths. */
function expand(path, n, at) {
  const time = new Date(at).toISOString().replace(/[:.]/g, '-');
  return path.replaceAll('{pid}', String(pid)).replaceAll('{time}', time).replaceAll('{n}', String(n));
}

/** The number of the capture starting now, for `{n}`. */
function numberCapture() {
  return ++captures;
}

module.exports = { captureOptions, watchOptions, expand, numberCapture, permitted, WRITTEN };

'use strict';
// The options of capture() and watch(), checked as they are given, and the output paths they name.

const fs = require('node:fs');
const nodePath = require('node:path');
const { pid } = require('node:process'); // the process's own, whatever the app puts at global.process
const profiler = require('./profile');
const heapProfiler = require('./heap-profile');
const { describe, integerIn, boolean, plainObject, fromTable } = require('../validate');
const { epochMs } = require('../clock');

const MAX_MS = 7 * 24 * 3600 * 1000; // a week: the longest capture or watch interval

// The options of capture() and watch(): one table (see js/validate.js for what an entry says).
// A file option's attach flag is its name in kebab case and its variable RLOOP_ and its name in
// upper snake case (test/package/options.test.js holds them to it).
const CAPTURE = Object.freeze([
  {
    name: 'durationMs', default: 10000, range: [1, MAX_MS], check: durationMs, unit: 'ms', variable: 'RLOOP_DURATION',
    flag: { name: 'duration', short: 'd', arg: '<duration>', bare: 's' }, meaning: 'how long to capture; Infinity: until stop() or the process ends',
  },
  {
    name: 'profile', default: false, check: withOptions(profiler.profileOptions), options: profiler.PROFILE, variable: 'RLOOP_PROFILE',
    flag: { name: 'no-profile' }, meaning: 'take a CPU profile: true or { intervalUs }',
  },
  {
    name: 'heapProfile', default: false, check: withOptions(heapProfiler.heapProfileOptions), options: heapProfiler.HEAP_PROFILE,
    variable: 'RLOOP_HEAP_PROFILE', flag: { name: 'heap-profile' }, meaning: 'sample allocations: true or { samplingIntervalBytes }',
  },
  { name: 'heapStats', default: true, check: boolean, flag: { name: 'no-heap-stats' }, meaning: 'heap stats at start and end, and a memory timeline' },
  { name: 'heapSnapshot', default: false, check: pathOption, variable: 'RLOOP_HEAP_SNAPSHOT', flag: { name: 'heap-snapshot', arg: '<f>' }, meaning: 'heap snapshot path, taken as the capture ends' },
  { name: 'json', default: false, check: pathOption, variable: 'RLOOP_JSON', flag: { name: 'json', arg: '<f>' }, meaning: 'path of the report as JSON' },
  { name: 'html', default: false, check: pathOption, variable: 'RLOOP_HTML', flag: { name: 'html', arg: '<f>' }, meaning: 'path of the self-contained HTML report' },
  {
    name: 'cpuprofile', default: false, check: pathOption, variable: 'RLOOP_CPUPROFILE', flag: { name: 'cpuprofile', arg: '<f>', aliases: ['save-profile'] },
    meaning: 'path of the raw .cpuprofile (with profile)',
  },
  {
    name: 'pprof', default: false, check: pathOption, variable: 'RLOOP_PPROF', flag: { name: 'pprof', arg: '<f>', aliases: ['save-pprof'] },
    meaning: 'path of the profile as gzipped pprof, labelled by scope (with profile)',
  },
  {
    name: 'heapPprof', default: false, check: pathOption, variable: 'RLOOP_HEAP_PPROF', flag: { name: 'heap-pprof', arg: '<f>', aliases: ['save-heap-pprof'] },
    meaning: 'path of the allocations sampled as gzipped pprof (with heapProfile)',
  },
]);
const DEFAULT_DURATION_MS = CAPTURE[0].default;

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

function durationMs(name, value, { range }) {
  return value === Infinity ? value : integerIn(name, value, range);
}

/** An option that is true, false or the object of options `nested` checks (true: its defaults). */
function withOptions(nested) {
  return (name, value, { options }) => {
    if (value === false) return false;
    if (value === true) return nested({});
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new TypeError(`rloop: option '${name}' must be true, false or { ${options.map((e) => e.name).join(', ')} }, got ${describe(value)}`);
    }
    return nested(value);
  };
}

/**
 * Capture options, defaults filled in (`defaults` over the table's: watch()'s); `durationMs:
 * Infinity` runs until stop() or exit.
 */
function captureOptions(options, what = 'capture()', defaults = {}) {
  const o = fromTable(CAPTURE, options, { what, defaults });
  // Not enumerable: the report's meta.options spreads these options, and this is none of them.
  if (typeof options?.[WRITTEN] === 'function') Object.defineProperty(o, WRITTEN, { value: options[WRITTEN] });
  return o;
}

/** watch() options: `everyMs`, and the options of each capture (10 s long, or everyMs if shorter). */
function watchOptions(options) {
  const { everyMs, ...rest } = plainObject('watch() options', options);
  integerIn('everyMs', everyMs, [1, MAX_MS]);
  const capture = captureOptions(rest, 'watch()', { durationMs: Math.min(DEFAULT_DURATION_MS, everyMs) });
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

module.exports = { CAPTURE, captureOptions, watchOptions, expand, numberCapture, permitted, WRITTEN };

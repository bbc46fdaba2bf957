'use strict';
// One capture: what the monitor sees over a span of time — ELU windows, lag, slow I/O, heap,
// optionally a CPU profile and a heap snapshot — assembled into a report and written where
// asked. If the process ends mid-capture, what was collected is written synchronously with
// `partial: true` (js/exit-guard.js); if this thread's JS cannot run by then (a signal on a
// blocked loop, a terminated worker), the addon writes the JSON itself (src/report.rs).

const fs = require('node:fs');
const nodePath = require('node:path');
const { threadId } = require('node:worker_threads');
const heap = require('./heap');
const profiler = require('./profile');
const { study, frameOf } = require('./analyze');
const { flameTree } = require('./flame');
const { profileStalls } = require('./stall-stacks');
const { guard } = require('./exit-guard');
const { buildReport, reportFrame } = require('./report/build');
const { renderJson } = require('./report/json');
const { describe, withDefaults, integerIn, boolean, plainObject, knownOnly } = require('./options');
const { version } = require('../package.json');

const MAX_EVENTS = 1000; // slow-I/O events kept per capture; more are counted (lag: src/recording.rs)
const HEAP_EVERY_MS = 1000;
const MAX_MS = 7 * 24 * 3600 * 1000; // a week: the longest capture or watch interval
const DEFAULTS = Object.freeze({
  durationMs: 10000,
  profile: false,
  heapStats: true,
  heapSnapshot: false,
  json: false,
  html: false,
  cpuprofile: false,
});
const PATHS = ['heapSnapshot', 'json', 'html', 'cpuprofile'];

const PLACEHOLDERS = ['{pid}', '{time}', '{n}'];

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
  const problem = unwritable(expand(value, captures + 1, Date.now()));
  if (problem !== null) throw new RangeError(`rloop: option '${name}': ${problem}`);
  return value;
}

/** Why `file` cannot be written, or null. */
function unwritable(file) {
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
  boolean('heapStats', o.heapStats);
  for (const name of PATHS) o[name] = pathOption(name, o[name]);
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
  return path.replaceAll('{pid}', String(process.pid)).replaceAll('{time}', time).replaceAll('{n}', String(n));
}

let captures = 0; // numbers this thread's captures for `{n}`

/**
 * Says how much of each stall was rloop starting the CPU profile: V8 walks all code for it,
 * synchronously, 50–250 ms in a large app. The time is unattributed (js/monitor.js), not the app's.
 */
function markOwnWork(events, span) {
  if (span === null) return;
  for (const e of events) {
    const ms = Math.min(e.at + e.lagMs, span.at + span.ms) - Math.max(e.at, span.at);
    if (ms > 0) e.rloopMs = Math.round(ms * 10) / 10;
  }
}

class Capture {
  #monitor; // the Monitor: events
  #inner; // the monitor's internals: totals(), timeline, io aggregates
  #o;
  #n = ++captures;
  #start = Date.now();
  #totalsBefore;
  #recording; // the addon's recording of windows and stalls (src/recording.rs)
  #framed; // whether the addon may finish the report (then it gets the slow I/O events too)
  #io = { events: [], dropped: 0 };
  #ioTotals; // this capture's I/O aggregates, when the monitor tracks I/O
  #heapStart;
  #timeline;
  #profile = null; // the running profile, once started
  #profileStart = null; // { at, ms }: when starting the profile held the loop (epoch ms), and how long
  #takeTimeline = null; // ends the profile's scope timeline and gives it
  #unguard;
  #collecting = true;
  #begun;
  #finishing = null;
  #settle;
  /** Resolves to the report once the capture is finished, however that happens. */
  result = new Promise((resolve, reject) => { this.#settle = { resolve, reject }; });

  constructor(monitor, inner, options) {
    this.#monitor = monitor;
    this.#inner = inner;
    this.#o = options;
    this.#totalsBefore = inner.totals();
    this.#ioTotals = inner.collectIo();
    // Windows and stalls are kept by the addon, bounded however long the capture runs; slow
    // I/O comes from JS, through slowIO(), and is capped here.
    const frame = this.#frame();
    this.#framed = frame !== null;
    this.#recording = inner.record(frame);
    if (options.heapStats) {
      this.#heapStart = heap.stats();
      this.#timeline = heap.timeline({ everyMs: HEAP_EVERY_MS, onSample: (s) => monitor.emit('heapStats', s) });
    }
    this.#unguard = guard((reason) => {
      try {
        this.#finishAtExit(reason);
      } catch (e) {
        // No promise to reject as the process ends: the monitor's 'error' listeners hear it.
        inner.fail(new Error(`report not written: ${e.message}`, { cause: e }));
      }
    });
    this.#begun = this.#begin();
  }

  async #begin() {
    if (!this.#o.profile) return;
    // Before the profile: its first sample has a scope.
    this.#takeTimeline = this.#inner.recordTimeline();
    try {
      const at = performance.timeOrigin + performance.now();
      const starting = profiler.start(this.#o.profile); // synchronous work, up to its answer
      this.#profileStart = { at, ms: performance.timeOrigin + performance.now() - at };
      this.#profile = await starting;
    } catch (e) {
      this.#takeTimeline();
      this.#takeTimeline = null;
      throw e;
    }
  }

  /** Ends the capture (`reason` null: as planned) and writes what was asked. Idempotent. */
  finish(reason = null) {
    this.#finishing ??= this.#finish(reason).then(this.#settle.resolve, this.#settle.reject);
    return this.result;
  }

  async #finish(reason) {
    await this.#begun.catch(() => {}); // a profiler that failed to start leaves no profile
    const profile = this.#profile ? await this.#profile.stop() : null;
    const report = this.#collect(reason, profile);
    if (this.#o.heapSnapshot) {
      const path = expand(this.#o.heapSnapshot, this.#n, this.#start);
      await heap.captureHeapSnapshot(path);
      report.heap.snapshot = { path, bytes: fs.statSync(path).size };
    }
    this.#write(report, profile);
    if (profile) this.#monitor.emit('profile', { analysis: report.profile.analysis, profile });
    return report;
  }

  /** Ends the capture at once, without what needs awaiting (a heap snapshot): for stop(). */
  finishSync(reason) {
    try {
      const report = this.#finishAtExit(reason);
      if (report) this.#settle.resolve(report);
    } catch (e) {
      this.#settle.reject(e);
    }
  }

  /**
   * Writes the partial report as the process ends, and returns it (undefined if finishing
   * already). It settles no promise: at exit, a promise's reactions are async resources the
   * app's own hooks would see (and an app hook that throws there would change the exit code).
   */
  #finishAtExit(reason) {
    if (this.#finishing) return undefined;
    this.#finishing = true;
    const profile = this.#profile ? this.#profile.stopSync() : null;
    const report = this.#collect(reason, profile);
    this.#write(report, profile);
    return report;
  }

  /** A slow I/O operation, from the monitor (not an event listener: captures are unbounded in number). */
  slowIO(event) {
    // One still in flight is listed when the capture ends, if it has not ended by then.
    if (!this.#collecting || event.state === 'pending') return;
    this.#keepIo(event);
    if (!this.#framed) return;
    try {
      this.#inner.recordIo(this.#recording, event);
    } catch (e) {
      this.#inner.fail(e);
    }
  }

  #keepIo(event) {
    const io = this.#io;
    if (io.events.length < MAX_EVENTS) io.events.push(event);
    else io.dropped++;
  }

  /** Stops collecting and assembles the report (no I/O). */
  #collect(reason, profile) {
    // I/O that never returned is the slowest: what is still in flight past the threshold.
    for (const event of this.#inner.pendingIo()) this.#keepIo(event);
    this.#collecting = false;
    this.#unguard();
    this.#timeline?.stop();
    this.#ioTotals?.stop();
    const end = Date.now();
    const partial = reason !== null;
    const o = this.#o;
    const recorded = this.#inner.takeRecording(this.#recording) ?? { windows: [], lag: { events: [], dropped: 0 } };
    markOwnWork(recorded.lag.events, this.#profileStart);
    const studied = profile ? this.#study(profile, recorded.lag) : null;
    return buildReport({
      meta: this.#meta(end, partial, reason),
      windowMs: this.#inner.options.windowMs,
      totalsBefore: this.#totalsBefore,
      totalsAfter: this.#inner.totals(),
      windows: recorded.windows,
      lag: { ...this.#lagOptions(), ...recorded.lag },
      io: {
        ...this.#ioOptions(),
        ...this.#io,
        aggregates: this.#ioTotals ? this.#ioTotals.aggregates() : [],
      },
      heap: o.heapStats
        ? {
          start: this.#heapStart, end: heap.stats(), timeline: this.#timeline.samples(), dropped: this.#timeline.dropped, snapshot: null,
          startUp: this.#timeline.startUp,
        }
        : null,
      profile: profile
        ? {
          intervalUs: o.profile.intervalUs,
          file: o.cpuprofile ? expand(o.cpuprofile, this.#n, this.#start) : null,
          analysis: studied.analysis,
          flame: flameTree(studied.measured),
        }
        : null,
    });
  }

  #meta(end, partial, reason) {
    const { platform, arch, pid } = process;
    const start = this.#start;
    const options = { ...this.#inner.options, ...this.#o };
    return { tool: 'rloop', version, node: process.version, v8: process.versions.v8, platform, arch, pid, thread: threadId, start, end, partial, reason, options };
  }

  #lagOptions() {
    return { enabled: this.#inner.options.lag, thresholdMs: this.#inner.options.lagThreshold };
  }

  #ioOptions() {
    return { enabled: this.#inner.options.io, thresholdMs: this.#inner.options.ioThreshold };
  }

  /**
   * The report frame (js/report/build.js) for the addon to finish if this thread's JS cannot;
   * null when no file was asked for. Only HTML asked: the JSON goes beside it, for `rloop report`.
   */
  #frame() {
    const o = this.#o;
    const path = o.json ? expand(o.json, this.#n, this.#start) : o.html ? expand(o.html, this.#n, this.#start).replace(/\.html?$/i, '') + '.json' : null;
    if (path === null) return null;
    const known = { meta: this.#meta(this.#start, true, null), windowMs: this.#inner.options.windowMs, totalsBefore: this.#totalsBefore };
    const c = { ...known, lag: this.#lagOptions(), io: this.#ioOptions(), heapStats: o.heapStats, profile: o.profile };
    return reportFrame(c, path, this.#monitor.listenerCount('error') > 0);
  }

  /**
   * The profile's analysis by scope, on the scope timeline moved to the profile's clock (µs):
   * every change of the charged scope, with the time the hot path read for it, and each idle
   * mark (false). The stalls' stacks come from the samples inside them, where there are some.
   */
  #study(profile, lag) {
    const offsetUs = profiler.profileClockOffsetUs();
    const scopeTimeline = this.#takeTimeline().transitions.map(([ms, scope]) => [ms * 1000 + offsetUs, scope]);
    const studied = study(profile, { scopeTimeline, lagThresholdMs: this.#inner.options.lagThreshold });
    lag.events = profileStalls(lag.events, profile, studied.measured, { originMs: performance.timeOrigin, offsetUs, scopeTimeline, frameOf });
    return studied;
  }

  #write(report, profile) {
    const o = this.#o;
    const at = (name) => expand(o[name], this.#n, this.#start);
    if (o.json) fs.writeFileSync(at('json'), renderJson(report));
    if (o.html) fs.writeFileSync(at('html'), require('./report/html').renderHtml(report));
    if (o.cpuprofile && profile) fs.writeFileSync(at('cpuprofile'), JSON.stringify(profile));
  }
}

module.exports = { Capture, captureOptions, watchOptions };

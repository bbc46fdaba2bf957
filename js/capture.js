'use strict';
// One capture: what the monitor sees over a span of time — ELU windows, lag, slow I/O, heap,
// optionally a CPU profile and a heap snapshot — assembled into a report and written where
// asked. If the process ends mid-capture, what was collected is written synchronously with
// `partial: true` (js/exit-guard.js); nothing collected is lost.

const fs = require('node:fs');
const { threadId } = require('node:worker_threads');
const heap = require('./heap');
const profiler = require('./profile');
const { analyzeWithFlame } = require('./analyze');
const { guard } = require('./exit-guard');
const { buildReport } = require('./report/build');
const { renderJson } = require('./report/json');
const { describe, integerIn, boolean, plainObject, knownOnly } = require('./options');
const { version } = require('../package.json');

const MAX_EVENTS = 1000; // slow-I/O events kept per capture; more are counted (lag: src/recording.rs)
const HEAP_EVERY_MS = 1000;
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

function pathOption(name, value) {
  if (value === false) return false;
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`rloop: option '${name}' must be a file path or false, got ${describe(value)}`);
  }
  return value;
}

/** Capture options, defaults filled in; `durationMs: Infinity` runs until stop() or exit. */
function captureOptions(options) {
  const given = knownOnly('capture()', plainObject('capture() options', options), Object.keys(DEFAULTS));
  const o = { ...DEFAULTS, ...given };
  if (o.durationMs !== Infinity) integerIn('durationMs', o.durationMs, [1, 7 * 24 * 3600 * 1000]);
  if (o.profile !== false) o.profile = profiler.profileOptions(o.profile === true ? {} : o.profile);
  boolean('heapStats', o.heapStats);
  for (const name of PATHS) o[name] = pathOption(name, o[name]);
  return o;
}

/** `{pid}`, `{time}` (ISO, file-safe) and `{n}` (capture number) in output paths. */
function expand(path, n, at) {
  const time = new Date(at).toISOString().replace(/[:.]/g, '-');
  return path.replaceAll('{pid}', String(process.pid)).replaceAll('{time}', time).replaceAll('{n}', String(n));
}

let captures = 0; // numbers this thread's captures for `{n}`

class Capture {
  #monitor; // the Monitor: events
  #inner; // the monitor's internals: totals(), timeline, io aggregates
  #o;
  #n = ++captures;
  #start = Date.now();
  #totalsBefore;
  #recording; // the addon's recording of windows and stalls (src/recording.rs)
  #io = { events: [], dropped: 0 };
  #ioTotals; // this capture's I/O aggregates, when the monitor tracks I/O
  #heapStart;
  #timeline;
  #profile = null; // the running profile, once started
  #unguard;
  #listeners;
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
    // I/O is emitted synchronously from JS, and capped here.
    this.#recording = inner.record();
    const io = this.#io;
    this.#listeners = { slowIO: (event) => (io.events.length < MAX_EVENTS ? io.events.push(event) : io.dropped++) };
    for (const [name, fn] of Object.entries(this.#listeners)) monitor.on(name, fn);
    if (options.heapStats) {
      this.#heapStart = heap.stats();
      this.#timeline = heap.timeline({ everyMs: HEAP_EVERY_MS, onSample: (s) => monitor.emit('heapStats', s) });
    }
    this.#unguard = guard((reason) => this.finishSync(reason));
    this.#begun = this.#begin();
  }

  async #begin() {
    if (!this.#o.profile) return;
    this.#profile = await profiler.start(this.#o.profile);
    this.#inner.startTimeline();
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

  /** Ends the capture at once, without what needs awaiting (a heap snapshot): for exit and stop(). */
  finishSync(reason) {
    if (this.#finishing) return; // finishing already
    this.#finishing = Promise.resolve();
    try {
      const profile = this.#profile ? this.#profile.stopSync() : null;
      const report = this.#collect(reason, profile);
      this.#write(report, profile);
      this.#settle.resolve(report);
    } catch (e) {
      this.#settle.reject(e);
    }
  }

  /** Stops collecting and assembles the report (no I/O). */
  #collect(reason, profile) {
    this.#unguard();
    for (const [name, fn] of Object.entries(this.#listeners)) this.#monitor.off(name, fn);
    this.#timeline?.stop();
    this.#ioTotals?.stop();
    const end = Date.now();
    const partial = reason !== null;
    const o = this.#o;
    const scopeTimeline = profile ? this.#scopeTimeline() : undefined;
    const recorded = this.#inner.takeRecording(this.#recording) ?? { windows: [], lag: { events: [], dropped: 0 } };
    return buildReport({
      meta: {
        tool: 'rloop',
        version,
        node: process.version,
        v8: process.versions.v8,
        platform: process.platform,
        arch: process.arch,
        pid: process.pid,
        thread: threadId,
        start: this.#start,
        end,
        partial,
        reason,
        options: { ...this.#inner.options, ...o },
      },
      windowMs: this.#inner.options.windowMs,
      totalsBefore: this.#totalsBefore,
      totalsAfter: this.#inner.totals(),
      windows: recorded.windows,
      lag: { enabled: this.#inner.options.lag, thresholdMs: this.#inner.options.lagThreshold, ...recorded.lag },
      io: {
        enabled: this.#inner.options.io,
        thresholdMs: this.#inner.options.ioThreshold,
        ...this.#io,
        aggregates: this.#ioTotals ? this.#ioTotals.aggregates() : [],
      },
      heap: o.heapStats
        ? { start: this.#heapStart, end: heap.stats(), timeline: this.#timeline.samples(), dropped: this.#timeline.dropped, snapshot: null }
        : null,
      profile: profile
        ? {
          intervalUs: o.profile.intervalUs,
          file: o.cpuprofile ? expand(o.cpuprofile, this.#n, this.#start) : null,
          ...analyzeWithFlame(profile, { scopeTimeline }),
        }
        : null,
    });
  }

  /** The scope timeline on the profile's clock (µs), for per-scope analysis. */
  #scopeTimeline() {
    const offset = profiler.profileClockOffsetUs();
    return this.#inner.takeTimeline().map(([ms, scope]) => [ms * 1000 + offset, scope]);
  }

  #write(report, profile) {
    const o = this.#o;
    const at = (name) => expand(o[name], this.#n, this.#start);
    if (o.json) fs.writeFileSync(at('json'), renderJson(report));
    if (o.html) fs.writeFileSync(at('html'), require('./report/html').renderHtml(report));
    if (o.cpuprofile && profile) fs.writeFileSync(at('cpuprofile'), JSON.stringify(profile));
  }
}

module.exports = { Capture, captureOptions };

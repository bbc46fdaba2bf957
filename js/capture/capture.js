'use strict';
// One capture: what the monitor sees over a span of time — ELU windows, lag, slow I/O, heap,
// optionally a CPU profile and a heap snapshot — assembled into a report and written where
// asked. If the process ends mid-capture, what was collected is written synchronously with
// `partial: true` (js/capture/exit-guard.js); if this thread's JS cannot run by then (a signal on a
// blocked loop, a terminated worker), the addon writes the JSON itself (src/capture/report.rs).

const fs = require('node:fs');
const { platform, arch, pid } = require('node:process'); // the process's own, whatever the app puts at global.process
const { threadId } = require('node:worker_threads');
const { epochMs, ORIGIN } = require('../clock');
const { attempt, swallowed } = require('../attempt');
const { round } = require('../round');
const heap = require('./heap');
const { memoryRecord } = require('./memory');
const profiler = require('./profile');
const heapProfiler = require('./heap-profile');
const { analyzeHeapProfile } = require('../analyze/heap-profile');
const { study, frameOf } = require('../analyze');
const { flameTree } = require('../analyze/flame');
const { profileStalls } = require('../stalls/from-profile');
const { guard } = require('./exit-guard');
const { ownWithin } = require('./own-work');
const { withOriginals } = require('./source-maps');
const { buildReport, reportDraft } = require('../report/build');
const { renderJson } = require('../report/json');
const { renderPprof, renderHeapPprof } = require('../report/pprof');
const { expand, numberCapture, permitted, WRITTEN } = require('./options');
const { version } = require('../../package.json');

const MAX_EVENTS = 1000; // slow-I/O events kept per capture; more are counted (lag: src/capture/recording.rs)

/**
 * Says how much of each stall was rloop's own work (`own`: its spans, js/capture/own-work.js),
 * such as a CPU profile starting or stopping: V8 walks all code for it, synchronously, 50–250 ms
 * in a large app. The time is in no scope and not the app's (js/attribution/charge.js `ownCharged`).
 */
function markOwnWork(events, own) {
  for (const e of events) {
    const ms = own.reduce((sum, [a, b]) => sum + Math.max(0, Math.min(e.at + e.lagMs, b) - Math.max(e.at, a)), 0);
    if (ms > 0) e.rloopMs = round(ms, 1);
  }
}

class Capture {
  #monitor; // the Monitor: events
  #inner; // the monitor's internals: totals(), timeline, io aggregates
  #o;
  #n = numberCapture();
  #start = epochMs();
  #totalsBefore;
  #swallowedBefore = swallowed(); // rloop's own exceptions swallowed on this thread before the capture
  #recording; // the addon's recording of windows and stalls (src/capture/recording.rs)
  #drafted; // whether the addon may finish the report (then it gets the slow I/O events too)
  #io = { events: [], dropped: 0 };
  #ioTotals; // this capture's I/O aggregates, when the monitor tracks I/O
  #memory = null; // with heapStats (js/capture/memory.js)
  #profile = null; // the running profile, once started
  #heapProfile = null; // the running sampling heap profile, if asked and started
  #takeTimeline = null; // ends the profile's scope timeline and gives it
  #pprofContext = null; // renderPprof()'s options: the scope timeline on the profile's clock, routes, thread, clocks
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
    const draft = this.#draft();
    this.#drafted = draft !== null;
    this.#recording = inner.record(draft);
    if (options.heapStats) this.#memory = memoryRecord((s) => monitor.emit('heapStats', s), inner.heapAfterGc);
    this.#unguard = guard((reason) => {
      try {
        this.#finishAtExit(reason);
      } catch (e) {
        // No promise to reject as the process ends: the monitor's 'error' listeners hear it.
        inner.fail(new Error(`report not written: ${e.message}`, { cause: e }));
      }
    });
    if (options.heapProfile) {
      try {
        this.#heapProfile = heapProfiler.start(options.heapProfile);
      } catch (e) {
        inner.fail(new Error(`no heap profile: ${e.message}`, { cause: e })); // the rest of the capture goes on
      }
    }
    this.#begun = this.#begin();
  }

  async #begin() {
    if (!this.#o.profile) return;
    // Before the profile: its first sample has a scope.
    this.#takeTimeline = this.#inner.recordTimeline({ keys: true });
    try {
      this.#profile = await profiler.start(this.#o.profile);
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
    const heapEnd = this.#heapEnd();
    const profile = this.#profile ? await this.#profile.stop() : null;
    const heapProfile = this.#heapProfile ? await this.#heapProfile.stop() : null;
    const { report, located } = this.#collect(reason, profile, heapProfile, heapEnd);
    if (this.#o.heapSnapshot) {
      const path = expand(this.#o.heapSnapshot, this.#n, this.#start);
      await heap.captureHeapSnapshot(path);
      report.heap.snapshot = { path, bytes: fs.statSync(path).size };
    }
    this.#write(report, profile, located);
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
    const heapEnd = this.#heapEnd();
    const profile = this.#profile ? this.#profile.stopSync() : null;
    const heapProfile = this.#heapProfile ? this.#heapProfile.stopSync() : null;
    const { report, located } = this.#collect(reason, profile, heapProfile, heapEnd);
    this.#write(report, profile, located);
    return report;
  }

  /** A slow I/O operation, from the monitor (not an event listener: captures are unbounded in number). */
  slowIO(live) {
    // One still in flight is listed when the capture ends, if it has not ended by then.
    if (!this.#collecting || live.state === 'pending') return;
    // Whether the live events told it pending first is no fact of the report's.
    const { reportedPending, ...event } = live;
    this.#keepIo(event);
    if (!this.#drafted) return;
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

  /**
   * The heap as the capture ends, read before its profiles stop: the profiles V8 hands back
   * (every node, sample and call frame as JS objects) are rloop's own, never the app's growth.
   */
  #heapEnd() {
    return this.#memory?.end() ?? null;
  }

  /**
   * Stops collecting and assembles the report (no I/O but the source maps'): `{ report, located }`,
   * `located` what was collected at its original locations (js/capture/source-maps.js).
   */
  #collect(reason, profile, heapProfile, heapEnd) {
    // I/O that never returned is the slowest: what is still in flight past the threshold.
    for (const event of this.#inner.pendingIo()) this.#keepIo(event);
    this.#collecting = false;
    this.#unguard();
    const memory = this.#memory?.stop(heapEnd) ?? null;
    this.#ioTotals?.stop();
    const end = epochMs();
    const partial = reason !== null;
    const o = this.#o;
    const recorded = this.#inner.takeRecording(this.#recording) ?? { windows: [], lag: { events: [], dropped: 0 } };
    // Read with the windows, before the analysis below: that is rloop's work, after the capture.
    const totalsAfter = this.#inner.totals();
    const from = Math.min(this.#start, recorded.windows[0]?.start ?? Infinity);
    const own = ownWithin(from, Infinity);
    markOwnWork(recorded.lag.events, own);
    const collected = { profile, heapProfile, stalls: recorded.lag.events, io: this.#io.events };
    const located = attempt(withOriginals, collected) ?? { ...collected, sourceMaps: null };
    recorded.lag.events = located.stalls;
    const studied = profile ? this.#study(located.profile, recorded.lag) : null;
    const report = buildReport({
      // Only the report JS builds says how many: the addon cannot count them (src/report.rs).
      meta: { ...this.#meta(end, partial, reason), swallowed: swallowed() - this.#swallowedBefore, ...(located.sourceMaps && { sourceMaps: located.sourceMaps }) },
      windowMs: this.#inner.options.windowMs,
      totalsBefore: this.#totalsBefore,
      totalsAfter,
      windows: recorded.windows,
      lag: { ...this.#lagOptions(), ...recorded.lag },
      io: {
        ...this.#ioOptions(),
        ...this.#io,
        events: located.io,
        aggregates: this.#ioTotals ? this.#ioTotals.aggregates() : [],
      },
      heap: memory,
      profile: profile
        ? {
          intervalUs: o.profile.intervalUs,
          file: o.cpuprofile ? expand(o.cpuprofile, this.#n, this.#start) : null,
          pprof: o.pprof ? expand(o.pprof, this.#n, this.#start) : null,
          analysis: studied.analysis,
          flame: flameTree(studied.measured),
        }
        : null,
      heapProfile: heapProfile
        ? {
          samplingIntervalBytes: o.heapProfile.samplingIntervalBytes,
          pprof: o.heapPprof ? expand(o.heapPprof, this.#n, this.#start) : null,
          ...analyzeHeapProfile(located.heapProfile, { cpu: this.#cpuOf(located.profile) }),
        }
        : null,
    });
    return { report, located };
  }

  /** The CPU profile of this capture with its scope timeline, for the heap profile's scopes; null without one. */
  #cpuOf(profile) {
    return profile && this.#pprofContext ? { profile, scopeTimeline: this.#pprofContext.scopeTimeline } : null;
  }

  #meta(end, partial, reason) {
    const start = this.#start;
    const options = { ...this.#inner.options, ...this.#o };
    return { tool: 'rloop', version, node: process.version, v8: process.versions.v8, platform, arch, pid, thread: threadId, start, end, partial, reason, options };
  }

  #lagOptions() {
    return { enabled: this.#inner.options.lag, thresholdMs: this.#inner.options.lagThresholdMs };
  }

  #ioOptions() {
    return { enabled: this.#inner.options.io, thresholdMs: this.#inner.options.ioThresholdMs };
  }

  /**
   * The report draft (js/report/build.js) for the addon to finish if this thread's JS cannot;
   * null when no file was asked for. Only HTML asked: the JSON goes beside it, for `rloop report`.
   */
  #draft() {
    const o = this.#o;
    const path = o.json ? expand(o.json, this.#n, this.#start) : o.html ? expand(o.html, this.#n, this.#start).replace(/\.html?$/i, '') + '.json' : null;
    if (path === null || !permitted(path)) return null;
    const known = { meta: this.#meta(this.#start, true, null), windowMs: this.#inner.options.windowMs, totalsBefore: this.#totalsBefore };
    const c = { ...known, lag: this.#lagOptions(), io: this.#ioOptions(), heapStats: o.heapStats, profile: o.profile, heapProfile: o.heapProfile };
    return reportDraft(c, path, this.#monitor.listenerCount('error') > 0);
  }

  /**
   * The profile's analysis by scope, on the scope timeline moved to the profile's clock (µs):
   * every change of the charged scope, with the time the hot path read for it, and each idle
   * mark (false). The stalls' stacks come from the samples inside them, where there are some.
   */
  #study(profile, lag) {
    const { scopeTimeline, routes, keysDropped, offsetUs, epochOffsetUs } = profiler.onProfileClock(this.#takeTimeline());
    this.#pprofContext = { scopeTimeline, routes, keysDropped, thread: threadId, epochOffsetUs, periodUs: this.#o.profile.intervalUs };
    const studied = study(profile, { scopeTimeline, lagThresholdMs: this.#inner.options.lagThresholdMs });
    lag.events = profileStalls(lag.events, profile, studied.measured, { originMs: ORIGIN, offsetUs, scopeTimeline, frameOf });
    return studied;
  }

  /** Writes the files asked: the .cpuprofile V8's `profile`, the pprof files the `located` profiles. */
  #write(report, profile, { profile: located, heapProfile }) {
    const o = this.#o;
    const at = (name) => expand(o[name], this.#n, this.#start);
    const written = [];
    const write = (file, text) => {
      fs.writeFileSync(file, text);
      written.push(file);
    };
    if (o.json) write(at('json'), renderJson(report));
    if (o.html) write(at('html'), require('../report/html').renderHtml(report));
    if (o.cpuprofile && profile) write(at('cpuprofile'), JSON.stringify(profile));
    if (o.pprof && located) write(at('pprof'), renderPprof(located, this.#pprofContext));
    if (o.heapPprof && heapProfile) {
      const { routes = new Set(), keysDropped = 0, thread = threadId } = this.#pprofContext ?? {};
      const span = { startMs: report.meta.start, endMs: report.meta.end };
      write(at('heapPprof'), renderHeapPprof(heapProfile, { cpu: this.#cpuOf(located), routes, keysDropped, thread, samplingIntervalBytes: o.heapProfile.samplingIntervalBytes, ...span }));
    }
    if (written.length > 0) o[WRITTEN]?.(written);
  }
}

module.exports = { Capture };

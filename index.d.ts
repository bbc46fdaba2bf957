// Public API of rloop. Kept by hand beside js/index.js; binding.d.ts (generated) types the addon.
// Bad arguments: a TypeError or RangeError naming the option. Functions returning a promise
// reject with it and never throw; the others throw. An option given as undefined takes its default.

import { EventEmitter } from 'node:events';

export interface StartOptions {
  /** Length of a window in ms (10 – 3 600 000). Default 1000. */
  windowMs?: number;
  /** Complete windows kept for history() (1 – 86 400), within 4 MB: fewer when many scopes are charged in each. Default 60. */
  history?: number;
  /** Distinct scope names kept (1 – 1 000 000); more are charged to '(other)', each entry into one counted in scopesOverflowed (not kept). Default 10 000. */
  maxScopes?: number;
  /** Keys whose names are kept per window (the busiest; 0 – 1 000 000); the rest count as `dropped`. Default 10 000. */
  maxKeys?: number;
  /** Worst keys listed per scope and window (0 – 1000). Default 5. */
  worstKeys?: number;
  /** Keys charged at once; a key's slot is reused after this many newer keys (16 – 1 048 576; memory only for slots used, ≈ 350 bytes each). Default 65 536. */
  keySlots?: number;
  /** Lag tracking: each window's stretches (Window.lag), and 'lag' for each stall. Default true. */
  lag?: boolean;
  /** ms of busy loop without a poll that make a stall (1 – 3 600 000). Default 50. */
  lagThresholdMs?: number;
  /** @deprecated Alias of lagThresholdMs, accepted in 0.x; giving both is a TypeError. */
  lagThreshold?: number;
  /** Track async I/O and emit 'slowIO'; false installs nothing. Default true. */
  io?: boolean;
  /** ms an I/O operation takes to be slow (0 – 3 600 000). Default 500. */
  ioThresholdMs?: number;
  /** @deprecated Alias of ioThresholdMs, accepted in 0.x; giving both is a TypeError. */
  ioThreshold?: number;
  /** Serve Prometheus metrics from a Rust thread (docs/metrics.md); null or absent: none. Default null. */
  metrics?: MetricsOptions | null;
  /**
   * Scopes for code that has none: `http` charges each incoming request to `GET /route`, `timers`
   * a timer created outside any scope to `setInterval at file:line`. `true` for both; the app's
   * own scope always wins. Default false (zero-code: both).
   */
  autoScopes?: boolean | { http?: boolean; timers?: boolean };
}

export interface MetricsOptions {
  /** TCP port (0 – 65 535); 0 picks a free one (see `Monitor.metrics`). Required. */
  port: number;
  /** Default '127.0.0.1'. Any other address exposes scope names to whoever can reach it. */
  host?: string;
  /** Default '/metrics'. */
  path?: string;
  /** Scopes named per thread and scrape (the busiest since start; 1 – 10 000); the rest are `(other)`. Default 50. */
  topScopes?: number;
  /** Where set, every request needs `Authorization: Bearer <token>` (16 – 256 visible ASCII characters). Default null. */
  token?: string | null;
  /** Serve profiles at /debug/pprof/profile and /debug/pprof/heap, under the same rules. Default true. */
  pprof?: boolean;
}

/** Stops what promClient() or otel() registered. */
export interface MetricsAdapter {
  stop(): void;
}

export interface AutoScopeStats {
  /** Route names given, at most 500; `overflowed`: requests charged to 'HTTP (other routes)' past them. Null when off. */
  http: { routes: number; overflowed: number } | null;
  /** Call sites named, at most 1 000; `overflowed`: timers left unattributed past them. Null when off. */
  timers: { sites: number; overflowed: number } | null;
}

export interface ScopeOptions {
  /** A message id, request id...: busy time per key gets percentiles and worst keys. */
  key?: string | number;
}

export interface KeyStats {
  /** Keys charged in the window. */
  count: number;
  /** Keys past maxKeys: counted and in the percentiles, but not named. */
  dropped: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The busiest named keys, busiest first. */
  worst: { key: string; busyMs: number }[];
}

export interface ScopeWindow {
  name: string;
  /** busyMs / durationMs of the window. */
  elu: number;
  /** Exclusive busy time: nested scopes' time is theirs alone. */
  busyMs: number;
  /**
   * Of busyMs, what the thread ran, where the window's thread.cpuMs is known: busyMs less the time
   * the lookout thread saw taken from its callbacks (descheduled, throttled by a CPU quota, in a
   * system call) up to its readings of them, a sampled figure (docs/stalls.md). At most busyMs;
   * a window's scopes and unattributed together at most thread.cpuMs.
   */
  cpuMs?: number;
  /** Callbacks run in the scope, plus scope()/enter() entries. */
  calls: number;
  /** Present when the scope was entered with keys. */
  keys?: KeyStats;
}

export interface LagStats {
  /** Loop stretches (busy from waking to the next poll) in the window. */
  stretches: number;
  /** Stretches whose lag (length) was at least lagThresholdMs. */
  stalls: number;
  /** The lag of the window's stretches (all of them, not only stalls): median, p99 and max. */
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

/** Garbage collections of one kind, in a stall or a window. */
export interface GcKind {
  kind: 'major' | 'minor' | 'incremental' | 'weakcb';
  ms: number;
  count: number;
}

export interface Window {
  /** 1 for the first window of a monitor, then +1 per window. */
  seq: number;
  /** Epoch milliseconds. */
  start: number;
  end: number;
  durationMs: number;
  /** Only in a long capture's report: the closed windows this one stands for (≥ 2; docs/report-schema.md). */
  merged?: number;
  /**
   * The app's busy time: the sum of scopes and unattributed. `rloopMs`, where above 0, is rloop's
   * own work in the window (CPU profiles starting and stopping, a pulled profile answered), apart
   * from busyMs, elu and unattributed. On complete windows, where it can
   * be read (Linux): `cpuMs`, the thread's CPU time over the window (busyMs less it is busy time
   * it did not run, at least); `throttledMs`, what its cgroup's CPU quota throttled, where a
   * cgroup's cpu.stat counts it; `gc`, the window's garbage collections by kind, longest first
   * (one running across windows gives each its part, and counts in the one it ends in), where
   * they are known: with lag tracking on, not on Windows.
   */
  thread: { elu: number; busyMs: number; cpuMs?: number; throttledMs?: number; gc?: GcKind[]; rloopMs?: number };
  /** Busy time outside every scope. */
  unattributed: ScopeWindow;
  /** Scopes charged in the window, busiest first. '(other)' collects scopes past maxScopes. */
  scopes: ScopeWindow[];
  /** On complete windows of a monitor with lag tracking on. */
  lag?: LagStats;
}

/** The live window: the one open now, read so far (a callback still running is included). */
export interface LiveWindow extends Window {
  windowMs: number;
  /** Entries (scope(), enter()) into names past maxScopes, charged to '(other)', since start. */
  scopesOverflowed: number;
  /** Complete windows history() dropped before `history` newer ones were kept, to stay within its memory bound (4 MB). */
  historyDropped: number;
  /** The last complete window, or null before the first one closes. */
  last: Window | null;
}

export interface Totals {
  /** `rloopMs`: rloop's own work, apart from busyMs as in a window. */
  thread: { busyMs: number; rloopMs: number };
  unattributed: { name: string; busyMs: number; calls: number };
  /** Busiest first. */
  scopes: { name: string; busyMs: number; calls: number }[];
  scopesOverflowed: number;
}

export interface ThreadWindows {
  /** worker_threads.threadId of the monitored thread (0 for the main thread). */
  threadId: number;
  windowMs: number;
  current: Window;
  last: Window | null;
}

export interface Monitor extends EventEmitter {
  /** Rejects, never throws, on bad options or a stopped monitor. */
  capture(options?: CaptureOptions): Promise<Report>;
  /** A capture every `everyMs` ms; durationMs defaults to 10 000 or everyMs if shorter. Throws on bad options. */
  watch(options: CaptureOptions & { everyMs: number }): { stop(): void };
  /** Rejects, never throws. */
  captureHeapSnapshot(path: string, options?: { onProgress?: (p: { done: number; total: number }) => void }): Promise<string>;
  on(event: 'lag', listener: (event: LagEvent) => void): this;
  on(event: 'slowIO', listener: (event: SlowIoEvent) => void): this;
  on(event: 'heapStats', listener: (stats: HeapStats) => void): this;
  on(event: 'profile', listener: (p: { analysis: Analysis; profile: object }) => void): this;
  on(event: 'error', listener: (error: Error) => void): this;
  readonly windowMs: number;
  /** Where the metrics endpoint listens, or null (none, or stopped: the port is closed). */
  readonly metrics: { host: string; port: number; path: string } | null;
  /** True once stop() was called. */
  readonly stopped: boolean;
  /** The live window: the one open now, read so far, with the last complete one. */
  liveWindow(): LiveWindow;
  /** @deprecated 0.x alias of liveWindow(). */
  elu(): LiveWindow;
  /** The last `history` complete windows, oldest first. */
  history(): Window[];
  /** Busy time per scope since start, the live window included. */
  totals(): Totals;
  /** What the automatic scopes named so far. */
  autoScopes(): AutoScopeStats;
  /** Removes every hook and handle; idempotent. */
  stop(): void;
  on(event: 'window', listener: (window: Window) => void): this;
  once(event: 'window', listener: (window: Window) => void): this;
  off(event: 'window', listener: (window: Window) => void): this;
}

/** Starts attribution on the calling thread. Throws if this thread already has a monitor. */
export function start(options?: StartOptions): Monitor;
/** Runs fn with its busy time, and that of all async work it starts, charged to `name`. */
export function scope<T>(name: string, fn: () => T, options?: ScopeOptions): T;
/** What enter() returns: what was charged before it, for restore(). Opaque. */
export interface Previous {
  readonly __rloopPrevious: unique symbol;
}
/** Charges the rest of the current callback, and all it starts, to `name`; returns what was charged before. */
export function enter(name: string, options?: ScopeOptions): Previous;
/** Charges what an enter() replaced again, before the callback returns: the entry ends there. */
export function restore(previous: Previous): void;
/** This thread's running monitor, or null. */
export function monitor(): Monitor | null;
/** Every monitored thread's live and last window, from any thread. */
export function threads(): ThreadWindows[];

export interface Frame {
  functionName: string;
  url: string;
  /** 1-based; null for native code. */
  line: number | null;
  column: number | null;
  /** Where the code ran, when url, line and column are its original location from the app's source map. */
  generated?: GeneratedLocation;
}

/** A frame's location in the generated file (compiled, bundled) its code ran from. */
export interface GeneratedLocation { url: string; line: number | null; column: number | null }

export interface LagEvent {
  lagMs: number;
  /** Epoch ms the loop woke into the stall. */
  at: number;
  thread: number;
  /** What held the loop most; null: unattributed. */
  scope: string | null;
  key: string | null;
  /**
   * The blocking code's stack, innermost first; null on workers or when none could be taken.
   * As V8 gave it in the event; a report redacts its URLs (see SlowIoEvent.target).
   */
  stack: Frame[] | null;
  /**
   * Where `stack` came from: 'sampler', the stack sampler's interrupt (every 'lag' event);
   * 'profile', in a capture with `profile`, the heaviest of the profile's samples inside the
   * stall in its scope (right even inside JSON.parse, a regex or C++); null without a stack.
   */
  stackFrom: 'sampler' | 'profile' | null;
  /** When the lookout thread noticed it; null when too short to be seen while running. */
  noticedAfterMs: number | null;
  /** When the stack sampler's stack (stack or stackSeen) was taken, ms after the stall began; null: none was. */
  stackTakenAfterMs: number | null;
  /**
   * Frames taken during the stall that are not known to be the blocker's: taken after V8 came
   * back from code it cannot interrupt (JSON.parse, a C++ call), or while another scope ran.
   */
  stackSeen: Frame[] | null;
  /** Why stackSeen is not the blocker's stack. */
  stackNote: string | null;
  /**
   * In a capture's report, with stackFrom 'profile': the stack of the code the profile sampled
   * last in the stall and its scope before the blocker ran, other than the blocker's callers
   * (`stack` shows those): how the loop got to the blocking code. null: the stall began in it.
   */
  stackBefore?: Frame[] | null;
  /** Native work the blocker was in, when Node's own frames on the stack say (or, from a profile, its kind of work). */
  native: 'crypto' | 'zlib' | 'fs' | 'child_process' | 'module loading' | 'JSON' | 'regex' | 'GC' | null;
  /** Who ran inside the stall, busiest first (sampled every few ms by the lookout thread). */
  scopes: { scope: string | null; key: string | null; ms: number }[];
  /** The stretch that was running when rloop started (zero-code: the app's start-up). */
  atStart: boolean;
  /** The app's OpenTelemetry span active in the blocking code; null: none, or `stack` is not the blocker's. */
  trace: Trace | null;
  /** In a report the addon finished itself (meta.incomplete): the stall was still going on; lagMs so far. */
  ongoing?: boolean;
  /** ms of the stall that were rloop starting the capture's CPU profile (unattributed, not the app's). */
  rloopMs?: number;
  /**
   * CPU time the thread used in the stall, from `cpuFromMs` on: the rest it did not run
   * (throttled, waiting for a CPU, or in a system call). null: unknown (not Linux, or its start
   * was not read). Absent in older reports.
   */
  cpuMs?: number | null;
  /** Of the time the thread did not run, what its cgroup's CPU quota throttled (0 under none); null: unknown. */
  throttledMs?: number | null;
  /** ms into the stall from which cpuMs and throttledMs were measured: 0 for all of it. */
  cpuFromMs?: number | null;
  /** Garbage collections inside the stall, longest first; [] none; null: unknown (Windows). */
  gc?: GcKind[] | null;
}

export interface SlowIoEvent {
  type: 'http' | 'https' | 'fetch' | 'dns' | 'tcp' | 'http-in';
  method: string;
  /** Host, port and path; no credentials, query string, fragment or path parameters. */
  target: string;
  /** 'http-in' with automatic HTTP scopes: the request's route, `/users/:id` (the framework's template, else the path with identifiers collapsed; no method). */
  route?: string;
  /** Still in flight: `durationMs` so far. Emitted once, as the loop wakes past `ioThreshold`; a capture lists those still pending when it ends. */
  state?: 'pending';
  /** On the event of an operation's end: it was emitted before as pending. */
  reportedPending?: true;
  status?: number;
  /** The error's code, or its message with each URL in it redacted as targets are. */
  error?: string;
  durationMs: number;
  at: number;
  /** Outgoing operations that ended: ms the loop had run in the stretch that read the end, before reading it (since it woke). */
  stretchMs?: number;
  /** The caller's frames, user code first. */
  stack: Frame[];
  scope: string | null;
  key: string | null;
  /** The app's OpenTelemetry span active where the operation was issued, or null. */
  trace: Trace | null;
}

/** An OpenTelemetry span's ids (W3C Trace Context), read from the app's @opentelemetry/api. */
export interface Trace {
  traceId: string;
  spanId: string;
  traceFlags: number;
}

export interface HeapStats {
  at: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
}

export interface CaptureOptions {
  /** ms (1 – 604 800 000), or Infinity: until stop() or the process ends. Default 10 000. */
  durationMs?: number;
  /** A CPU profile; `intervalUs`: µs between samples (10 – 1 000 000), default 100. Default false. */
  profile?: boolean | { intervalUs?: number };
  /**
   * Sample allocations (V8's sampling heap profiler): bytes by function, and by scope with `profile`;
   * `samplingIntervalBytes`: bytes between samples (1024 – 1 073 741 824), default 32 768. Default false.
   */
  heapProfile?: boolean | { samplingIntervalBytes?: number };
  /** Heap stats at start and end, and a memory timeline. Default true. */
  heapStats?: boolean;
  /**
   * The paths below, or false: {pid}, {time} and {n} are filled in. The folder must exist and be
   * writable (RangeError). A heap snapshot taken as the capture ends. Default false.
   */
  heapSnapshot?: string | false;
  /** The report as JSON. Default false. */
  json?: string | false;
  /** The self-contained HTML report. Default false. */
  html?: string | false;
  /** The raw .cpuprofile (with `profile`). Default false. */
  cpuprofile?: string | false;
  /** The profile as gzipped pprof, samples labelled `scope`, `route`, `thread` (docs/cpu-profile.md). Default false. */
  pprof?: string | false;
  /** The allocations sampled (heapProfile) as gzipped pprof, labelled `scope`, `route`, `thread`. Default false. */
  heapPprof?: string | false;
}

/** Schema rloop-report/1: see docs/report-schema.md and schema/rloop-report-1.schema.json. */
export interface Report {
  schema: 'rloop-report/1';
  meta: {
    tool: 'rloop'; version: string; node: string; v8: string; platform: string; arch: string;
    pid: number; thread: number; start: number; end: number; durationMs: number;
    partial: boolean; reason: null | 'exit' | 'uncaughtException' | 'SIGTERM' | 'SIGINT' | 'terminated' | 'stopped';
    /**
     * Present when the addon finished the report without the thread's JS (its loop blocked at a
     * signal, a worker terminated): why, and the parts only JS holds, left empty or null.
     */
    incomplete?: { reason: string; missing: ('io.aggregates' | 'heap' | 'profile' | 'heapProfile')[] };
    /** Exceptions of rloop's own swallowed on this thread during the capture, never thrown into the app; absent with `incomplete` and in older reports. */
    swallowed?: number;
    /**
     * Present when a script had a source map: how many scripts' frames are at their original
     * location, and the maps left aside and why (at most 20; the rest counted in `dropped`).
     */
    sourceMaps?: { scripts: number; skipped: { url: string; reason: string }[]; dropped: number };
    options: Record<string, unknown>;
  };
  elu: {
    windowMs: number;
    /** `rloopMs`: rloop's own work during the capture, left out of busyMs, elu and unattributed (docs/report-schema.md). */
    thread: { busyMs: number; elu: number; rloopMs?: number };
    unattributed: { busyMs: number; elu: number; calls: number };
    scopes: { name: string; busyMs: number; elu: number; calls: number }[];
    windows: Window[];
  };
  lag: { enabled: boolean; thresholdMs: number; events: LagEvent[]; dropped: number; summary: { stalls: number; stretches: number; p99Ms: number; maxMs: number } };
  io: { enabled: boolean; thresholdMs: number; events: SlowIoEvent[]; dropped: number; aggregates: IoAggregate[] };
  heap: null | {
    start: HeapStats; end: HeapStats; timeline: HeapStats[]; dropped: number; snapshot: null | { path: string; bytes: number };
    /** Memory as the app's start-up ended (the loop's first wake), when the capture began before the loop ran; else null. */
    startUp?: HeapStats | null;
    /** Heap used after the capture's GCs by kind (docs/report-schema.md); null where V8's GC callbacks are not installed. */
    afterGc?: null | Record<'major' | 'minor', { count: number; samples: { at: number; heapUsed: number }[] }>;
  };
  profile: null | { intervalUs: number; file: string | null; pprof?: string | null; analysis: Analysis; flame: Flame };
  /** With `heapProfile` (docs/heap.md): bytes allocated in the capture by function, and by scope with a CPU profile. */
  heapProfile?: null | HeapProfile;
  /** Added by the Node-RED plugin: the nodes behind scopes named `node:<id>`. */
  nodered?: { nodes: Record<string, { name: string; type: string; flow: string; subflow?: string; messages?: number }> };
}

export interface HeapProfile {
  samplingIntervalBytes: number;
  /** The pprof written (heapPprof), or null. */
  pprof: string | null;
  /** Bytes allocated (V8's estimate from its samples), samples taken, and the bytes allocated for rloop itself (in no row below). */
  bytes: number;
  samples: number;
  rloopBytes: number;
  /** The top 20 allocating functions. */
  functions: { functionName: string; url: string; line: number | null; column: number | null; bytes: number; percent: number; samples: number; package?: string }[];
  /**
   * By scope, from the CPU profile's samples in the same stacks: null without a CPU profile.
   * `several`: bytes whose stacks ran in more than one scope; `unsampled`: in stacks the CPU profile never sampled.
   */
  scopes: null | { byScope: { scope: string | null; bytes: number; percent: number }[]; several: number; unsampled: number };
}

/** The profile's call tree, pruned (docs/report-schema.md): `value` in ms, the node and all under it. */
export interface Flame { nodes: number; truncated: number; root: FlameNode | null }
export interface FlameNode {
  name: string; url: string; line: number | null; column: number | null; generated?: GeneratedLocation; category: string; value: number; children: FlameNode[];
}

export interface IoStat { count: number; totalMs: number; avgMs: number; maxMs: number; errors: number }
/** `route`: `target` is an incoming request's route, the requests to all its paths summed. */
export interface IoAggregate extends IoStat { type: SlowIoEvent['type']; targets: (IoStat & { target: string; route?: true })[] }

export type PatternId = 'cpu-hog' | 'long-calls' | 'json-heavy' | 'regex-heavy' | 'gc-pressure' | 'sync-io' | 'crypto-heavy' | 'healthy';

export interface PackageShare {
  name: string;
  kind: 'package' | 'app' | 'node' | 'native' | 'gc' | 'program';
  selfMs: number;
  /** of the profile's busy (non-idle) time */
  busyPercent: number;
  topFunctions: (Frame & { selfMs: number })[];
  packages?: number;
}

export interface Analysis {
  durationMs: number;
  samples: number;
  intervalUs: number;
  /** `selfPercent` of the whole profile; `busyPercent` of its busy (non-idle) time, the basis of `patterns[].percent` (absent in older reports). */
  heavyFunctions: (Frame & { selfMs: number; selfPercent: number; busyPercent?: number; category: string; /** the npm package whose file it is in */ package?: string })[];
  callStacks: (Frame & { selfMs: number; stacks: { frames: Frame[]; ms: number; percent: number }[] })[];
  categories: Record<string, number>;
  patterns: { id: PatternId; severity: 'info' | 'warning' | 'critical'; message: string; location: Frame | null; suggestion: string | null; percent: number }[];
  /**
   * Samples by the scope in force at their time; `name: null` unattributed, '(outside callbacks)' the loop between
   * rloop's idle mark and the next callback. `busyMs`: the scope's busy time from the first sample on, by the same
   * changes of scope (absent for '(outside callbacks)' and in older reports); `ms` falls short of it by the samples missed.
   */
  scopes: { name: string | null; samples: number; ms: number; percent: number; busyMs?: number; topFunctions: (Frame & { selfMs: number })[] }[];
  /**
   * Busy time by whose code ran, heaviest first, together all of it: each npm package (`name` the package), the app's
   * files, Node's modules, native code no JavaScript called, GC and (program). Native frames count for their caller.
   * Past 30 packages the rest are one '(other packages)' entry, `packages` how many (absent in older reports).
   */
  packages?: PackageShare[];
  /** User functions whose single calls lasted `thresholdMs` or more (absent in older reports). */
  longCalls?: { thresholdMs: number; functions: (Frame & { calls: number; longestMs: number; ms: number; percent: number })[] };
}

export interface Comparison {
  verdict: 'IMPROVED' | 'REGRESSED' | 'MIXED' | 'NO CHANGE';
  patterns: { resolved: Analysis['patterns']; new: Analysis['patterns']; persistent: (Analysis['patterns'][number] & { basePercent: number })[] };
  functions: Record<'regressed' | 'improved', (Frame & { basePercent: number; headPercent: number; deltaPoints: number })[]>;
  scopes: { name: string; baseElu: number; headElu: number; deltaPoints: number }[];
  lag: { baseStalls: number; headStalls: number; baseMaxMs: number; headMaxMs: number };
  /** What the two reports cannot be compared on (a CPU profile only one has), as sentences; it counts for neither side. */
  notCompared: string[];
}

/** `automatic`: the scope was given by automatic scopes (docs/api.md: Automatic scopes), not the app. */
export function current(): { scope: string | null; key: string | null; automatic: boolean };
export function heapStats(): HeapStats;
/** Rejects, never throws. */
export function captureHeapSnapshot(path: string, options?: { onProgress?: (p: { done: number; total: number }) => void }): Promise<string>;
/** `lagThresholdMs` (default 50): a single call this long is a long call. */
export function analyze(profile: object, options?: { scopeTimeline?: [number, string | null | false][]; lagThresholdMs?: number }): Analysis;
export function compare(base: Report, head: Report): Comparison;
/** A report as one self-contained HTML page. */
export function renderHtml(report: Report): string;
/** rloop's metrics in a prom-client registry (its default registry if omitted); same names and labels as the endpoint. */
export function promClient(register?: object, options?: { topScopes?: number }): MetricsAdapter;
/** rloop's metrics as observable instruments on `meterProvider` (or @opentelemetry/api's global one), the stall histogram as a Histogram. */
export function otel(meterProvider?: object, options?: { topScopes?: number }): MetricsAdapter;
/**
 * The running monitor's stalls and slow I/O as OpenTelemetry log records on `loggerProvider` (or
 * @opentelemetry/api-logs' global one), each linked to the span it happened in. TypeError
 * without a running monitor.
 */
export function otelLogs(loggerProvider?: object): MetricsAdapter;
/**
 * The live view of `rloop top`, of this process, in its terminal (both streams TTYs): keystrokes
 * s, p, q; Ctrl-C ends it and raises SIGINT. `monitor`: the running one by default, else one started
 * for the view. `done` resolves once the terminal is restored.
 */
export function top(options?: { monitor?: Monitor; stdin?: NodeJS.ReadStream; stdout?: NodeJS.WriteStream }): { stop(): Promise<void>; done: Promise<void> };

// Public API of rloop. Kept by hand beside js/index.js; binding.d.ts (generated) types the addon.

import { EventEmitter } from 'node:events';

export interface StartOptions {
  /** Length of a window in ms (10 – 3 600 000). Default 1000. */
  windowMs?: number;
  /** Complete windows kept for history() (1 – 86 400). Default 60. */
  history?: number;
  /** Distinct scope names; more are charged to '(other)' and counted in scopesOverflowed. Default 10 000. */
  maxScopes?: number;
  /** Keys whose names are kept per window (the busiest); the rest count as `dropped`. Default 10 000. */
  maxKeys?: number;
  /** Worst keys listed per scope and window. Default 5. */
  worstKeys?: number;
  /** Keys charged at once; a key's slot is reused after this many newer keys (16 – 4 194 304). Default 65 536. */
  keySlots?: number;
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
  /** Callbacks run in the scope, plus scope()/enter() entries. */
  calls: number;
  /** Present when the scope was entered with keys. */
  keys?: KeyStats;
}

export interface Window {
  /** 1 for the first window of a monitor, then +1 per window. */
  seq: number;
  /** Epoch milliseconds. */
  start: number;
  end: number;
  durationMs: number;
  /** The thread's busy time: the sum of scopes and unattributed. */
  thread: { elu: number; busyMs: number };
  /** Busy time outside every scope. */
  unattributed: ScopeWindow;
  /** Scopes charged in the window, busiest first. '(other)' collects scopes past maxScopes. */
  scopes: ScopeWindow[];
}

/** The current window, read live (a callback still running is included so far). */
export interface LiveWindow extends Window {
  windowMs: number;
  /** Scope names charged to '(other)' since start. */
  scopesOverflowed: number;
  /** The last complete window, or null before the first one closes. */
  last: Window | null;
}

export interface Totals {
  thread: { busyMs: number };
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
  readonly windowMs: number;
  /** True once stop() was called. */
  readonly stopped: boolean;
  elu(): LiveWindow;
  /** The last `history` complete windows, oldest first. */
  history(): Window[];
  /** Busy time per scope since start, the current window included. */
  totals(): Totals;
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
/** Charges the rest of the current callback, and all it starts, to `name`. */
export function enter(name: string, options?: ScopeOptions): void;
/** This thread's running monitor, or null. */
export function monitor(): Monitor | null;
/** Every monitored thread's live and last window, from any thread. */
export function threads(): ThreadWindows[];

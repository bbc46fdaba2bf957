'use strict';
// The addon, through the loader `napi build` generates (local build or platform package).
// Reads that return bulk data come across N-API as JSON strings, parsed here: converting a
// large native value into JS objects directly hits napi-rs's limit of a million values.

const binding = load();

/** The loader's binding; where Node's permission model forbids addons, an error that says so. */
function load() {
  try {
    return require('../binding.js');
  } catch (e) {
    // The loader's own message blames npm and suggests reinstalling: not the cause here.
    for (let c = e; c != null; c = c.cause) {
      if (c.code === 'ERR_DLOPEN_DISABLED' || /loading addons is disabled/.test(c.message)) {
        throw new Error('rloop: this process may not load native addons (Node\'s permission model): run node with --allow-addons', { cause: e });
      }
    }
    throw e;
  }
}

// The JSON of a large read is freed by the time it is parsed, but glibc's malloc keeps its
// pages (as much as the read took, for good) unless asked: after a read over 1 MB, give them back.
const TRIM_OVER = 1 << 20;
function parse(json) {
  const value = JSON.parse(json);
  if (json.length > TRIM_OVER) binding.trimMalloc();
  return value;
}

class NativeMonitor {
  #n;
  constructor(...args) {
    this.#n = new binding.NativeMonitor(...args);
  }
  scopeAdder() { return this.#n.scopeAdder(); }
  keyBinder() { return this.#n.keyBinder(); }
  keyRescoper() { return this.#n.keyRescoper(); }
  liveWindow() { return parse(this.#n.liveWindow()); }
  history(after) { return parse(this.#n.history(after)); }
  totals() { return parse(this.#n.totals()); }
  /** `fn(event)` for each lag event, or null: the thread-safe function lives only while set. */
  onLag(fn) { this.#n.onLag(fn ? (json) => fn(parse(json)) : null); }
  /** `draft`: the report draft (js/report/build.js), or null. */
  record(draft) { return this.#n.record(draft === null ? null : JSON.stringify(draft)); }
  /** Adds a slow I/O event to recording `id` (kept only for one with a draft). */
  recordIo(id, event) { this.#n.recordIo(id, JSON.stringify(event)); }
  /** `{ windows, lag: { events, dropped } }`, or null for an unknown id. */
  takeRecording(id) {
    const json = this.#n.takeRecording(id);
    return json === null ? null : parse(json);
  }
  /** `{ major, minor }`, each `{ count, heapUsed }` after the newest GC of the kind; null where unknown. */
  heapAfterGc() { return this.#n.heapAfterGc(); }
  lastSeq() { return this.#n.lastSeq(); }
  nextDue() { return this.#n.nextDue(); }
  stop() { this.#n.stop(); }
}

module.exports = { ...binding, NativeMonitor, threads: () => parse(binding.threads()) };

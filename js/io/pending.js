'use strict';
// I/O that never returns is the slowest I/O. Operations in flight, oldest first: one overdue by
// the threshold is emitted as soon as the loop next wakes (state 'pending'), once, and a
// capture's report lists those still pending when it ends. Bounded: past MAX_PENDING operations
// in flight, later ones are not tracked (they are still timed when they end) and are counted.

const MAX_PENDING = 10000;

class Pending {
  #recs = new Set(); // records in flight, in start order
  #told = new Set(); // those already emitted as pending
  #untracked = 0;

  /** Tracks `rec` (with `rec.describe()` → [method, target]); false when full. */
  add(rec) {
    if (this.#recs.size >= MAX_PENDING) {
      this.#untracked++;
      return false;
    }
    this.#recs.add(rec);
    return true;
  }

  /** Stops tracking `rec`; true if it was emitted as pending. */
  delete(rec) {
    this.#recs.delete(rec);
    return this.#told.delete(rec);
  }

  /** Calls `onOverdue(rec, ms)` for each operation newly `thresholdMs` old; returns when the next one will be. */
  overdue(now, thresholdMs, onOverdue) {
    for (const rec of this.#recs) {
      const ms = now - rec.t0;
      if (ms < thresholdMs) return rec.t0 + thresholdMs; // the rest are younger
      if (!this.#told.has(rec)) {
        this.#told.add(rec);
        onOverdue(rec, ms);
      }
    }
    return null;
  }

  /** `[rec, ms]` of the operations in flight for `thresholdMs` or more at `now`. */
  older(now, thresholdMs) {
    const out = [];
    for (const rec of this.#recs) {
      if (now - rec.t0 < thresholdMs) break;
      out.push([rec, now - rec.t0]);
    }
    return out;
  }

  /** Operations that were not tracked because MAX_PENDING were in flight. */
  get untracked() {
    return this.#untracked;
  }
}

module.exports = { Pending, MAX_PENDING };

'use strict';
// The scope timeline of a CPU profile: every change of the charged scope, as the hot path makes
// it (js/attribution/charge.js), with the time it read for the change, and the addon's idle marks. The same
// transitions as busy time, so a profile sample at time t is charged to the scope busy time
// charges at t, and the key of a keyed context with its scope. Recorded only while a capture
// with a profile runs; bounded: changes past MAX are dropped and counted, and the timeline says
// from when it knows nothing; keys past MAX_KEYS distinct ones are dropped and counted, their
// scope kept.

const CHUNK = 1 << 15; // transitions per chunk (512 KB)
const MAX = 1 << 21; // transitions kept at most (32 MB), ≈ 20 s at 100 000 changes a second
const MAX_KEYS = 1 << 15; // distinct keys kept at most, each of at most 256 characters (js/options.js scopeKey)

/** A scope slot, or one of these. */
const OUTSIDE_CALLBACKS = -1; // the loop outside callbacks, from the idle mark until the next callback
const FULL = -2; // the timeline is full: nothing is known from here on

class Timeline {
  #chunks = [new Float64Array(2 * CHUNK)];
  #keys = []; // by chunk, made at its first key: each transition's key as 1 + its index in #keyNames, 0 none
  #keyNames = [];
  #keyIndex = new Map(); // key -> 1 + its index in #keyNames
  #n = 0;
  dropped = 0;
  keysDropped = 0; // transitions whose key was past MAX_KEYS: logged with their scope alone

  /** `slot` charged from `t` (performance.now() ms), in the context of `key` (a string) or of none (undefined). */
  add(t, slot, key) {
    let n = this.#n;
    // Out of order only when rloop's own work at a wake switched inside the switch that woke
    // it (js/attribution/charge.js woke()): the outer switch's charge stands, so the inner ones go.
    while (n > 0 && this.#time(n - 1) > t) n--;
    if (n >= MAX) {
      this.dropped++;
      return;
    }
    const chunk = n >> 15;
    if (chunk === this.#chunks.length) this.#chunks.push(new Float64Array(2 * CHUNK));
    const c = this.#chunks[chunk];
    const i = 2 * (n & (CHUNK - 1));
    c[i] = t;
    c[i + 1] = n + 1 === MAX ? FULL : slot;
    const k = key === undefined || n + 1 === MAX ? 0 : this.#keyOf(key);
    // A chunk with a key lane writes every transition's: an earlier one may have left a key at n.
    if (k !== 0 || this.#keys[chunk] !== undefined) (this.#keys[chunk] ??= new Int32Array(CHUNK))[n & (CHUNK - 1)] = k;
    this.#n = n + 1;
  }

  #keyOf(key) {
    let k = this.#keyIndex.get(key);
    if (k === undefined) {
      if (this.#keyNames.length >= MAX_KEYS) {
        this.keysDropped++;
        return 0;
      }
      k = this.#keyNames.push(key);
      this.#keyIndex.set(key, k);
    }
    return k;
  }

  #time(k) {
    return this.#chunks[k >> 15][2 * (k & (CHUNK - 1))];
  }

  /** The transitions from the `from`-th on, as `[t, slot]`, or `[t, slot, key]` in a keyed context. */
  entries(from = 0) {
    const out = [];
    for (let k = from; k < this.#n; k++) {
      const c = this.#chunks[k >> 15];
      const i = 2 * (k & (CHUNK - 1));
      const key = this.#keys[k >> 15]?.[k & (CHUNK - 1)] ?? 0;
      out.push(key === 0 ? [c[i], c[i + 1]] : [c[i], c[i + 1], this.#keyNames[key - 1]]);
    }
    return out;
  }

  get length() {
    return this.#n;
  }
}

module.exports = { Timeline, OUTSIDE_CALLBACKS, FULL, MAX_KEYS };

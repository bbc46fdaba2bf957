'use strict';
// Contexts found by asyncId instead of on the resource, for the hooks' `before` (js/attribution/by-tag.js, by-context-frame.js).
//
// The ring: the contexts of the last RING resources by asyncId. With the init hook it is written
// for every resource, and `before` finds most there instead of looking the tag up on the
// resource: on I/O that lookup sees many kinds of resource, most of them untagged, and cost
// ≈ 5 000 instructions an HTTP request (bench/instructions.js); the ring costs ≈ 2 % more on
// setImmediate and awaits, where the lookup is cheap. An older resource falls back to its tag.
// Where the scope travels by AsyncContextFrame, only retag() writes it.

const RING = 1 << 14;
const ids = new Float64Array(RING).fill(-1);
const contexts = new Array(RING);

/** Contexts by asyncId of resources held weakly: few, pruned of the dead as they double. */
class WeakContexts {
  #all = new Map(); // asyncId -> { ctx, ref }
  #pruneAt = 64;

  get size() {
    return this.#all.size;
  }

  get(asyncId) {
    return this.#all.get(asyncId)?.ctx;
  }

  /** `ref`: a WeakRef of the resource. */
  set(asyncId, ctx, ref) {
    if (this.#all.size >= this.#pruneAt) {
      for (const [id, e] of this.#all) if (e.ref.deref() === undefined) this.#all.delete(id);
      this.#pruneAt = Math.max(64, this.#all.size * 2);
    }
    this.#all.set(asyncId, { ctx, ref });
  }

  clear() {
    this.#all.clear();
  }
}

/** Empties the ring: every entry `root`. */
function clearRing(root) {
  ids.fill(-1);
  contexts.fill(root);
}

module.exports = { RING, ids, contexts, clearRing, WeakContexts };

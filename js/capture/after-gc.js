'use strict';
// The heap after GCs during a capture, what heap used between GCs hides under garbage: after a
// major (mark-compact) GC the heap holds what is live; after a minor GC, what outlived the young
// generation (promoted objects, a leak among them) and no young garbage. Heap growth is judged
// on these (js/report/facts.js). The addon keeps the heap after the newest GC of each kind,
// from V8's GC epilogue (src/runtime/heap_after_gc.rs); it is read as the heap timeline samples,
// so a sample's `at` is that read, at most a timeline step after its GC, and of the GCs of a
// kind between two reads only the newest is seen.

const { epochMs } = require('../clock');

const MAX_SAMPLES = 256; // a kind's, when full: every other one goes, the first and the newest stay

/**
 * Starts recording from `read()`, the addon's `{ major, minor }` (each `{ count, heapUsed }`)
 * or null where it records none: `{ read(), stop() }`, or null then.
 */
function afterGc(readAddon) {
  const first = readAddon();
  if (first === null) return null;
  const kinds = { major: kind(first.major), minor: kind(first.minor) };
  const read = () => {
    const now = readAddon();
    if (now === null) return;
    const at = epochMs();
    for (const name of ['major', 'minor']) {
      const k = kinds[name];
      const { count, heapUsed } = now[name];
      if (count === k.seen) continue;
      k.count += count - k.seen;
      k.seen = count;
      k.samples.push({ at, heapUsed });
      if (k.samples.length > MAX_SAMPLES) k.samples.splice(0, k.samples.length, ...k.samples.filter((_, i) => i % 2 === 0 || i === k.samples.length - 1));
    }
  };
  return {
    read,
    /** Stops; `{ major, minor }`, each `{ count, samples }`: how many ran in the capture, and the heap after them, oldest first. */
    stop() {
      read();
      const out = (k) => ({ count: k.count, samples: k.samples });
      return { major: out(kinds.major), minor: out(kinds.minor) };
    },
  };
}

/** A kind's record, counting from the addon's count `seen` as the capture began. */
const kind = ({ count }) => ({ seen: count, count: 0, samples: [] });

module.exports = { afterGc };

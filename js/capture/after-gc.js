'use strict';
// The heap after GCs during a capture, what heap used between GCs hides under garbage: after a
// major (mark-compact) GC the heap holds what is live; after a minor GC, what outlived the young
// generation (promoted objects, a leak among them) and no young garbage. Heap growth is judged
// on these (js/report/facts.js). Node's GCProfiler (node:v8) reads V8's heap statistics in its GC
// callbacks: no async resource, no timer. Its record grows with every GC, so it is read and
// restarted as the heap timeline samples: a sample's `at` is that read, at most a timeline step
// after its GC, and of the minor GCs between two reads only the last is kept.

const v8 = require('node:v8');
const { epochMs } = require('../clock');

const MAX_SAMPLES = 256; // a kind's, when full: every other one goes, the first and the newest stay
const KIND = { MarkSweepCompact: 'major', Scavenge: 'minor', MinorMarkSweep: 'minor', MinorMarkCompact: 'minor' };

/** Starts recording: `{ read(), stop() }`, or null where Node has no GCProfiler. */
function afterGc() {
  if (typeof v8.GCProfiler !== 'function') return null;
  let profiler = started();
  const kinds = { major: { count: 0, samples: [] }, minor: { count: 0, samples: [] } };
  const read = () => {
    if (profiler === null) return;
    const record = profiler.stop();
    profiler = started();
    const at = epochMs();
    const last = { major: [], minor: [] };
    for (const s of record?.statistics ?? []) {
      const kind = KIND[s.gcType];
      const heapUsed = s.afterGC?.heapStatistics?.usedHeapSize;
      if (kind === undefined || typeof heapUsed !== 'number') continue;
      kinds[kind].count++;
      last[kind].push({ at, heapUsed });
    }
    keep(kinds.major.samples, last.major);
    keep(kinds.minor.samples, last.minor.slice(-1));
  };
  return {
    read,
    /** Stops; `{ major, minor }`, each `{ count, samples }`: how many ran, and the heap after them, oldest first. */
    stop() {
      read();
      profiler?.stop();
      profiler = null;
      return kinds;
    },
  };
}

function started() {
  const p = new v8.GCProfiler();
  p.start();
  return p;
}

/** Adds `more` to `samples`, thinning it to every other one (the newest kept) when full. */
function keep(samples, more) {
  for (const s of more) {
    samples.push(s);
    if (samples.length > MAX_SAMPLES) samples.splice(0, samples.length, ...samples.filter((_, i) => i % 2 === 0 || i === samples.length - 1));
  }
}

module.exports = { afterGc };

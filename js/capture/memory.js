'use strict';
// A capture's memory: heap stats as it begins and as it ends, the timeline between, and the heap
// after GCs (js/capture/after-gc.js), read as the timeline samples.

const heap = require('./heap');
const { afterGc } = require('./after-gc');

const EVERY_MS = 1000;

/** Starts recording: `onSample(stats)` hears each timeline sample; `heapAfterGc()` reads the addon's record. */
function memoryRecord(onSample, heapAfterGc) {
  const start = heap.stats();
  const gcs = afterGc(heapAfterGc);
  const timeline = heap.timeline({
    everyMs: EVERY_MS,
    onSample: (s) => {
      gcs?.read();
      onSample(s);
    },
  });
  return {
    /** Heap stats now, for the capture's end (read before its profiles stop). */
    end: () => heap.stats(),
    /** Stops recording: the report's `heap`, ending at `end`. */
    stop(end) {
      timeline.stop();
      return { start, end, timeline: timeline.samples(), dropped: timeline.dropped, snapshot: null, startUp: timeline.startUp, afterGc: gcs?.stop() ?? null };
    },
  };
}

module.exports = { memoryRecord };

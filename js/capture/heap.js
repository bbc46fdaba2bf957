'use strict';
// Heap: memory stats, a bounded memory timeline, and heap snapshots streamed to disk.

const fs = require('node:fs');
const { performance } = require('node:perf_hooks'); // not the global: fake timers replace that one (js/clock.js)
const { epochMs } = require('../clock');
const { describe, integerIn, plainObject, knownOnly } = require('../validate');
const { wakeAt, stopWaking } = require('../attribution/wakers');

/** This thread's memory now, in bytes: the process RSS and this thread's V8 heap. */
function stats() {
  const { rss, heapTotal, heapUsed, external, arrayBuffers } = process.memoryUsage();
  return { at: epochMs(), rss, heapTotal, heapUsed, external, arrayBuffers };
}

const TIMELINE_LIMITS = Object.freeze({ everyMs: [10, 3600000], max: [1, 1000000] });

/** `options` as an object with only `known` keys, and `callback` a function when given. */
function optionsOf(what, options, known, callback) {
  const given = knownOnly(what, plainObject(`${what} options`, options), known);
  if (given[callback] !== undefined && typeof given[callback] !== 'function') {
    throw new TypeError(`rloop: option '${callback}' must be a function, got ${describe(given[callback])}`);
  }
  return given;
}

/**
 * Samples stats() into a ring of the last `max` samples (older ones are dropped and counted in
 * `dropped`) as the monitored loop wakes, at most every `everyMs`: no timer, so none for the
 * app's own hooks to see, and no sample while the loop idles (nothing allocates then) or is
 * blocked. Needs this thread's monitor running (js/attribution/charge.js). Begun before the event loop ran
 * (zero-code's preload, or the main module), its first sample, at the loop's first wake, is the
 * memory as the app's start-up ended: `startUp` (else null), whatever the ring drops.
 */
function timeline(options) {
  const given = optionsOf('timeline()', options, ['everyMs', 'max', 'onSample'], 'onSample');
  const everyMs = given.everyMs === undefined ? 1000 : integerIn('everyMs', given.everyMs, TIMELINE_LIMITS.everyMs);
  const max = given.max === undefined ? 3600 : integerIn('max', given.max, TIMELINE_LIMITS.max);
  const { onSample } = given;
  const ring = [];
  let taken = 0;
  let next = -Infinity;
  let startUp = performance.nodeTiming.loopStart >= 0 ? null : undefined; // undefined: to take
  const sample = (now) => {
    if (now >= next) {
      next = now + everyMs;
      const s = stats();
      if (startUp === undefined) startUp = s;
      ring[taken % max] = s;
      taken++;
      if (onSample) onSample(s);
    }
    return next;
  };
  wakeAt(sample);
  return {
    /** The samples kept, oldest first. */
    samples: () => {
      const head = taken % max;
      return taken <= max ? ring.slice() : ring.slice(head).concat(ring.slice(0, head));
    },
    get dropped() {
      return Math.max(0, taken - max);
    },
    get startUp() {
      return startUp ?? null;
    },
    stop: () => stopWaking(sample),
  };
}

// The snapshot header gives the totals progress counts against, and the fields of a node and of
// an edge: the nodes and edges arrays are flat lists of numbers, `node_fields.length` a node.
const HEADER_COUNTS = /"node_count":(\d+),"edge_count":(\d+)/;
const FIELDS = (name) => new RegExp(`"${name}":\\[([^\\]]*)\\]`);
const NODE_FIELDS = FIELDS('node_fields');
const EDGE_FIELDS = FIELDS('edge_fields');
const NODES_START = '"nodes":[';

/**
 * Progress over the serialized snapshot: `done` counts the nodes and edges written, of `total`
 * from the header, from the numbers written (the commas between them) in the nodes array, then
 * the edges array. Counting lines would be simpler, but only V8 up to Node 22 puts each node and
 * edge on its own line; from Node 24 the arrays have no line breaks at all. Reported at most
 * every 1 %; `done` stays below `total` until the last chunk (the string table, written last, is
 * not counted).
 */
function progressOf(onProgress) {
  let total = -1;
  let nodes = 0;
  let nodeFields = 1;
  let edgeFields = 1;
  let values = -1; // commas seen since the nodes array opened; -1 before it opens
  let done = 0;
  let next = 0;
  return {
    chunk(text) {
      let from = 0;
      if (total === -1) {
        const [, n, e] = HEADER_COUNTS.exec(text);
        nodes = Number(n);
        total = nodes + Number(e);
        nodeFields = NODE_FIELDS.exec(text)[1].split(',').length;
        edgeFields = EDGE_FIELDS.exec(text)[1].split(',').length;
      }
      if (values === -1) {
        const at = text.indexOf(NODES_START);
        if (at === -1) return;
        values = 0;
        from = at + NODES_START.length;
      }
      // Stops counting once nothing more can be learnt (the strings that follow hold commas too).
      const limit = nodes * nodeFields + (total - nodes) * edgeFields;
      for (let i = text.indexOf(',', from); i !== -1 && values < limit; i = text.indexOf(',', i + 1)) values++;
      const written = values < nodes * nodeFields
        ? Math.floor(values / nodeFields)
        : nodes + Math.floor((values - nodes * nodeFields) / edgeFields);
      done = Math.max(done, Math.min(written, total - 1));
      if (done >= next) {
        next = done + Math.ceil(total / 100);
        onProgress({ done, total });
      }
    },
    end() {
      onProgress({ done: total, total });
    },
  };
}

/** Writes all of `text` (the serializer emits ASCII only: chars are bytes). */
function writeAll(fd, text) {
  for (let n = fs.writeSync(fd, text); n < text.length; n += fs.writeSync(fd, text.slice(n)));
}

// Why an in-process inspector session, each chunk written with writeSync as it arrives: the
// session delivers HeapProfiler chunks (100 KB) synchronously while V8 serializes, so each is on
// disk and garbage before the next exists. v8.getHeapSnapshot() also serializes in one
// synchronous call, but into a Readable the file stream cannot drain until that call returns:
// the whole serialized snapshot sits in memory. Peak extra RSS measured on Node 20, against
// v8.writeHeapSnapshot() (V8 writing from C++, which has no progress): 307 MB heap, 348 MB file:
// +904 MB for writeHeapSnapshot, +896 MB here, +1203 MB with the stream; 79 MB heap: +213, +220,
// +294 MB. The common part is V8's snapshot graph, which grows with the object count.
// `reportProgress: true` is not used: in-process it calls into JS while V8 walks the heap and
// crashes (nodejs/node#44634), so progress is counted over the serialization instead.
function takeSnapshot(session, fd, onProgress) {
  const progress = onProgress && progressOf(onProgress);
  let failed = null; // the first write or callback error; later chunks are skipped
  session.on('HeapProfiler.addHeapSnapshotChunk', ({ params: { chunk } }) => {
    if (failed) return;
    try {
      writeAll(fd, chunk);
      if (progress) progress.chunk(chunk);
    } catch (err) {
      failed = err;
    }
  });
  return new Promise((resolve, reject) => {
    session.post('HeapProfiler.takeHeapSnapshot', {}, (err) => {
      try {
        if (failed ?? err) throw failed ?? err;
        if (progress) progress.end();
        resolve();
      } catch (e) {
        reject(e);
      }
    });
  });
}

const writing = new Set(); // partial files this thread is writing

/**
 * Writes a heap snapshot of this thread's isolate (main or worker) to `path`, loadable in Chrome
 * DevTools, and resolves with `path`. It blocks the thread while V8 takes the snapshot, as any
 * in-process snapshot does. The file is written as `path + '.partial'` and renamed when complete,
 * so a crash never leaves a truncated file under `path`. Errors reject; nothing throws.
 */
async function captureHeapSnapshot(path, options) {
  if (typeof path !== 'string' || path.length === 0) {
    throw new TypeError(`rloop: 'path' must be a non-empty string, got ${describe(path)}`);
  }
  const { onProgress } = optionsOf('captureHeapSnapshot()', options, ['onProgress'], 'onProgress');
  const { Session } = require('node:inspector'); // loaded on first use: not every build has it
  const partial = `${path}.partial`;
  if (writing.has(partial)) throw new Error(`rloop: a heap snapshot is already being written to ${partial}`);
  writing.add(partial);
  const session = new Session();
  let fd = -1;
  try {
    fd = fs.openSync(partial, 'w');
    session.connect();
    await takeSnapshot(session, fd, onProgress);
    fs.closeSync(fd);
    fd = -1;
    fs.renameSync(partial, path);
    require('../native').trimMalloc(); // V8 freed its snapshot graph; give the pages back too
    return path;
  } catch (err) {
    if (fd !== -1) fs.closeSync(fd);
    fs.rmSync(partial, { force: true });
    throw err;
  } finally {
    session.disconnect();
    writing.delete(partial);
  }
}

module.exports = { stats, timeline, captureHeapSnapshot };

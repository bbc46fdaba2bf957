'use strict';
// rloop's own work on this thread's loop, which the app did not do: starting and stopping CPU
// profiles (V8 walks all code, synchronously), answering a profile pulled from the metrics
// endpoint. The ledger charges it to a slot of its own (js/attribution/charge.js), so windows,
// totals and metrics leave it out of the app's busy time and say it apart (`rloopMs`); the spans
// kept here say how much of a stall it was. Each thread has its own: a worker loads its own copy
// of this module.

const { epochMs } = require('../clock');
const { ownCharged } = require('../attribution/charge');

const MAX_SPANS = 1024; // the oldest go first: a span is a profile starting or stopping, a pulled one's answer
const spans = []; // [from, to], epoch ms, in the order they ended

/** Runs `fn()` as rloop's own work and gives what it returns. */
function own(fn) {
  const from = epochMs();
  try {
    return ownCharged(fn);
  } finally {
    const to = epochMs();
    if (to > from) {
      spans.push([from, to]);
      if (spans.length > MAX_SPANS) spans.shift();
    }
  }
}

/** The spans of rloop's own work that overlap [from, to], clipped to it. */
function ownWithin(from, to) {
  const out = [];
  for (const [a, b] of spans) {
    if (b > from && a < to) out.push([Math.max(a, from), Math.min(b, to)]);
  }
  return out;
}

module.exports = { own, ownWithin };

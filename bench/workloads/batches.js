'use strict';
// How a sample is timed: a warm-up, then BATCHES timed batches in the same process.
// A sample's value is its median batch, so a burst of other load on the shared machine
// spoils one batch, not the sample. No forced GC before timing: after gc() the next few
// thousand http requests cost 2-4x the server CPU, which would spoil the first batches.

const BATCHES = 10;

module.exports = { BATCHES };

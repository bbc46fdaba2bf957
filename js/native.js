'use strict';
// The addon, through the loader `napi build` generates (local build or platform package).
// Reads that return bulk data come across N-API as JSON strings, parsed here: converting a
// large native value into JS objects directly hits napi-rs's limit of a million values.

const binding = require('../binding.js');

const parse = JSON.parse;

class NativeMonitor {
  #n;
  constructor(...args) {
    this.#n = new binding.NativeMonitor(...args);
  }
  addScope(name) { return this.#n.addScope(name); }
  keyBinder() { return this.#n.keyBinder(); }
  elu() { return parse(this.#n.elu()); }
  history(after) { return parse(this.#n.history(after)); }
  totals() { return parse(this.#n.totals()); }
  startTimeline() { this.#n.startTimeline(); }
  takeTimeline() { return parse(this.#n.takeTimeline()); }
  stop() { this.#n.stop(); }
}

module.exports = { ...binding, NativeMonitor, threads: () => parse(binding.threads()) };

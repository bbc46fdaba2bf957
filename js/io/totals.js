'use strict';
// Running totals of I/O durations per type and target, for reports (js/io/index.js adds to them).

const { round } = require('../round');

const MAX_TARGETS = 1000; // per type; later targets are folded into OTHER
const OTHER = '(other)';

/** count, total, max and errors of durations; `route`: of an incoming request's route, not of one target. */
class Stat {
  route;
  count = 0;
  totalMs = 0;
  maxMs = 0;
  errors = 0;

  constructor(route = false) {
    this.route = route;
  }

  add(ms, failed) {
    this.count++;
    this.totalMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
    if (failed) this.errors++;
  }

  view() {
    const { count, totalMs, maxMs, errors } = this;
    return { ...(this.route && { route: true }), count, totalMs: round(totalMs, 3), avgMs: round(totalMs / count, 3), maxMs: round(maxMs, 3), errors };
  }
}

/** Stats per type and target; at most MAX_TARGETS targets per type, the rest under OTHER. */
class Totals {
  #types = new Map(); // type -> { all: Stat, targets: Map<target, Stat> }

  /** One operation; `route`: `where` is an incoming request's route (js/auto/http.js). */
  add(type, where, ms, failed, route = false) {
    let t = this.#types.get(type);
    if (t === undefined) this.#types.set(type, (t = { all: new Stat(), targets: new Map() }));
    t.all.add(ms, failed);
    (t.targets.get(where) ?? newTarget(t.targets, where, route)).add(ms, failed);
  }

  list() {
    const list = [];
    for (const [type, { all, targets }] of this.#types) {
      const perTarget = [];
      for (const [where, stat] of targets) perTarget.push({ target: where, ...stat.view() });
      list.push({ type, ...all.view(), targets: perTarget.sort(costliest) });
    }
    return list.sort(costliest);
  }
}

function newTarget(targets, where, route) {
  const key = targets.size < MAX_TARGETS ? where : OTHER;
  let stat = targets.get(key);
  if (stat === undefined) targets.set(key, (stat = new Stat(route && key === where)));
  return stat;
}

function costliest(a, b) {
  return b.totalMs - a.totalMs;
}

module.exports = { Totals };

'use strict';
// What took a stall's time besides its code, and a window's busy time: how much of it the
// thread ran (its CPU time), what the cgroup's CPU quota throttled, what it waited otherwise
// (for a CPU on a busy machine, or in a system call), and garbage collection by kind; and which
// scopes' busy time the thread did not run. The numbers and their words, once, for the
// diagnosis, the Lag and ELU sections and the terminal.

const { finite, ms, pct, plural } = require('./format');
const { list } = require('./context');

// Of a stall's time, the share not its code's from which it is said wherever code is named.
const MOSTLY = 0.5;
// Of busy time (the thread's, a scope's), the share not run from which it is said.
const FIFTH = 0.2;
// Scopes named for the CPU taken from them.
const NAMED = 3;
// Of a span, the share of waiting worth saying besides throttling.
const WORTH = 0.1;

/** A stall's parts, ms: `measuredMs` the span its CPU was measured over; null where unknown. */
function ofStall(e) {
  const known = finite(e?.cpuMs) && finite(e?.lagMs);
  const measuredMs = known ? Math.max(0, e.lagMs - (finite(e.cpuFromMs) ? e.cpuFromMs : 0)) : null;
  const gc = Array.isArray(e?.gc) ? e.gc.filter((g) => finite(g?.ms)) : null;
  return {
    lagMs: finite(e?.lagMs) ? e.lagMs : 0,
    measuredMs,
    fromMs: known && finite(e.cpuFromMs) ? e.cpuFromMs : 0,
    cpuMs: known ? Math.min(e.cpuMs, measuredMs) : null,
    throttledMs: known && finite(e.throttledMs) ? e.throttledMs : null,
    gc,
    gcMs: gc ? gc.reduce((sum, g) => sum + g.ms, 0) : null,
  };
}

/** Garbage collections by kind summed over spans (stalls, windows): `add(gc)` each span's, then `gc()`, longest first. */
function gcSum() {
  const kinds = new Map();
  return {
    add(gc) {
      for (const g of gc) {
        const k = kinds.get(g.kind) ?? { kind: g.kind, ms: 0, count: 0 };
        k.ms += g.ms;
        k.count += Number(g.count) || 0;
        kinds.set(g.kind, k);
      }
    },
    gc: () => [...kinds.values()].sort((a, b) => b.ms - a.ms),
  };
}

/** Parts summed over stalls: over those whose CPU is known, and those whose GC is. */
function ofStalls(events) {
  const sum = { lagMs: 0, measuredMs: null, fromMs: 0, cpuMs: null, throttledMs: null, gc: null, gcMs: null };
  const kinds = gcSum();
  for (const p of list(events).map(ofStall)) {
    sum.lagMs += p.lagMs;
    if (p.measuredMs !== null) {
      sum.measuredMs = (sum.measuredMs ?? 0) + p.measuredMs;
      sum.cpuMs = (sum.cpuMs ?? 0) + p.cpuMs;
      if (p.throttledMs !== null) sum.throttledMs = (sum.throttledMs ?? 0) + p.throttledMs;
    }
    if (p.gc) {
      sum.gcMs = (sum.gcMs ?? 0) + p.gcMs;
      kinds.add(p.gc);
    }
  }
  if (sum.gcMs !== null) sum.gc = kinds.gc();
  return sum;
}

/**
 * What the thread did not run of the measured span, and of that what it waited besides throttling
 * and GC (a collection's pause holds the thread waiting on V8's helper threads too).
 */
function notRan(p) {
  if (p.measuredMs === null) return { ms: null, waitedMs: null };
  const notMs = Math.max(0, p.measuredMs - p.cpuMs);
  return { ms: notMs, waitedMs: Math.max(0, notMs - (p.throttledMs ?? 0) - (p.gcMs ?? 0)) };
}

/** 'major GC 140 ms, 3 minor GCs 12 ms' */
function gcWords(gc) {
  return list(gc).filter((g) => g.ms >= 0.5).map((g) => `${g.count > 1 ? `${g.count} ${g.kind} GCs` : `${g.kind} GC`} ${ms(g.ms)}`).join(', ');
}

/**
 * What the thread got of a stall, in a clause: 'the thread ran 90 ms of it, throttled 210 ms by
 * its CPU quota; major GC 140 ms'; '' when unknown. `of`: the span, for stalls summed.
 */
function words(p, of = null) {
  const out = [];
  if (p.measuredMs !== null) {
    const { waitedMs } = notRan(p);
    const span = `of ${of ?? (p.fromMs >= 1 ? `the ${ms(p.measuredMs)} measured (from ${ms(p.fromMs)} into it)` : 'it')}`;
    let ran = `the thread ran ${ms(p.cpuMs)} ${span}`;
    if (p.throttledMs >= 1) ran += `, throttled ${ms(p.throttledMs)} by its CPU quota`;
    if (waitedMs >= 1 && waitedMs >= WORTH * p.measuredMs) ran += `, ${ms(waitedMs)} waiting for a CPU or in a system call`;
    out.push(ran);
  }
  const gc = gcWords(p.gc);
  if (gc) out.push(gc);
  return out.join('; ');
}

/**
 * Why naming a stall's code would mislead, or null: most of its time the thread did not run
 * (throttled, waiting for a CPU, or in a system call), or was collecting garbage.
 */
function caveat(p) {
  if (p.gcMs !== null && p.lagMs > 0 && p.gcMs >= MOSTLY * p.lagMs) return `${pct(p.gcMs / p.lagMs)} of that time was garbage collection: ${gcWords(p.gc)}`;
  const { ms: notMs, waitedMs } = notRan(p);
  if (notMs !== null && p.measuredMs > 0 && notMs >= MOSTLY * p.measuredMs) {
    const why = p.throttledMs >= waitedMs ? `its CPU quota throttled it ${ms(p.throttledMs)}` : `it waited ${ms(waitedMs)} for a CPU or in a system call`;
    return `the thread ran only ${pct(p.cpuMs / p.measuredMs)} of ${p.fromMs >= 1 ? 'the time measured' : 'that time'}: ${why}`;
  }
  return null;
}

/**
 * What the thread got of the windows' busy time: `busyMs` and `cpuMs` over the windows whose CPU
 * time is known, `notRanMs` the busy time it did not run at least (each window's busy time less
 * its CPU time, which also holds work outside callbacks), `throttledMs` the quota's part of that;
 * and `gc`, `gcMs` the garbage collections of the windows whose GC is known (null: none is).
 */
function ofWindows(windows) {
  const out = { windows: 0, busyMs: 0, cpuMs: 0, notRanMs: 0, throttledMs: null, gc: null, gcMs: null };
  const kinds = gcSum();
  for (const w of list(windows)) {
    const t = w?.thread;
    const gc = Array.isArray(t?.gc) ? t.gc.filter((g) => finite(g?.ms)) : null;
    if (gc) {
      kinds.add(gc);
      out.gcMs = (out.gcMs ?? 0) + gc.reduce((sum, g) => sum + g.ms, 0);
    }
    if (!finite(t?.cpuMs) || !finite(t?.busyMs)) continue;
    const notMs = Math.max(0, t.busyMs - t.cpuMs);
    out.windows++;
    out.busyMs += t.busyMs;
    out.cpuMs += t.cpuMs;
    out.notRanMs += notMs;
    if (finite(t.throttledMs)) out.throttledMs = (out.throttledMs ?? 0) + Math.min(notMs, t.throttledMs);
  }
  if (out.gcMs !== null) out.gc = kinds.gc();
  return out;
}

/**
 * What the thread ran of each scope's busy time over the windows that say (each scope entry's
 * `cpuMs`, sampled: docs/stalls.md): `[{ name, busyMs, cpuMs, notRanMs }]`, the most not run
 * first; `name` null for the unattributed time.
 */
function ofScopes(windows) {
  const byName = new Map();
  for (const w of list(windows)) {
    const entries = [...list(w?.scopes).map((s) => [s?.name, s]), [null, w?.unattributed]];
    for (const [name, s] of entries) {
      if (!finite(s?.cpuMs) || !finite(s?.busyMs)) continue;
      let t = byName.get(name);
      if (!t) byName.set(name, (t = { name, busyMs: 0, cpuMs: 0, notRanMs: 0 }));
      t.busyMs += s.busyMs;
      t.cpuMs += Math.min(s.cpuMs, s.busyMs);
      t.notRanMs = t.busyMs - t.cpuMs;
    }
  }
  return [...byName.values()].sort((a, b) => b.notRanMs - a.notRanMs);
}

/** Whether a scope's busy time (an `ofScopes` entry) was a fifth or more not run. */
const mostlyNotRan = (s) => s.notRanMs >= 1 && s.notRanMs >= FIFTH * s.busyMs;

/** A scope's busy time the thread did not run a fifth of, for its row: 'ran 33 %'; '' otherwise. */
const ranWords = (s) => (s && mostlyNotRan(s) ? `ran ${pct(s.cpuMs / s.busyMs)}` : '');

/**
 * The scopes whose busy time the thread did not run a fifth of or more, the most first, in words
 * (`scope` says a name): 'job (not run 160 ms of its 240 ms), …'; '' when none.
 */
function scopesWords(scopes, scope) {
  return scopes.filter(mostlyNotRan).slice(0, NAMED).map((s) => `${scope(s.name)} (not run ${ms(s.notRanMs)} of its ${ms(s.busyMs)})`).join(', ');
}

/** The busy time the windows say the thread did not run, in words; '' when unknown. */
function windowWords(t) {
  if (t.windows === 0) return '';
  return `the thread's CPU time was ${ms(t.cpuMs)} over ${plural(t.windows, 'window')} the loop was busy ${ms(t.busyMs)}`
    + (t.notRanMs >= 1 ? `: at least ${ms(t.notRanMs)} of its busy time it did not run${t.throttledMs >= 1 ? `, ${ms(t.throttledMs)} of it throttled by its CPU quota` : ''}` : '');
}

module.exports = { ofStall, ofStalls, notRan, words, caveat, gcWords, ofWindows, windowWords, ofScopes, ranWords, scopesWords, MOSTLY, FIFTH };

'use strict';
// From raw samples to what the table shows: per configuration the cost per event, the cost
// above no hook (paired within each round, so slow drift of the machine cancels), the
// reference's overhead over each configuration's, attribution checks and target verdicts.

const { summarize } = require('./stats');
const { BASELINE, REFERENCE, SUBJECT, FULL } = require('./configs');

function byRound(samples, config) {
  return new Map(samples.filter((s) => s.config === config).map((s) => [s.round, s]));
}

/**
 * The fastest batch of all rounds, and its distance to the baseline's fastest. Noise on a shared
 * machine only ever slows a batch down, so the fastest is the estimate least moved by it.
 */
function fastest(samples, config) {
  const best = (c) => Math.min(...samples.filter((s) => s.config === c).map((s) => s.fastest));
  const ns = best(config);
  if (!Number.isFinite(ns)) return null;
  return { ns, overhead: config === BASELINE ? null : ns - best(BASELINE) };
}

/** Per-round `config − baseline` in ns per event, for the rounds that have both. */
function overheads(samples, config) {
  const base = byRound(samples, BASELINE);
  const diffs = [];
  for (const [round, s] of byRound(samples, config)) {
    if (base.has(round)) diffs.push(s.perEvent - base.get(round).perEvent);
  }
  return diffs.length ? summarize(diffs) : null;
}

/**
 * What lag watching and I/O tracking add to attribution, as a share of the work itself:
 * (full − rloop) ÷ no hook within each round, so that the machine's drift between rounds cancels.
 */
function extraShare(samples) {
  const [base, subject] = [byRound(samples, BASELINE), byRound(samples, SUBJECT)];
  const shares = [];
  for (const [round, s] of byRound(samples, FULL)) {
    if (base.has(round) && subject.has(round)) shares.push((s.perEvent - subject.get(round).perEvent) / base.get(round).perEvent);
  }
  return shares.length ? summarize(shares) : null;
}

function attribution(samples, scopes) {
  const seen = samples.map((s) => s.attribution).filter(Boolean);
  if (!seen.length) return null;
  const charged = Math.min(...seen.map((a) => a.scopes));
  return { scopes: scopes.length, charged, ok: charged === scopes.length, share: summarize(seen.map((a) => a.share)) };
}

function verdict(what, value, op, limit) {
  return { what, value, op, limit, ok: value !== null && (op === '≤' ? value <= limit : value >= limit) };
}

function targets(target, configs) {
  const subject = configs[SUBJECT];
  if (!target || !subject) return [];
  const out = [];
  if (target.overheadNs !== undefined) {
    out.push(verdict(`${SUBJECT} ns/event above ${BASELINE}`, subject.overhead?.median ?? null, '≤', target.overheadNs));
  }
  if (target.ratio !== undefined) {
    const v = verdict(`${REFERENCE} overhead ÷ ${SUBJECT} overhead`, subject.refRatio, '≥', target.ratio);
    // No ratio when rloop's overhead is not above no hook: cheaper than any ratio, if the reference costs.
    if (v.value === null && subject.overhead?.median <= 0) v.ok = configs[REFERENCE]?.overhead?.median > 0;
    out.push(v);
  }
  const best = subject.fastest;
  if (target.overheadNs !== undefined && best?.overhead != null) {
    out.push(verdict(`${SUBJECT} ns/event above ${BASELINE}, fastest batches`, best.overhead, '≤', target.overheadNs));
  }
  if (target.ratio !== undefined && best?.overhead != null) {
    out.push(verdict(`${REFERENCE} overhead ÷ ${SUBJECT} overhead, fastest batches`, best.refRatio, '≥', target.ratio));
  }
  if (target.fullShare !== undefined && configs[FULL]?.extraShare) {
    const share = configs[FULL].extraShare;
    const v = verdict(`(${FULL} − ${SUBJECT}) ÷ ${BASELINE} per round, %`, 100 * share.median, '≤', 100 * target.fullShare);
    v.ci95 = share.ci95.map((x) => 100 * x);
    out.push(v);
  }
  if (target.rssGrowthMB !== undefined) {
    // The worst round, not the median: a leak must not hide behind two clean rounds.
    out.push(verdict(`${SUBJECT} RSS growth after GC, MB (worst round)`, subject.rssGrowthMB.max, '≤', target.rssGrowthMB));
  }
  return out;
}

function summarizeWorkload(workload, events, configNames, samples) {
  const configs = {};
  for (const name of configNames) {
    const mine = samples.filter((s) => s.config === name);
    configs[name] = {
      perEvent: summarize(mine.map((s) => s.perEvent)),
      overhead: name === BASELINE ? null : overheads(samples, name),
      rssGrowthMB: 'rssGrowthMB' in mine[0] ? summarize(mine.map((s) => s.rssGrowthMB)) : undefined,
      attribution: attribution(mine, workload.scopes),
      fastest: fastest(samples, name),
    };
    if (name === FULL) configs[name].extraShare = extraShare(samples);
  }
  const refOverhead = configs[REFERENCE]?.overhead?.median;
  const refFastest = configs[REFERENCE]?.fastest?.overhead;
  for (const c of Object.values(configs)) {
    c.refRatio = refOverhead !== undefined && c.overhead?.median > 0 ? refOverhead / c.overhead.median : null;
    if (c.fastest) c.fastest.refRatio = refFastest !== undefined && c.fastest.overhead > 0 ? refFastest / c.fastest.overhead : null;
  }
  return {
    description: workload.describe(events),
    unit: workload.unit,
    events,
    configs,
    targets: targets(workload.target, configs),
  };
}

module.exports = { summarizeWorkload };

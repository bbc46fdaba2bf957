'use strict';
// Compares two reports (rloop-report/1): what got better, what got worse, and a verdict.
// Pure: reports in, a comparison out. The CLI's `rloop compare` prints it.
// A function's share is of the whole profile (selfPercent), not of busy time as in a report's
// page: across two runs a share of busy time moves when other work comes or goes.

const { stalls } = require('./facts');
const { SCHEMA } = require('../schema');

// A change counts only past these, so noise between two runs of one build reads NO CHANGE.
const FUNCTION_POINTS = 5; // points of self-time share
const SCOPE_POINTS = 5; // points of ELU
const LAG_MS = 20; // worst stall

function fnKey(f) {
  return `${f.functionName}\u0000${f.url}\u0000${f.line}`;
}

function patternsOf(report) {
  const list = report.profile?.analysis?.patterns ?? [];
  return new Map(list.filter((p) => p.id !== 'healthy').map((p) => [p.id, p]));
}

function comparePatterns(base, head) {
  const b = patternsOf(base);
  const h = patternsOf(head);
  return {
    resolved: [...b.values()].filter((p) => !h.has(p.id)),
    new: [...h.values()].filter((p) => !b.has(p.id)),
    persistent: [...h.values()].filter((p) => b.has(p.id)).map((p) => ({ ...p, basePercent: b.get(p.id).percent })),
  };
}

function compareFunctions(base, head) {
  const share = (report) => new Map((report.profile?.analysis?.heavyFunctions ?? []).map((f) => [fnKey(f), f]));
  const b = share(base);
  const h = share(head);
  const changes = [];
  for (const key of new Set([...b.keys(), ...h.keys()])) {
    const was = b.get(key)?.selfPercent ?? 0;
    const now = h.get(key)?.selfPercent ?? 0;
    const { functionName, url, line, column } = h.get(key) ?? b.get(key);
    changes.push({ functionName, url, line, column, basePercent: was, headPercent: now, deltaPoints: now - was });
  }
  return {
    regressed: changes.filter((c) => c.deltaPoints >= FUNCTION_POINTS).sort((x, y) => y.deltaPoints - x.deltaPoints),
    improved: changes.filter((c) => c.deltaPoints <= -FUNCTION_POINTS).sort((x, y) => x.deltaPoints - y.deltaPoints),
  };
}

function compareScopes(base, head) {
  const elu = (report) => new Map((report.elu?.scopes ?? []).map((s) => [s.name, s.elu]));
  const b = elu(base);
  const h = elu(head);
  return [...new Set([...b.keys(), ...h.keys()])]
    .map((name) => {
      const was = b.get(name) ?? 0;
      const now = h.get(name) ?? 0;
      return { name, baseElu: was, headElu: now, deltaPoints: (now - was) * 100 };
    })
    .sort((x, y) => Math.abs(y.deltaPoints) - Math.abs(x.deltaPoints));
}

// The stalls as the report's page states them (js/report/facts.js): every stall recorded, the
// longest of them less rloop's own part (`rloopMs`: a CPU profile starting or stopping), which is no change
// of the app's: on a loaded machine it alone moves by more than LAG_MS between two runs.
function compareLag(base, head) {
  const b = stalls(base);
  const h = stalls(head);
  return { baseStalls: b.count, headStalls: h.count, baseMaxMs: appMaxMs(b), headMaxMs: appMaxMs(h) };
}

function appMaxMs({ events, dropped, maxMs }) {
  if (dropped > 0 || events.length === 0) return maxMs ?? 0; // the windows' maximum: no split known
  return Math.max(...events.map((e) => e.lagMs - (Number.isFinite(e.rloopMs) ? e.rloopMs : 0)));
}

/** What two reports cannot be compared on, as sentences: a CPU profile only one of them has. */
function notComparable(base, head) {
  const without = [['base', base], ['head', head]].filter(([, r]) => !r.profile?.analysis).map(([name]) => name);
  if (without.length === 0) return [];
  return [`patterns and functions: the CPU profile, which ${without.join(' and ')} ${without.length === 2 ? 'have' : 'has'} none of`];
}

/**
 * `{ verdict, patterns: { resolved, new, persistent }, functions: { regressed, improved },
 * scopes, lag, notCompared }`; verdict is IMPROVED, REGRESSED, MIXED or NO CHANGE. What
 * `notCompared` names counts for neither side: a pattern absent for want of a profile is not
 * resolved.
 */
function compare(base, head) {
  for (const [name, r] of [['base', base], ['head', head]]) {
    if (r === null || typeof r !== 'object' || r.schema !== SCHEMA) {
      throw new TypeError(`rloop: compare() ${name} must be an rloop-report/1 object`);
    }
  }
  const notCompared = notComparable(base, head);
  const profiles = notCompared.length === 0;
  const patterns = profiles ? comparePatterns(base, head) : { resolved: [], new: [], persistent: [] };
  const functions = profiles ? compareFunctions(base, head) : { regressed: [], improved: [] };
  const scopes = compareScopes(base, head);
  const lag = compareLag(base, head);
  const worse =
    patterns.new.length +
    functions.regressed.length +
    scopes.filter((s) => s.deltaPoints >= SCOPE_POINTS).length +
    (lag.headMaxMs - lag.baseMaxMs >= LAG_MS ? 1 : 0);
  const better =
    patterns.resolved.length +
    functions.improved.length +
    scopes.filter((s) => s.deltaPoints <= -SCOPE_POINTS).length +
    (lag.baseMaxMs - lag.headMaxMs >= LAG_MS ? 1 : 0);
  const verdict = worse && better ? 'MIXED' : worse ? 'REGRESSED' : better ? 'IMPROVED' : 'NO CHANGE';
  return { verdict, patterns, functions, scopes, lag, notCompared };
}

/** A comparison as text for a terminal. */
function formatComparison(c) {
  const lines = [`verdict: ${c.verdict}`];
  const pct = (x) => `${x.toFixed(1)} %`;
  const ofProfile = (x) => `${pct(x)} of the profile`;
  for (const p of c.patterns.resolved) lines.push(`  resolved   ${p.id}`);
  for (const p of c.patterns.new) lines.push(`  new        ${p.id}: ${p.message}`);
  for (const p of c.patterns.persistent) lines.push(`  persistent ${p.id}`);
  const fn = (f) => `${f.functionName || '(anonymous)'}${f.url ? ` (${f.url}${Number.isInteger(f.line) ? `:${f.line}` : ''})` : ''}`;
  for (const f of c.functions.regressed) lines.push(`  slower     ${fn(f)} ${pct(f.basePercent)} -> ${ofProfile(f.headPercent)}`);
  for (const f of c.functions.improved) lines.push(`  faster     ${fn(f)} ${pct(f.basePercent)} -> ${ofProfile(f.headPercent)}`);
  for (const s of c.scopes.filter((x) => Math.abs(x.deltaPoints) >= SCOPE_POINTS)) {
    lines.push(`  scope      ${s.name}: ELU ${pct(s.baseElu * 100)} -> ${pct(s.headElu * 100)}`);
  }
  for (const what of c.notCompared) lines.push(`  not compared ${what}`);
  lines.push(`  lag        longest stall ${c.lag.baseMaxMs.toFixed(0)} ms -> ${c.lag.headMaxMs.toFixed(0)} ms, stalls ${c.lag.baseStalls} -> ${c.lag.headStalls}`);
  return lines.join('\n') + '\n';
}

module.exports = { compare, formatComparison };

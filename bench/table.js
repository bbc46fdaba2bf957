'use strict';
// The printed table: one block per workload, one row per configuration, then the targets.

const { BASELINE, REFERENCE, CONFIGS } = require('./configs');

function time(ns) {
  const a = Math.abs(ns);
  return a >= 1e4 ? `${(ns / 1e3).toFixed(1)} µs` : `${ns.toFixed(a >= 100 ? 0 : 1)} ns`;
}

const signed = (ns) => (ns >= 0 ? `+${time(ns)}` : `−${time(-ns)}`);
const range = (s, f) => `${f(s.min)} … ${f(s.max)}`;

function pad(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => `  ${r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  ')}`);
}

function fastestCell(f) {
  if (!f) return '';
  if (f.overhead === null) return time(f.ns);
  return `${time(f.ns)} (${signed(f.overhead)}${f.refRatio ? `, ${f.refRatio.toFixed(1)}×` : ''})`;
}

function row(name, c, hasReference) {
  const a = c.attribution;
  const cells = [
    CONFIGS[name].label,
    `${time(c.perEvent.median)} ±${time(c.perEvent.mad)}`,
    range(c.perEvent, time),
    c.overhead ? `${signed(c.overhead.median)} ±${time(c.overhead.mad)}` : '',
    c.overhead ? range(c.overhead, signed) : '',
    c.refRatio !== null ? `${c.refRatio.toFixed(1)}×` : hasReference && c.overhead ? 'n/a' : '',
    a ? `${a.charged}/${a.scopes} scopes, ${(a.share.median * 100).toFixed(0)} %${a.ok ? '' : ' MISSING'}` : '',
    fastestCell(c.fastest),
  ];
  if (c.rssGrowthMB) cells.push(`${c.rssGrowthMB.median.toFixed(1)} (${range(c.rssGrowthMB, (x) => x.toFixed(1))})`);
  return cells;
}

function block(name, w) {
  const header = ['configuration', 'per event ±MAD', 'min … max', `above ${BASELINE} ±MAD`, 'min … max'];
  header.push('ref÷this', 'attributed', 'fastest batch (above, ref÷this)');
  const names = Object.keys(w.configs);
  if (w.configs[names[0]].rssGrowthMB) header.push('RSS growth MB (min … max)');
  const rows = names.map((n) => row(n, w.configs[n], REFERENCE in w.configs));
  const lines = [`${name}: ${w.description} (${w.unit})`, ...pad([header, ...rows])];
  for (const t of w.targets) {
    const v = t.value === null ? 'n/a' : t.value.toFixed(Math.abs(t.value) < 10 ? 2 : 0);
    const ci = t.ci95 ? ` (95 % interval of the median ${t.ci95.map((x) => x.toFixed(2)).join(' … ')})` : '';
    lines.push(`  target: ${t.what} = ${v}${ci} ${t.op} ${t.limit}: ${t.ok ? 'MET' : 'NOT MET'}`);
  }
  return lines.join('\n');
}

function table(result) {
  const f = result.fingerprint;
  const head = [
    `rloop bench: node ${f.node} (V8 ${f.v8}), ${f.cpu} × ${f.cores}, load ${f.loadavg[0].toFixed(2)} at start,`,
    `commit ${f.commit?.slice(0, 12) ?? '?'}${f.dirty ? ' (dirty)' : ''},`,
    `${f.options.rounds} rounds of fresh processes, scale ${f.options.scale}\n`,
    ` median over rounds; "above ${BASELINE}" paired per round; ref÷this = pure-JS reference overhead ÷ this overhead;`,
    'attributed = scopes charged, share of eventLoopUtilization() busy time;',
    'fastest batch = the quickest of all rounds, the estimate noise moves least',
  ].join(' ');
  return [head, ...Object.entries(result.workloads).map(([n, w]) => block(n, w))].join('\n\n');
}

module.exports = { table };

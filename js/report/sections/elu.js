'use strict';
// ELU by scope: busy time per scope over the capture (a sortable table with each scope's worst
// keys), and per window as stacked bars: which scope kept the loop busy, and when, and how much
// of it the thread ran (js/report/taken.js).

const { esc, text } = require('../escape');
const { maxOf, ms, num, offset, pct } = require('../format');
const { plot, chart, hoverColumns, coord } = require('../svg');
const { table, bar, empty, capped } = require('../table');
const { list, OTHER_COLOR, UNATTRIBUTED_COLOR, PALETTE } = require('../context');
const facts = require('../facts');
const taken = require('../taken');

const MAX_COLUMNS = 120;
const MAX_ROWS = 200;
const WORST_KEYS = 3;

/** Per scope over all windows: keys seen, worst window p99, and the worst keys of any window. */
function keyStats(windows) {
  const byScope = new Map();
  for (const w of windows) {
    for (const s of list(w.scopes)) {
      if (!s.keys) continue;
      let k = byScope.get(s.name);
      if (!k) byScope.set(s.name, (k = { count: 0, dropped: 0, p99Ms: 0, worst: new Map() }));
      k.count += Number(s.keys.count) || 0;
      k.dropped += Number(s.keys.dropped) || 0;
      k.p99Ms = Math.max(k.p99Ms, Number(s.keys.p99Ms) || 0);
      for (const { key, busyMs } of list(s.keys.worst)) {
        k.worst.set(key, Math.max(k.worst.get(key) ?? 0, Number(busyMs) || 0));
      }
    }
  }
  return byScope;
}

/**
 * A scope's busy time as a table cell, saying how much of it the thread ran where it did not run
 * a fifth of it (`ran`: the scope's `taken.ofScopes` entry, if any).
 */
function busyCell(busyMs, ran) {
  const note = taken.ranWords(ran);
  const said = note ? ` <span class="muted" title="of its busy time in the windows, what the thread ran: the rest was CPU taken away">${esc(note)}</span>` : '';
  return [ms(busyMs) + said, busyMs];
}

function scopeTable(ctx, elu, windows) {
  const keys = keyStats(windows);
  const ran = new Map(taken.ofScopes(windows).map((s) => [s.name, s]));
  const scopes = list(elu.scopes);
  const threadMs = Number(elu.thread?.busyMs) || 0;
  const top = Math.max(maxOf(scopes, (s) => s.elu), Number(elu.unattributed?.elu) || 0, 1e-9); // bars relative to the busiest
  const row = (name, s, label) => {
    const k = keys.get(name);
    const worst = k ? [...k.worst].sort((a, b) => b[1] - a[1]).slice(0, WORST_KEYS) : [];
    return [
      `${ctx.swatch(name)}${label}`,
      busyCell(s.busyMs, ran.get(name)),
      [bar(s.elu / top, pct(s.elu)), s.elu],
      [pct(threadMs > 0 ? s.busyMs / threadMs : 0), threadMs > 0 ? s.busyMs / threadMs : 0],
      [num(s.calls), s.calls],
      k ? [num(k.count), k.count] : ['', -1],
      k ? [ms(k.p99Ms), k.p99Ms] : ['', -1],
      worst.map(([key, busy]) => `<span class="key">${text(key, 60)}</span> ${ms(busy)}`).join(' · '),
    ];
  };
  const rows = scopes.slice(0, MAX_ROWS).map((s) => row(s.name, s, ctx.scope(s.name)));
  if (elu.unattributed) rows.push(row(null, elu.unattributed, ctx.scope(null)));
  const note = scopes.length > MAX_ROWS
    ? capped(ctx, `ELU by scope: the ${MAX_ROWS} busiest of ${num(scopes.length)} scopes are listed.`) : '';
  return table({
    label: 'ELU by scope',
    columns: [{ label: 'Scope' }, { label: 'Busy', num: true }, { label: 'ELU', num: true }, { label: 'Share of loop busy', num: true },
      { label: 'Callbacks', num: true }, { label: 'Keys', num: true }, { label: 'Key p99', num: true }, { label: 'Worst keys' }],
    rows,
  }) + note;
}

/** Windows merged into at most MAX_COLUMNS columns: busy ms per series, summed. */
function columns(ctx, windows, series) {
  const per = Math.ceil(windows.length / MAX_COLUMNS);
  const out = [];
  for (let i = 0; i < windows.length; i += per) {
    const group = windows.slice(i, i + per);
    const busy = new Array(series.length).fill(0);
    for (const w of group) {
      for (const s of list(w.scopes)) {
        const j = series.findIndex((x) => x.name === s.name);
        busy[j >= 0 ? j : series.length - 2] += Number(s.busyMs) || 0; // the rest: 'other scopes'
      }
      busy[series.length - 1] += Number(w.unattributed?.busyMs) || 0;
    }
    const durationMs = group.reduce((sum, w) => sum + (Number(w.durationMs) || 0), 0);
    const rloopMs = group.reduce((sum, w) => sum + (Number(w.thread?.rloopMs) || 0), 0);
    const startS = (group[0].start - ctx.start) / 1000;
    // A window that began before the capture is drawn from the capture's start.
    out.push({ start: Math.max(0, startS), end: (group[group.length - 1].end - ctx.start) / 1000, busy, durationMs, rloopMs, early: startS < 0 ? -startS : 0, cpu: taken.ofWindows(group) });
  }
  return { per, columns: out };
}

/**
 * The capture's last part, after its last complete window: what the capture's totals hold
 * beyond the windows' (a window that began before the capture counted for its part inside),
 * per series. Null when the windows reach the capture's end.
 */
function tail(ctx, elu, windows, series) {
  const endS = facts.spanS(ctx.r);
  const lastEnd = (windows[windows.length - 1].end - ctx.start) / 1000;
  const durationMs = (endS - lastEnd) * 1000;
  if (!(durationMs >= 1)) return null;
  const inside = (w) => {
    const d = w.end - w.start;
    return d > 0 ? Math.max(0, Math.min(1, (w.end - Math.max(w.start, ctx.start)) / d)) : 1;
  };
  const seen = new Array(series.length).fill(0);
  const at = (name) => {
    const j = series.findIndex((x) => x.name === name);
    return j >= 0 ? j : series.length - 2;
  };
  for (const w of windows) {
    const f = inside(w);
    for (const s of list(w.scopes)) seen[at(s.name)] += f * (Number(s.busyMs) || 0);
    seen[series.length - 1] += f * (Number(w.unattributed?.busyMs) || 0);
  }
  const total = new Array(series.length).fill(0);
  for (const s of list(elu.scopes)) total[at(s.name)] += Number(s.busyMs) || 0;
  total[series.length - 1] += Number(elu.unattributed?.busyMs) || 0;
  let busy = total.map((t, j) => Math.max(0, t - seen[j]));
  const sum = busy.reduce((a, b) => a + b, 0);
  if (sum > durationMs) busy = busy.map((b) => (b * durationMs) / sum); // estimates: never over 100 %
  return { start: lastEnd, end: endS, busy, durationMs, early: 0, partial: true };
}

function stackedTimeline(ctx, elu, windows) {
  const named = list(elu.scopes).slice(0, PALETTE.length).map((s) => ({ name: s.name, color: ctx.color(s.name), label: ctx.scopeText(s.name) }));
  const series = [...named, { name: undefined, color: OTHER_COLOR, label: 'other scopes' }, { name: null, color: UNATTRIBUTED_COLOR, label: '(unattributed)' }];
  const { per, columns: cols } = columns(ctx, windows, series);
  const last = tail(ctx, elu, windows, series);
  if (last) cols.push(last);
  const peak = maxOf(cols, (c) => (c.durationMs > 0 ? (100 * c.busy.reduce((a, b) => a + b, 0)) / c.durationMs : 0));
  const p = plot({ xMax: facts.spanS(ctx.r, maxOf(cols, (c) => c.end)), yMax: Math.min(100, Math.max(5, peak)) }); // a quiet loop still shows
  const bars = [];
  const tips = [];
  for (const c of cols) {
    const x0 = p.x(c.start);
    const width = Math.max(0.5, p.x(c.end) - x0 - 1);
    let acc = 0;
    c.busy.forEach((busyMs, j) => {
      const share = c.durationMs > 0 ? (100 * busyMs) / c.durationMs : 0;
      if (share <= 0) return;
      const y = p.y(acc + share);
      bars.push(`<rect x="${coord(x0)}" y="${coord(y)}" width="${coord(width)}" height="${coord(p.y(acc) - y)}" style="fill:${esc(series[j].color)}"/>`);
      acc += share;
    });
    const parts = c.busy.map((busyMs, j) => [j, busyMs]).filter(([, b]) => b > 0).sort((a, b) => b[1] - a[1]);
    tips.push([
      `${offset(c.start)} to ${offset(c.end)}: loop busy ${num(acc, 1)} %`,
      ...(c.partial ? ['the capture ended inside this window: its part, from the capture\'s totals'] : []),
      ...(c.early > 0 ? [`the window began ${num(c.early, 2)} s before the capture`] : []),
      ...(c.cpu?.windows > 0 ? [`thread CPU ${ms(c.cpu.cpuMs)}${c.cpu.throttledMs >= 0.5 ? `, throttled ${ms(c.cpu.throttledMs)}` : ''}`] : []),
      ...(c.cpu?.gcMs >= 0.5 ? [`garbage collection ${ms(c.cpu.gcMs)}: ${taken.gcWords(c.cpu.gc)}`] : []),
      ...(c.rloopMs > 0 ? [`left out: ${ms(c.rloopMs)} of rloop's own work (its CPU profiles starting and stopping)`] : []),
      ...parts.map(([j, b]) => `${series[j].label}: ${num(c.durationMs > 0 ? (100 * b) / c.durationMs : 0, 1)} % (${ms(b)})`),
    ]);
  }
  const edges = [...cols.map((c) => p.x(c.start)), p.x(cols[cols.length - 1].end)];
  const legend = series.map((s) => `<span><i class="swatch" style="background:${esc(s.color)}"></i>${text(s.label, 60)}</span>`).join('');
  const note = per > 1 ? capped(ctx, `ELU timeline: ${num(windows.length)} windows drawn as ${cols.length} bars of ${per} windows each.`) : '';
  const body = bars.join('') + hoverColumns(p, edges, tips);
  return `<div class="legend">${legend}</div>${chart(p, { label: 'Busy share per window, by scope', yFormat: (v) => `${num(v, 0)} %`, body })}${note}`;
}

function render(ctx) {
  const elu = ctx.r.elu;
  if (!elu) return empty('The report holds no ELU data.');
  const windows = list(elu.windows).filter((w) => Number.isFinite(w.start) && Number.isFinite(w.end));
  const cpu = taken.ofWindows(windows);
  const head = `<p class="facts"><span>thread busy <b>${ms(elu.thread?.busyMs)}</b></span><span>ELU <b>${pct(elu.thread?.elu)}</b></span>`
    + `<span>unattributed <b>${ms(elu.unattributed?.busyMs)}</b></span><span>window <b>${ms(elu.windowMs)}</b></span>`
    + `<span>windows <b>${num(windows.length)}</b></span>`
    + (cpu.windows > 0 ? `<span>thread CPU <b>${ms(cpu.cpuMs)}</b></span><span>busy, not running <b>${ms(cpu.notRanMs)}</b></span>` : '')
    + (cpu.throttledMs >= 0.5 ? `<span>throttled <b>${ms(cpu.throttledMs)}</b></span>` : '')
    + (cpu.gcMs >= 0.5 ? `<span>garbage collection <b>${ms(cpu.gcMs)}</b></span>` : '')
    + (elu.thread?.rloopMs > 0 ? `<span>rloop's own work, left out <b>${ms(elu.thread.rloopMs)}</b></span>` : '') + '</p>'
    + (cpu.notRanMs >= 1 ? `<p class="muted">${esc(taken.windowWords(cpu).replace(/^t/, 'T'))}: the busy times below count it as the scopes' own.</p>` : '');
  const timelinePart = windows.length > 0
    ? stackedTimeline(ctx, elu, windows)
    : empty(`No window closed during the capture: the monitor's window (${ms(elu.windowMs)}) is longer than the capture (${ms(ctx.r.meta?.durationMs)}).`);
  const tablePart = list(elu.scopes).length > 0
    ? scopeTable(ctx, elu, windows)
    : empty('No scope ran during the capture: all busy time was unattributed. Wrap work in rloop.scope() or rloop.enter() to name it.');
  return head + timelinePart + tablePart;
}

module.exports = { id: 'elu', title: 'ELU by scope', render, keyStats, busyCell };

'use strict';
// CPU: where the profile's time went — by kind of work, by package, by function (with the call stacks of the
// heaviest), by scope, and as a flame graph.

const { esc, text } = require('../escape');
const { frame, maxOf, ms, num, pct, where } = require('../format');
const { table, bar, empty } = require('../table');
const { stackDetails } = require('./stacks');
const flame = require('./flame');
const packages = require('./packages');
const { CATEGORIES } = require('../../schema');
const { list } = require('../context');
const facts = require('../facts');

const TOP_FUNCTIONS = 3;

const category = (c) => (CATEGORIES.includes(c) ? c : 'user');

/** Busy time by kind of work, as shares of busy time (idle is no work: said apart). */
function categories(a) {
  const entries = CATEGORIES.filter((c) => c !== 'idle').map((c) => [c, Number(a.categories?.[c]) || 0]).filter(([, v]) => v > 0);
  const total = facts.busyMs(a);
  if (total === 0) return '';
  const parts = entries.map(([c, v]) => `<span class="cat-${c}" style="width:${num((100 * v) / total, 2)}%" data-tip="${esc(`${c}\n${ms(v)}, ${pct(v / total)} of busy time`)}"></span>`);
  const legend = entries.map(([c, v]) => `<span><i class="swatch cat-${c}"></i>${c} ${ms(v)} · ${pct(v / total)}</span>`);
  return '<p class="muted hint">Busy time by kind of work, as shares of busy time (the profile less idle), the basis of every CPU share on this page.</p>'
    + `<div class="catbar" role="img" aria-label="CPU time by kind of work, share of busy time">${parts.join('')}</div><div class="legend">${legend.join('')}</div>`;
}

function heavy(a) {
  const fns = list(a.heavyFunctions);
  if (fns.length === 0) return empty('No function had self time in the profile.');
  const busy = facts.busyMs(a);
  const share = fns.map((f) => facts.busyPercent(f, busy));
  const top = Math.max(maxOf(share), 1e-9);
  return table({
    label: 'Heavy functions',
    columns: [{ label: '#', num: true }, { label: 'Function' }, { label: 'Location' }, { label: 'Kind' },
      { label: 'Self', num: true }, { label: 'Self, % of busy', num: true }],
    rows: fns.map((f, i) => [
      [String(i + 1), i + 1],
      `<span class="fn">${text(f.functionName)}</span>${typeof f.package === 'string' ? ` <span class="muted">${text(f.package)}</span>` : ''}`, where(f),
      `<i class="swatch cat-${category(f.category)}"></i>${category(f.category)}`,
      [ms(f.selfMs), f.selfMs],
      [bar((share[i] ?? 0) / top, `${num(share[i], 1)} %`), share[i] ?? -1],
    ]),
  });
}

function callStacks(a) {
  const heaviest = list(a.callStacks);
  if (heaviest.length === 0) return empty('No call stacks: no function had self time.');
  return heaviest.map((c) => {
    const stacks = list(c.stacks)
      .map((s) => stackDetails(s.frames, `${ms(s.ms)} <span class="muted">(${num(s.percent, 1)} % of its self time)</span>`))
      .join('');
    return `<details class="callers"><summary>${frame(c)} <span class="muted">${ms(c.selfMs)} self</span></summary>${stacks}</details>`;
  }).join('');
}

function scopes(ctx, a) {
  const all = list(a.scopes);
  if (all.length === 0) return empty('No scope timeline was recorded with this profile.');
  const known = all.filter((s) => Number.isFinite(s.busyMs));
  const cpu = known.reduce((sum, s) => sum + (Number(s.ms) || 0), 0);
  const busy = known.reduce((sum, s) => sum + s.busyMs, 0);
  const seen = busy > 0 ? `; here the samples cover ${pct(Math.min(1, cpu / busy))} of the busy time` : '';
  // How the two figures relate: a scope's CPU falls short of its busy time where samples are missing.
  const note = '<p class="muted hint">Each sample goes to the scope busy time charges at the sample\'s own time (every change of scope, as the hooks made it), '
    + 'so a scope\'s CPU is its busy time over the profile (Busy time) as far as the profile has samples: it falls short where samples are missing '
    + `(the thread or the profiler waited for a core, a sample waited for a system call)${seen}. `
    + 'Busy time includes the bookkeeping between a scope\'s callbacks until the next callback or the loop waits; '
    + '(outside callbacks) is what ran after that until the next callback (V8\'s tasks such as garbage collection, libuv), no scope\'s and no busy time.</p>';
  return note + table({
    label: 'CPU by scope',
    columns: [{ label: 'Scope' }, { label: 'Samples', num: true }, { label: 'CPU', num: true }, { label: 'Busy time', num: true },
      { label: 'CPU, % of busy', num: true }, { label: 'Top functions' }],
    rows: all.map((s) => [
      `${ctx.swatch(s.name)}${ctx.scope(s.name)}`, [num(s.samples), s.samples], [ms(s.ms), s.ms],
      Number.isFinite(s.busyMs) ? [ms(s.busyMs), s.busyMs] : ['–', -1],
      [bar((Number(s.percent) || 0) / 100, `${num(s.percent, 1)} %`), s.percent],
      list(s.topFunctions).slice(0, TOP_FUNCTIONS)
        .map((f) => `<span class="fn">${text(f.functionName, 80)}</span> ${ms(f.selfMs)}`).join('<br>'),
    ]),
  });
}

function render(ctx) {
  const profile = ctx.r.profile;
  if (!profile || !profile.analysis) return empty('No CPU profile was taken in this capture (one is taken by capture({ profile: true }) in code, RLOOP_PROFILE=1 in zero-code use, and rloop attach unless --no-profile).');
  const a = profile.analysis;
  const head = `<p class="facts"><span>profile <b>${ms(a.durationMs)}</b></span><span>busy <b>${ms(facts.busyMs(a))}</b></span>`
    + `<span>idle <b>${ms(Number(a.categories?.idle) || 0)}</b></span><span>samples <b>${num(a.samples)}</b></span>`
    + `<span>interval <b>${num(a.intervalUs)} µs</b></span>${profile.file ? `<span>file <code>${text(profile.file, 200)}</code></span>` : ''}</p>`;
  return head + categories(a)
    + `<h3>CPU by package</h3>${packages.render(ctx, a)}`
    + `<h3>Heavy functions</h3>${heavy(a)}`
    + `<h3>Call stacks of the heaviest</h3>${callStacks(a)}`
    + `<h3>CPU by scope</h3>${scopes(ctx, a)}`
    + `<h3 id="flame">Flame graph</h3>${flame.render(ctx, profile.flame)}`;
}

module.exports = { id: 'cpu', title: 'CPU', render };

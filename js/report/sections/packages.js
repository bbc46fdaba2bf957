'use strict';
// CPU by package: whose code the busy time ran in (js/analyze/packages.js), a bar and a table, so an app
// without scopes still learns which dependency keeps the loop busy.

const { esc, text } = require('../escape');
const { maxOf, ms, num } = require('../format');
const { table, bar, capped, empty } = require('../table');
const { list, PALETTE, OTHER_COLOR } = require('../context');
const facts = require('../facts');

const TOP_FUNCTIONS = 3;
// The kinds of work's colours for code that is no package.
const CATEGORY = { app: 'user', node: 'node', native: 'native', gc: 'gc', program: 'program' };
const KIND = { package: 'package', app: 'the app', node: 'Node.js', native: 'native', gc: 'GC', program: 'V8' };
// The scopes' palette less the colours it shares with those kinds (user, node, gc).
const COLORS = PALETTE.filter((c) => !['#f28e2b', '#59a14f', '#edc948'].includes(c));

function render(ctx, a) {
  const all = list(a.packages);
  if (all.length === 0) return empty('No busy time by package in this report (older reports have none).');
  const busy = facts.busyMs(a);
  const share = all.map((p) => facts.busyPercent(p, busy) ?? 0);
  // Packages in their own colours, heaviest first; other code in its kind of work's colour.
  let colors = 0;
  const look = all.map((p) => {
    if (p.kind !== 'package') return { cls: `cat-${CATEGORY[p.kind] ?? 'native'}`, style: '' };
    const other = p.packages !== undefined || colors >= COLORS.length;
    return { cls: '', style: `background:${other ? OTHER_COLOR : COLORS[colors++]}` };
  });
  const attrs = (i, cls, style) => {
    const c = [cls, look[i].cls].filter(Boolean).join(' ');
    const st = [style, look[i].style].filter(Boolean).join(';');
    return `${c ? ` class="${c}"` : ''}${st ? ` style="${st}"` : ''}`;
  };
  const parts = all.map((p, i) => `<span${attrs(i, '', `width:${num(share[i], 2)}%`)}`
    + ` data-tip="${esc(`${p.name}\n${ms(p.selfMs)}, ${num(share[i], 1)} % of busy time`)}"></span>`);
  const top = all.find((p) => p.kind === 'package' && p.packages === undefined);
  const lead = top
    ? `<p>The busiest package, <code>${text(top.name)}</code>, ran <b>${num(facts.busyPercent(top, busy), 1)} %</b> of the busy time in its own code (${ms(top.selfMs)}).</p>`
    : '<p>No package of node_modules ran on this thread during the profile.</p>';
  const hint = '<p class="muted hint">Self time by whose code ran, as shares of busy time: each npm package (by the node_modules folder of its file, '
    + 'the innermost when nested), Node.js\'s own modules and the app\'s files. Native code with no frame of its own file (C++ bindings, '
    + 'compiled regular expressions, JSON.parse, eval) counts for the JavaScript that called it.</p>';
  const most = Math.max(maxOf(share), 1e-9);
  const others = all.find((p) => p.packages !== undefined);
  const listed = all.filter((p) => p.kind === 'package' && p !== others).length;
  const cap = others ? capped(ctx, `CPU by package: the ${num(listed)} busiest of ${num(listed + others.packages)} packages are listed, the rest summed in ${others.name}`) : '';
  return lead + hint
    + `<div class="catbar" role="img" aria-label="CPU time by package, share of busy time">${parts.join('')}</div>`
    + table({
      label: 'CPU by package',
      columns: [{ label: 'Code' }, { label: 'Kind' }, { label: 'Self', num: true }, { label: 'Self, % of busy', num: true }, { label: 'Top functions' }],
      rows: all.map((p, i) => [
        `<i${attrs(i, 'swatch', '')}></i>${text(p.name)}`
          + (p.packages === undefined ? '' : ` <span class="muted">${num(p.packages)}</span>`),
        esc(KIND[p.kind] ?? p.kind),
        [ms(p.selfMs), p.selfMs],
        [bar(share[i] / most, `${num(share[i], 1)} %`), share[i]],
        list(p.topFunctions).slice(0, TOP_FUNCTIONS).map((f) => `<span class="fn">${text(f.functionName, 80)}</span> ${ms(f.selfMs)}`).join('<br>'),
      ]),
    }) + cap;
}

module.exports = { render };

'use strict';
// Tables the page script can sort (click a header), share bars, badges and the notes that say
// what a section leaves out.

const { esc } = require('./escape');
const { num } = require('./format');

/**
 * A sortable table. `columns`: `{ label, num }` (numbers sort descending first, right-aligned).
 * `rows`: arrays of cells, each an HTML string (sorted by its text) or `[html, sortValue]`.
 */
function table({ columns, rows, label, cls = '' }) {
  const head = columns
    .map((c) => `<th scope="col"${c.num ? ' class="num" data-type="num"' : ''} tabindex="0">${esc(c.label)}</th>`)
    .join('');
  const body = rows
    .map((row) => `<tr>${row.map((cell, i) => {
      const [html, value] = Array.isArray(cell) ? cell : [cell];
      const numeric = columns[i].num ? ' class="num"' : '';
      return `<td${numeric}${value === undefined ? '' : ` data-v="${esc(value)}"`}>${html}</td>`;
    }).join('')}</tr>`)
    .join('');
  return `<div class="table-wrap"><table class="sortable ${cls}" aria-label="${esc(label)}"><thead><tr>${head}</tr></thead>`
    + `<tbody>${body}</tbody></table></div>`;
}

/** A horizontal bar for a share 0–1, with its text. */
function bar(share, label) {
  const w = Math.max(0, Math.min(100, (Number(share) || 0) * 100));
  return `<span class="bar"><span style="width:${num(w, 1)}%"></span></span><span class="bar-label">${esc(label)}</span>`;
}

const SEVERITIES = ['critical', 'warning', 'info', 'ok'];

/** A severity badge; an unknown severity shows as 'info'. */
function badge(severity) {
  const s = SEVERITIES.includes(severity) ? severity : 'info';
  return `<span class="badge ${s}">${s}</span>`;
}

/** Notes what a list leaves out (shown in the section and listed at the end of the page). */
function capped(ctx, what) {
  ctx.caps.push(what);
  return `<p class="cap">${esc(what)}</p>`;
}

/** Why a section or part has nothing to show. */
function empty(why) {
  return `<p class="empty">${esc(why)}</p>`;
}

module.exports = { table, bar, badge, capped, empty };

'use strict';
// The capture itself: runtime, span, options, and everything the page left out. Rendered last,
// once the other sections have said what they capped.

const { esc, text } = require('../escape');
const { clock, ms } = require('../format');

function option(value) {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}

function render(ctx) {
  const m = ctx.r.meta ?? {};
  const facts = [
    ['Tool', `${m.tool ?? 'rloop'} ${m.version ?? ''}`],
    ['Runtime', `Node ${m.node ?? '?'} · V8 ${m.v8 ?? '?'} · ${m.platform ?? '?'} ${m.arch ?? ''}`],
    ['Process', `pid ${m.pid ?? '?'} · thread ${m.thread ?? '?'}${m.thread === 0 ? ' (main)' : ''}`],
    ['Span', `${clock(m.start)} to ${clock(m.end)} (${ms(m.durationMs)})`],
    ['Ended', m.partial ? `early: ${m.reason ?? 'unknown'} (partial report)` : 'as planned'],
  ];
  // Finished by the addon, the thread's JS gone (docs/report-schema.md): say what it lacks.
  if (m.incomplete) facts.push(['Written by the addon', `${m.incomplete.reason}; not in this report: ${[m.incomplete.missing].flat().join(', ') || 'nothing'}`]);
  const options = m.options && typeof m.options === 'object' ? Object.entries(m.options) : [];
  const dl = facts.map(([k, v]) => `<dt>${esc(k)}</dt><dd>${text(v, 500)}</dd>`).join('');
  const opts = options.map(([k, v]) => `<span class="opt"><span class="muted">${text(k, 60)}</span> ${text(option(v), 200)}</span>`).join('');
  const caps = ctx.caps.length > 0
    ? `<h3>What this page leaves out</h3><ul class="caps">${ctx.caps.map((c) => `<li>${esc(c)}</li>`).join('')}</ul>`
    : '<p class="muted">This page shows everything the report holds.</p>';
  return `<dl class="meta">${dl}</dl>${opts ? `<h3>Options</h3><p class="opts">${opts}</p>` : ''}${caps}`
    + `<p class="muted">Report schema ${text(ctx.r.schema, 40)}.</p>`;
}

module.exports = { id: 'capture', title: 'Capture', render };

'use strict';
// The HTML rendering of a report: one self-contained page, for tickets and post-mortems, read
// offline months later by someone who never ran rloop. A pure function of the report: inline
// CSS and script, charts as inline SVG, the flame graph's data in a JSON island. A Content
// Security Policy allows nothing but the page's own style and script (by hash): no request can
// leave the page, and markup that got past escaping still could not run.

const crypto = require('node:crypto');
const { esc, jsonIsland } = require('./escape');
const { clock, ms } = require('./format');
const { context } = require('./context');
const style = require('./style');
const { client } = require('./client');
const { flameClient } = require('./client-flame');
const { flameModel } = require('./flame-model');
const summary = require('./sections/summary');
const diagnosis = require('./sections/diagnosis');
const elu = require('./sections/elu');
const nodered = require('./sections/nodered');
const cpu = require('./sections/cpu');
const io = require('./sections/io');
const lag = require('./sections/lag');
const memory = require('./sections/memory');
const allocations = require('./sections/allocations');
const capture = require('./sections/capture');

const SECTIONS = [diagnosis, elu, nodered, cpu, io, lag, memory, allocations, capture]; // capture last: it lists what the others capped
const SCRIPT = `(${client})((${flameModel})(), ${flameClient});`;
const CSP = [
  "default-src 'none'",
  "style-src 'unsafe-inline'", // the bars' widths are inline styles; CSS cannot fetch under default-src 'none'
  `script-src 'sha256-${crypto.createHash('sha256').update(SCRIPT).digest('base64')}'`,
  'img-src data:', // the empty favicon, so the browser asks for none
  "base-uri 'none'",
  "form-action 'none'",
].join('; ');

/** The report as a self-contained HTML page. */
function renderHtml(report) {
  if (report === null || typeof report !== 'object') throw new TypeError('rloop: renderHtml() needs a report object');
  const ctx = context(report);
  const cards = summary.render(ctx);
  const sections = SECTIONS.map((s) => ({ s, html: s.render(ctx) })).filter((x) => x.html !== null);
  const m = report.meta ?? {};
  const title = `rloop report · pid ${m.pid ?? '?'} · ${clock(m.start)}`;
  const nav = sections.map(({ s }) => `<li><a href="#${s.id}">${esc(s.title)}</a></li>`).join('');
  const body = sections.map(({ s, html }) => `<section id="${s.id}" aria-labelledby="${s.id}-h"><h2 id="${s.id}-h">${esc(s.title)}</h2>${html}</section>`).join('\n');
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${CSP}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="rloop">
<title>${esc(title)}</title>
<link rel="icon" href="data:,">
<style>${style}</style>
</head>
<body>
<header><h1>rloop report <span>· pid ${esc(m.pid)} · thread ${esc(m.thread)}</span>${m.partial ? `<span class="partial">partial: ${esc(m.reason ?? 'ended early')}</span>` : ''}</h1>
<p class="sub">${esc(clock(m.start))} · ${esc(ms(m.durationMs))} · Node ${esc(m.node)} · ${esc(m.platform)} ${esc(m.arch)}</p></header>
<nav aria-label="Sections"><ul>${nav}</ul></nav>
<main>
<section id="${summary.id}" aria-label="${summary.title}">${cards}</section>
${body}
</main>
<div id="tip" role="tooltip" hidden></div>
<script type="application/json" id="rloop-data">${jsonIsland(ctx.data)}</script>
<script>${SCRIPT}</script>
</body>
</html>
`;
}

module.exports = { renderHtml };

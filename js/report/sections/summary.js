'use strict';
// The summary cards at the top of the page: the capture's numbers at a glance, each linking to
// its section.

const { esc, text } = require('../escape');
const { maxOf, mb, ms, num, pct } = require('../format');
const { heapSamples, growth } = require('./memory');

const HOT_PERCENT = 1; // a function is hot from this share of the profile

function card(section, label, value, sub, tone = '') {
  return `<a class="card ${tone}" href="#${section}"><span class="label">${esc(label)}</span>`
    + `<span class="value">${value}</span><span class="sub">${sub}</span></a>`;
}

function render(ctx) {
  const { meta = {}, elu, lag, io, heap, profile } = ctx.r;
  const a = profile?.analysis;
  const cards = [];
  cards.push(card('capture', 'Duration', ms(meta.durationMs), meta.partial ? `partial: ${text(meta.reason ?? 'ended early')}` : 'ran its course',
    meta.partial ? 'fair' : ''));
  const threadElu = Number(elu?.thread?.elu);
  cards.push(card('elu', 'Loop busy', pct(threadElu), `${ms(elu?.thread?.busyMs)} of the thread`, threadElu >= 0.9 ? 'poor' : threadElu >= 0.7 ? 'fair' : ''));
  const busiest = ctx.list(elu?.scopes)[0];
  cards.push(card('elu', 'Busiest scope', busiest ? ctx.scope(busiest.name) : '—',
    busiest ? `${pct(busiest.elu)} ELU · ${ms(busiest.busyMs)}` : 'no scope ran', 'wide'));
  cards.push(card('cpu', 'Samples', a ? num(a.samples) : '—', a ? `every ${num(a.intervalUs)} µs over ${ms(a.durationMs)}` : 'no profile taken'));
  const fns = ctx.list(a?.heavyFunctions);
  const hot = fns.filter((f) => Number(f.selfPercent) >= HOT_PERCENT);
  cards.push(card('cpu', 'Hot functions', a ? num(hot.length) : '—',
    fns[0] ? `top: <span class="fn">${text(fns[0].functionName, 60)}</span> ${num(fns[0].selfPercent, 1)} %` : a ? 'no self time' : 'no profile taken'));
  const events = ctx.list(lag?.events);
  const stalls = events.length + (Number(lag?.dropped) || 0);
  cards.push(card('lag', 'Lag events', lag?.enabled ? num(stalls) : '—',
    lag?.enabled ? (stalls > 0 ? `longest ${ms(maxOf(events, (e) => e.lagMs))}` : `none of ${ms(lag.thresholdMs)} or more`) : 'lag detection off',
    stalls > 0 ? 'fair' : ''));
  const slow = ctx.list(io?.events);
  const slowCount = slow.length + (Number(io?.dropped) || 0);
  cards.push(card('io', 'Slow I/O', io?.enabled ? num(slowCount) : '—',
    io?.enabled ? (slowCount > 0 ? `longest ${ms(maxOf(slow, (e) => e.durationMs))}` : `none of ${ms(io.thresholdMs)} or more`) : 'I/O tracking off',
    slowCount > 0 ? 'fair' : ''));
  const samples = heapSamples(heap);
  const delta = heap ? heap.end?.heapUsed - heap.start?.heapUsed : NaN;
  cards.push(card('memory', 'Peak heap', samples.length > 0 ? mb(maxOf(samples, (s) => s.heapUsed)) : '—',
    samples.length > 0 ? `heap used ${mb(delta, true)} over the capture` : 'no heap statistics', samples.length > 0 ? growth(delta) : ''));
  return `<div class="cards">${cards.join('')}</div>`;
}

module.exports = { id: 'summary', title: 'Summary', render };

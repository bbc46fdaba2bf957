'use strict';
// The summary cards at the top of the page: the capture's numbers at a glance, each linking to
// its section.

const { esc, text } = require('../escape');
const { maxOf, size, ms, num, pct } = require('../format');
const { heapSamples, growth } = require('./memory');
const { list } = require('../context');

const HOT_PERCENT = 1; // a function is hot from this share of the profile

function card(section, label, value, sub, cls = '') {
  return `<a class="card ${cls}" href="#${section}"><span class="label">${esc(label)}</span>`
    + `<span class="value">${value}</span><span class="sub">${sub}</span></a>`;
}

/** A card counting the events of `part` (lag or io), kept and dropped, with the longest. */
function events(section, label, part, msOf, off) {
  if (!part?.enabled) return card(section, label, '—', off);
  const kept = list(part.events);
  const count = kept.length + (Number(part.dropped) || 0);
  const sub = count > 0 ? `longest ${ms(maxOf(kept, msOf))}` : `none of ${ms(part.thresholdMs)} or more`;
  return card(section, label, num(count), sub, count > 0 ? 'fair' : '');
}

function render(ctx) {
  const { elu, lag, io, heap, profile } = ctx.r;
  const meta = ctx.r.meta ?? {};
  const a = profile?.analysis;
  const cards = [];
  cards.push(card('capture', 'Duration', ms(meta.durationMs), meta.partial ? `partial: ${text(meta.reason ?? 'ended early')}` : 'ran its course',
    meta.partial ? 'fair' : ''));
  const threadElu = Number(elu?.thread?.elu);
  cards.push(card('elu', 'Loop busy', pct(threadElu), `${ms(elu?.thread?.busyMs)} of the thread`, threadElu >= 0.9 ? 'poor' : threadElu >= 0.7 ? 'fair' : ''));
  const busiest = list(elu?.scopes)[0];
  cards.push(card('elu', 'Busiest scope', busiest ? ctx.scope(busiest.name) : '—',
    busiest ? `${pct(busiest.elu)} ELU · ${ms(busiest.busyMs)}` : 'no scope ran', 'wide'));
  cards.push(card('cpu', 'Samples', a ? num(a.samples) : '—', a ? `every ${num(a.intervalUs)} µs over ${ms(a.durationMs)}` : 'no profile taken'));
  const fns = list(a?.heavyFunctions);
  const hot = fns.filter((f) => Number(f.selfPercent) >= HOT_PERCENT);
  cards.push(card('cpu', 'Hot functions', a ? num(hot.length) : '—',
    fns[0] ? `top: <span class="fn">${text(fns[0].functionName, 60)}</span> ${num(fns[0].selfPercent, 1)} %` : a ? 'no self time' : 'no profile taken'));
  cards.push(events('lag', 'Lag events', lag, (e) => e.lagMs, 'lag detection off'));
  cards.push(events('io', 'Slow I/O', io, (e) => e.durationMs, 'I/O tracking off'));
  const samples = heapSamples(heap);
  const delta = heap ? heap.end?.heapUsed - heap.start?.heapUsed : NaN;
  cards.push(card('memory', 'Peak heap', samples.length > 0 ? size(maxOf(samples, (s) => s.heapUsed)) : '—',
    samples.length > 0 ? `heap used ${size(delta, true)} over the capture` : 'no heap statistics', samples.length > 0 ? growth(delta) : ''));
  return `<div class="cards">${cards.join('')}</div>`;
}

module.exports = { id: 'summary', title: 'Summary', render };

'use strict';
// The summary cards at the top of the page: the capture's numbers at a glance, each linking to
// its section.

const { esc, text } = require('../escape');
const { maxOf, size, ms, num, pct } = require('../format');
const { heapSamples, growth } = require('./memory');
const { list } = require('../context');
const facts = require('../facts');

const HOT_PERCENT = 1; // a function is hot from this share of the profile's busy time

function card(section, label, value, sub, cls = '') {
  return `<a class="card ${cls}" href="#${section}"><span class="label">${esc(label)}</span>`
    + `<span class="value">${value}</span><span class="sub">${sub}</span></a>`;
}

/** The stalls, as the diagnosis and the Lag section count them. */
function stallCard(ctx) {
  const st = facts.stalls(ctx.r);
  if (!st.enabled) return card('lag', 'Loop stalls', '—', 'lag tracking off');
  const sub = st.count > 0 ? `longest ${ms(st.maxMs)}` : `none of ${ms(st.thresholdMs)} or more`;
  return card('lag', 'Loop stalls', num(st.count), sub, st.count > 0 ? 'fair' : '');
}

/** Slow I/O, outgoing and incoming apart: one wait may show on both sides. */
function ioCard(ctx) {
  const io = facts.slowIo(ctx.r);
  if (!io.enabled) return card('io', 'Slow I/O', '—', 'I/O tracking off');
  if (io.events.length + io.dropped === 0) return card('io', 'Slow I/O', '0', `none of ${ms(io.thresholdMs)} or more`);
  const value = `${num(io.outgoing.length)} <span class="unit">out</span> · ${num(io.incoming.length)} <span class="unit">in</span>`;
  const sub = [
    io.outgoing.length > 0 ? `longest out ${ms(io.maxOutMs)}` : '',
    io.incoming.length > 0 ? `longest in ${ms(io.maxInMs)}` : '',
    io.dropped > 0 ? `+${num(io.dropped)} not kept` : '',
  ].filter(Boolean).join(' · ');
  return card('io', 'Slow I/O', value, sub, 'fair');
}

function render(ctx) {
  const { elu, heap, profile } = ctx.r;
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
  const busy = facts.busyMs(a);
  const hot = fns.filter((f) => facts.busyPercent(f, busy) >= HOT_PERCENT);
  cards.push(card('cpu', 'Hot functions', a ? num(hot.length) : '—',
    fns[0] ? `top: <span class="fn">${text(fns[0].functionName, 60)}</span> ${num(facts.busyPercent(fns[0], busy), 1)} % of busy` : a ? 'no self time' : 'no profile taken'));
  cards.push(stallCard(ctx));
  cards.push(ioCard(ctx));
  const samples = heapSamples(heap);
  const g = facts.heapGrowth(ctx.r);
  // Coloured by the growth after start-up when the capture held it: start-up is no leak.
  const delta = g.startUp === null ? `${size(g.total, true)} over the capture` : `${size(g.total, true)} over the capture, ${size(g.startUp, true)} of it in start-up`;
  cards.push(card('memory', 'Peak heap used', samples.length > 0 ? size(maxOf(samples, (s) => s.heapUsed)) : '—',
    samples.length > 0 ? delta : 'no heap statistics', samples.length > 0 ? growth(g.startUp === null ? g.total : g.after) : ''));
  return `<div class="cards">${cards.join('')}</div>`;
}

module.exports = { id: 'summary', title: 'Summary', render };

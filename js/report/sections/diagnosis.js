'use strict';
// Diagnosis: what to look at first. The profile analysis's patterns (js/analyze.js), and what
// the rest of the report shows: a saturated loop, stalls, slow I/O, a growing heap.

const { esc, text } = require('../escape');
const { MB, maxOf, size, ms, num, pct, where } = require('../format');
const { badge, empty } = require('../table');
const { groupBy } = require('../aggregate');
const { topFrame } = require('./lag');
const { list } = require('../context');

const RANK = { critical: 0, warning: 1, info: 2, ok: 3 };

function finding({ severity, title, message, location, suggestion, section }) {
  return `<li class="finding ${RANK[severity] === undefined ? 'info' : severity}">${badge(severity)}`
    + `<div><p class="message">${title ? `<b>${esc(title)}</b> ` : ''}${message}</p>`
    + (location ? `<p class="where">at ${location}</p>` : '')
    + (suggestion ? `<p class="suggestion">${suggestion}</p>` : '')
    + (section ? `<a class="more" href="#${section}">details</a>` : '')
    + '</div></li>';
}

function loop(ctx) {
  const elu = Number(ctx.r.elu?.thread?.elu);
  if (!(elu >= 0.7)) return null;
  const top = list(ctx.r.elu?.scopes)[0];
  return {
    severity: elu >= 0.9 ? 'critical' : 'warning',
    title: 'Busy loop.',
    message: `The event loop was busy ${pct(elu)} of the capture${top ? `; the busiest scope, ${ctx.scope(top.name)}, took ${pct(top.elu)}` : ''}.`,
    suggestion: 'Little headroom is left for new work: latency grows with load. See which scope to make cheaper, or spread the load over workers or processes.',
    section: 'elu',
  };
}

function stalls(ctx) {
  const lag = ctx.r.lag;
  const events = list(lag?.events).filter((e) => Number.isFinite(e.lagMs));
  if (!lag?.enabled || events.length === 0) return null;
  const worst = maxOf(events, (e) => e.lagMs);
  const [scope] = groupBy(events, (e) => e.scope ?? null, (e) => e.lagMs);
  const [place] = groupBy(events.filter((e) => topFrame(e.stack)), (e) => JSON.stringify(topFrame(e.stack)), (e) => e.lagMs);
  return {
    severity: worst >= 1000 ? 'critical' : worst >= 100 ? 'warning' : 'info',
    title: 'Loop stalls.',
    message: `The loop stalled ${num(events.length + (Number(lag.dropped) || 0))} times for ${ms(lag.thresholdMs)} or more, the longest ${ms(worst)}; `
      + `the most lag was in ${ctx.scope(scope.key)} (${num(scope.count)} stalls, ${ms(scope.total)}).`,
    location: place ? where(topFrame(place.items[0].stack)) : null,
    suggestion: 'Nothing else runs while the loop is stalled: split the synchronous work into chunks that yield (setImmediate), or move it to a worker thread.',
    section: 'lag',
  };
}

function slowIo(ctx) {
  const io = ctx.r.io;
  const events = list(io?.events);
  if (!io?.enabled || events.length === 0) return null;
  const [top] = groupBy(events, (e) => `${e.type}\0${e.target}`, (e) => e.durationMs);
  return {
    severity: 'warning',
    title: 'Slow I/O.',
    message: `${num(events.length + (Number(io.dropped) || 0))} I/O operations took ${ms(io.thresholdMs)} or more; the costliest target is `
      + `${text(top.items[0].type)} ${text(top.items[0].target)} (${num(top.count)} slow, longest ${ms(top.max)}).`,
    suggestion: 'Look at the remote side first; set timeouts, reuse connections (keepAlive agents), cache answers, and run independent calls in parallel.',
    section: 'io',
  };
}

function heapGrowth(ctx) {
  const heap = ctx.r.heap;
  const delta = heap ? heap.end?.heapUsed - heap.start?.heapUsed : NaN;
  if (!(delta > MB)) return null;
  return {
    severity: delta > 10 * MB ? 'warning' : 'info',
    title: 'Heap growth.',
    message: `Heap used grew by ${size(delta)} over the capture (${size(heap.start.heapUsed)} to ${size(heap.end.heapUsed)}).`,
    suggestion: 'Growth over one capture may be a cache warming up. If it keeps growing across captures, take heap snapshots (heapSnapshot) at two times and compare what retains the new objects.',
    section: 'memory',
  };
}

function patterns(ctx) {
  return list(ctx.r.profile?.analysis?.patterns).map((p) => ({
    severity: p.id === 'healthy' ? 'ok' : p.severity,
    title: p.id === 'healthy' ? 'CPU profile.' : `${String(p.id)}.`,
    message: text(p.message, 2000),
    location: p.location ? where(p.location) : null,
    suggestion: p.suggestion ? text(p.suggestion, 2000) : null,
    section: 'cpu',
  }));
}

function render(ctx) {
  const found = [loop(ctx), stalls(ctx), slowIo(ctx), heapGrowth(ctx), ...patterns(ctx)].filter(Boolean);
  found.sort((a, b) => (RANK[a.severity] ?? RANK.info) - (RANK[b.severity] ?? RANK.info));
  const note = ctx.r.profile ? '' : empty('No CPU profile was taken in this capture, so no CPU pattern was looked for (capture({ profile: true }) takes one).');
  if (found.length === 0) return `${note}${empty('Nothing stands out in what this capture collected.')}`;
  return `<ul class="findings">${found.map(finding).join('')}</ul>${note}`;
}

module.exports = { id: 'diagnosis', title: 'Diagnosis', render };

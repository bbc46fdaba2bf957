'use strict';
// Memory: the heap stats over the capture as a chart, and each one's change from start to end,
// coloured by how much it grew.

const { esc, text } = require('../escape');
const { MB, finite, maxOf, size, num, offset, plural } = require('../format');
const { plot, chart, hoverColumns, edgesAround, buckets, coord } = require('../svg');
const { table, empty, capped } = require('../table');
const { list } = require('../context');
const facts = require('../facts');

const METRICS = [
  ['rss', 'RSS'],
  ['heapTotal', 'Heap total'],
  ['heapUsed', 'Heap used'],
  ['external', 'External'],
  ['arrayBuffers', 'Array buffers'],
];
const LABEL = Object.fromEntries(METRICS);
const CHARTED = ['rss', 'heapTotal', 'heapUsed', 'external'];
const MAX_POINTS = 240;

/** The heap stats of a report in time order: start, the timeline, end. */
function heapSamples(heap) {
  if (!heap) return [];
  const all = [heap.start, ...list(heap.timeline), heap.end];
  return all.filter((s) => s && finite(s.at)).sort((a, b) => a.at - b.at);
}

/** How a growth of `bytes` reads: green under 1 MB, yellow to 10 MB, red above. */
function growth(bytes) {
  if (!finite(bytes)) return 'na';
  return bytes < MB ? 'good' : bytes <= 10 * MB ? 'fair' : 'poor';
}

function deltas(heap, samples) {
  const rows = METRICS.map(([key, label]) => {
    const start = heap.start?.[key];
    const end = heap.end?.[key];
    const delta = end - start;
    const peak = maxOf(samples, (s) => s[key]);
    return [
      esc(label),
      [size(start), start],
      [size(end), end],
      [`<span class="delta ${growth(delta)}">${size(delta, true)}</span>`, delta],
      [size(peak), peak],
    ];
  });
  return table({
    label: 'Memory at start and end',
    columns: [{ label: 'Metric' }, { label: 'Start', num: true }, { label: 'End', num: true },
      { label: 'Change', num: true }, { label: 'Peak', num: true }],
    rows,
  });
}

function timeline(ctx, samples) {
  const t0 = ctx.start || samples[0].at; // the capture's start: every chart's x axis is the capture
  const span = facts.spanS(ctx.r, (samples[samples.length - 1].at - t0) / 1000);
  // At most MAX_POINTS points a line: each the highest of the samples it stands for.
  const groups = buckets(samples, MAX_POINTS, (s) => (s.at - t0) / 1000, span);
  const points = groups.map((b) => {
    const p = { at: b.reduce((sum, s) => sum + s.at - t0, 0) / b.length / 1000 };
    for (const key of CHARTED) p[key] = maxOf(b, (s) => s[key]);
    return p;
  });
  const yMax = maxOf(points, (pt) => maxOf(CHARTED, (k) => pt[k])) / MB;
  const p = plot({ xMax: span, yMax, height: 240 });
  const lines = CHARTED.map((key) => {
    const d = points.map((pt) => `${coord(p.x(pt.at))},${coord(p.y(pt[key] / MB))}`).join(' ');
    return `<polyline class="line m-${key}" points="${d}"/>`;
  });
  const tips = points.map((pt) => [offset(pt.at), ...CHARTED.map((k) => `${LABEL[k]}: ${size(pt[k])}`)]);
  const g = facts.heapGrowth(ctx.r);
  // Where the app's start-up ended: the growth left of it is the app loading.
  const startUp = g.startUpAt === null ? ''
    : `<line class="start-up" x1="${coord(p.x((g.startUpAt - t0) / 1000))}" x2="${coord(p.x((g.startUpAt - t0) / 1000))}" y1="${coord(p.y(0))}" y2="${coord(p.y(Infinity))}"/>`;
  const body = startUp + lines.join('') + hoverColumns(p, edgesAround(p, points.map((pt) => p.x(pt.at))), tips);
  const legend = CHARTED.map((k) => `<span><i class="swatch m-${k}"></i>${esc(LABEL[k])}</span>`).join('');
  const note = groups.length < samples.length ? capped(ctx, `Memory chart: ${num(samples.length)} samples drawn as ${groups.length} points, each the highest of its span.`) : '';
  return `<div class="legend">${legend}</div>${chart(p, { label: 'Memory over the capture, MB', yFormat: (v) => `${num(v, 0)} MB`, body })}${note}`;
}

/** How much of heap used's growth was the app's start-up, when the capture held it. */
function startUpNote(ctx) {
  const g = facts.heapGrowth(ctx.r);
  if (g.startUp === null) return '';
  return `<p class="facts"><span>start-up, to ${offset((g.startUpAt - ctx.start) / 1000)} (the event loop's first turn, the dashed line) `
    + `<b>${size(g.startUp, true)}</b></span><span>after start-up <b class="delta ${growth(g.after)}">${size(g.after, true)}</b></span>`
    + '<span class="muted">heap used</span></p>';
}

function render(ctx) {
  const heap = ctx.r.heap;
  if (!heap) return empty('Heap statistics were not collected in this capture (capture({ heapStats: true }) collects them).');
  const samples = heapSamples(heap);
  if (samples.length === 0) return empty('The report holds no heap statistics.');
  const parts = [deltas(heap, samples), startUpNote(ctx), timeline(ctx, samples)];
  if (heap.dropped > 0) parts.push(capped(ctx, `Memory: the capture dropped ${plural(heap.dropped, 'older sample')} of its timeline.`));
  if (heap.snapshot) parts.push(`<p>Heap snapshot written to <code>${text(heap.snapshot.path, 1000)}</code> (${size(heap.snapshot.bytes)}).</p>`);
  return parts.join('');
}

module.exports = { id: 'memory', title: 'Memory', render, heapSamples, growth };

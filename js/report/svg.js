'use strict';
// Inline SVG charts over time: a plot area with axes, and the marks drawn on it (stacked bars,
// lines, dots, hover columns). Coordinates are viewBox units; the SVG scales to the page width.

const { esc } = require('./escape');
const { num } = require('./format');
const { round } = require('../round');

const WIDTH = 1200;
const MARGIN = { left: 56, right: 14, top: 12, bottom: 28 };

/** About `count` round steps from 0 to at least `max`. */
function ticks(max, count = 4) {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const out = [];
  for (let v = 0; v < max + step * 1e-9; v += step) out.push(v);
  if (out[out.length - 1] < max) out.push(out[out.length - 1] + step);
  return out;
}

/**
 * A plot of `height` mapping x in [0, xMax] (the axis ends at xMax: a chart over a capture ends
 * where the capture ended) and y in [0, yMax] (rounded up to a tick).
 */
function plot({ height = 220, xMax, yMax }) {
  const xTop = xMax > 0 ? xMax : 1;
  const xs = ticks(xTop, 8).filter((v) => v <= xTop * (1 + 1e-9));
  const ys = ticks(yMax);
  const inner = { w: WIDTH - MARGIN.left - MARGIN.right, h: height - MARGIN.top - MARGIN.bottom };
  const yTop = ys[ys.length - 1];
  return {
    height,
    xs,
    ys,
    inner,
    x: (v) => MARGIN.left + (inner.w * Math.max(0, Math.min(v, xTop))) / xTop,
    y: (v) => MARGIN.top + inner.h - (inner.h * Math.max(0, Math.min(v, yTop))) / yTop,
    w: (v) => (inner.w * v) / xTop,
  };
}

/** The SVG element around `body`: grid, tick labels, axis title. */
function chart(p, { label, xFormat = (v) => `${num(v, 1)} s`, yFormat = (v) => num(v, 1), body }) {
  const grid = p.ys.map((v) => `<line class="grid" x1="${MARGIN.left}" x2="${WIDTH - MARGIN.right}" y1="${round(p.y(v), 1)}" y2="${round(p.y(v), 1)}"/>`
    + `<text class="tick" x="${MARGIN.left - 6}" y="${round(p.y(v), 1) + 4}" text-anchor="end">${esc(yFormat(v))}</text>`);
  const xTicks = p.xs.map((v) => `<text class="tick" x="${round(p.x(v), 1)}" y="${p.height - 8}" text-anchor="middle">${esc(xFormat(v))}</text>`);
  return `<svg class="chart" viewBox="0 0 ${WIDTH} ${p.height}" role="img" aria-label="${esc(label)}">`
    + `${grid.join('')}${xTicks.join('')}<g class="marks">${body}</g></svg>`;
}

/** Transparent full-height columns, the i-th from x `edges[i]` to `edges[i + 1]`, whose hover shows `tips[i]`. */
function hoverColumns(p, edges, tips) {
  return tips
    .map((lines, i) => `<rect class="hover" x="${coord(edges[i])}" y="${MARGIN.top}" width="${coord(edges[i + 1] - edges[i])}" height="${p.inner.h}" ${tip(lines)}/>`)
    .join('');
}

/** Column edges around points at x `xs` (sorted): halfway between neighbours, the plot's ends outside. */
function edgesAround(p, xs) {
  const mid = xs.slice(1).map((x, i) => (xs[i] + x) / 2);
  return [p.x(0), ...mid, p.x(Infinity)];
}

/** A `data-tip` attribute: lines of plain text, each escaped; the first one is the title. */
function tip(lines) {
  return `data-tip="${lines.map((l) => esc(l)).join('\n')}"`;
}

/** A coordinate of the marks as written: 2 decimals (the grid's take 1). */
const coord = (v) => round(v, 2);

/** `items` (sorted by time) as groups: one each up to `max`, else `max` spans of equal time; `at(item)` in s. */
function buckets(items, max, at, span) {
  if (items.length <= max) return items.map((item) => [item]);
  const size = span / max || 1;
  const out = Array.from({ length: max }, () => []);
  for (const item of items) out[Math.min(max - 1, Math.max(0, Math.floor(at(item) / size)))].push(item);
  return out.filter((b) => b.length > 0);
}

module.exports = { plot, chart, hoverColumns, edgesAround, tip, coord, buckets };

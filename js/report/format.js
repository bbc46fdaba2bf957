'use strict';
// Numbers, durations, sizes, times and code locations as the page shows them. Locale-free and
// time-zone-free (UTC), so one report renders to the same page anywhere. A value that is not a
// finite number (a damaged report) shows as '—'.

const { esc, text } = require('./escape');
const { round } = require('../round');

const NONE = '—';
const MB = 1024 * 1024;

const finite = (x) => typeof x === 'number' && Number.isFinite(x);

/** The largest finite `fn(item)`, -Infinity for none (no spread: lists may be long). */
function maxOf(items, fn = (x) => x) {
  let max = -Infinity;
  for (const item of items) {
    const v = fn(item);
    if (finite(v) && v > max) max = v;
  }
  return max;
}

/** `x` with up to `digits` decimals and thousands separated by commas ('12,345.6'). */
function num(x, digits = 0) {
  if (!finite(x)) return NONE;
  const fixed = Math.abs(x).toFixed(digits);
  const [int, frac = ''] = (digits > 0 ? fixed.replace(/\.?0+$/, '') : fixed).split('.');
  const sign = x < 0 && /[1-9]/.test(fixed) ? '-' : '';
  return `${sign}${int.replace(/\B(?=(\d{3})+$)/g, ',')}${frac ? `.${frac}` : ''}`;
}

/** A count and its noun, singular for one: '1 stall', '38 stalls', '1,200 frames'. */
function plural(n, one, many = `${one}s`) {
  return `${num(n)} ${n === 1 ? one : many}`;
}

/** Milliseconds with the precision that matters at their size; seconds from 10 s. */
function ms(x) {
  if (!finite(x)) return NONE;
  if (Math.abs(x) >= 10000) return `${num(x / 1000, 1)} s`;
  return `${num(x, Math.abs(x) < 10 ? 2 : Math.abs(x) < 100 ? 1 : 0)} ms`;
}

/** A share (0–1) as a percentage. */
function pct(share) {
  return finite(share) ? `${num(share * 100, share < 0.1 ? 2 : 1)} %` : NONE;
}

/** Bytes in MB, or KB under 1 MB; a loss shows its '−' as offset() does, and `signed` a gain its '+'. */
function size(bytes, signed = false) {
  if (!finite(bytes)) return NONE;
  const abs = Math.abs(bytes) < MB ? `${num(Math.abs(bytes) / 1024, 0)} KB` : `${num(Math.abs(bytes) / MB, 1)} MB`;
  const sign = !/[1-9]/.test(abs) ? '' : bytes < 0 ? '−' : signed ? '+' : ''; // no '−0 KB'
  return `${sign}${abs}`;
}

/** Seconds from the start of the capture, signed: '+1.25 s', '−0.01 s'. */
function offset(seconds) {
  if (!finite(seconds)) return NONE;
  const r = round(seconds, 2); // no '−0 s'
  return `${r < 0 ? '−' : '+'}${num(Math.abs(r), 2)} s`;
}

/** An epoch time as 'YYYY-MM-DD hh:mm:ss.mmm UTC'. */
function clock(epochMs) {
  if (!finite(epochMs)) return NONE;
  return `${new Date(epochMs).toISOString().replace('T', ' ').replace('Z', '')} UTC`;
}

/** A URL shortened to its last two path segments; the whole of it is in a tooltip. */
function shortUrl(url) {
  const s = String(url ?? '');
  const parts = s.split('/');
  return parts.length > 3 ? `…/${parts.slice(-2).join('/')}` : s;
}

/**
 * 'url:line:column' of a frame, and where it ran when that is its original location (source
 * maps); '(native)' without a line, '(builtin)' for rloop's markers of builtins (rloop:json, rloop:regex).
 */
function locationOf(f) {
  if (typeof f?.url === 'string' && f.url.startsWith('rloop:')) return '(builtin)';
  if (!f || f.line === null || f.line === undefined) return '(native)';
  const at = `${f.url}:${f.line}${f.column === null || f.column === undefined ? '' : `:${f.column}`}`;
  return f.generated ? `${at} (generated: ${locationOf(f.generated)})` : at;
}

/** A frame's location, short: `…/dir/file.js:12`, '(builtin)' or '(native)'. */
function whereText(f) {
  const full = locationOf(f);
  return f && f.line !== null && f.line !== undefined && full !== '(builtin)' ? `${shortUrl(f.url)}:${f.line}` : full;
}

/** A frame's location as HTML: the short form, the full one on hover. */
function where(f) {
  return `<span class="loc" title="${esc(locationOf(f), 2000)}">${text(whereText(f))}</span>`;
}

/** A frame as HTML: function name, then where. */
function frame(f) {
  return `<span class="fn">${text(f?.functionName ?? f?.name ?? '(anonymous)')}</span> ${where(f)}`;
}

/** A frame as one line of plain text, for tooltips. */
function frameText(f) {
  return `${f?.functionName ?? '(anonymous)'} ${f && f.line !== null && f.line !== undefined ? `${shortUrl(f.url)}:${f.line}` : '(native)'}`;
}

module.exports = { MB, finite, maxOf, num, plural, ms, pct, size, offset, clock, shortUrl, locationOf, where, whereText, frame, frameText };

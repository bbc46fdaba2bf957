'use strict';
// The patterns worth acting on, from what js/analyze/index.js measured: a CPU hog, marked kinds of
// work, long calls, GC pressure; each with its share of busy time, severity and advice.

const { percent } = require('./units');
const { round } = require('../round');
const { JSON_, REGEX, CRYPTO, SYNC_IO, GC, REGEXP_PREFIX } = require('./kinds');

const MIN_PATTERN_MS = 1; // less than this is noise at any share
const LOW_LOAD = 10; // % of the profile busy below which a share of busy time overstates the cost
const NEGLIGIBLE = 1; // % of the profile's time below which work is no more than 'info', whatever its share

// Thresholds in % of busy (non-idle) time: the pattern fires above `fires`; its severity is
// 'warning' from `warning`, 'critical' from `critical`, 'info' below, and one level lower when
// the thread was busy less than LOW_LOAD % of the profile (a large share of little work), and
// 'info' at most when the work itself took less than NEGLIGIBLE % of the profile's time (an idle
// app's few milliseconds of GC are a large share of nothing).
const THRESHOLDS = {
  'cpu-hog': { fires: 50, warning: 50, critical: 80 },
  'json-heavy': { fires: 10, warning: 20, critical: 40 },
  'regex-heavy': { fires: 10, warning: 20, critical: 40 },
  'crypto-heavy': { fires: 10, warning: 20, critical: 40 },
  'gc-pressure': { fires: 5, warning: 10, critical: 25 },
  'sync-io': { fires: 0, warning: 5, critical: 20 },
};

const SEVERITIES = ['info', 'warning', 'critical'];

function severity(id, share, lowLoad, negligible) {
  const { warning, critical } = THRESHOLDS[id];
  const level = (share >= warning ? 1 : 0) + (share >= critical ? 1 : 0) - (lowLoad ? 1 : 0);
  return SEVERITIES[negligible ? 0 : Math.max(0, level)];
}

/** Milliseconds as the report shows them: '0.42', '12.5', '1,478', '12.3 s'. */
function msText(us) {
  const x = us / 1000;
  if (x >= 10000) return `${thousands((x / 1000).toFixed(1))} s`;
  return `${thousands(x.toFixed(x < 10 ? 2 : x < 100 ? 1 : 0).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, ''))} ms`;
}

const thousands = (fixed) => fixed.replace(/^(\d+)/, (int) => int.replace(/\B(?=(\d{3})+$)/g, ','));
const plural = (n, one, many = `${one}s`) => `${thousands(String(n))} ${n === 1 ? one : many}`;

function where({ functionName, url, line, column }) {
  return line === null ? `${functionName} (native)` : `${functionName} (${url}:${line}:${column})`;
}

// Marked work: `label` names the kind, `api(frame)` the marking frame the caller used.
const CATEGORY_PATTERNS = [
  {
    id: 'json-heavy',
    category: JSON_,
    label: 'JSON.parse/stringify',
    api: (frame) => frame.functionName,
    suggestion:
      'Handle less JSON on the loop: smaller payloads (paginate, select fields), a streaming parser for large documents, ' +
      'a schema-based serializer (fast-json-stringify) for hot responses, or a worker thread for big documents.',
  },
  {
    id: 'regex-heavy',
    category: REGEX,
    label: 'Regular expressions',
    // The pattern when it was compiled while the profile ran, else the method rloop marked.
    api: (frame) => (frame.functionName.startsWith(REGEXP_PREFIX) ? `/${frame.functionName.slice(REGEXP_PREFIX.length)}/` : frame.functionName),
    suggestion:
      'Look for catastrophic backtracking (nested or overlapping quantifiers such as (a+)+ or (a|a)*), bound the input ' +
      'length before matching, anchor and simplify the pattern, or use a linear-time engine (re2).',
  },
  {
    id: 'crypto-heavy',
    category: CRYPTO,
    label: 'Crypto',
    api: (frame) => `crypto ${frame.functionName}`,
    suggestion:
      'Use the asynchronous variants (crypto.pbkdf2, crypto.scrypt, crypto.generateKeyPair…), which run on the libuv ' +
      'threadpool; cache derived keys and hashes; hash large data as a stream.',
  },
  {
    id: 'sync-io',
    category: SYNC_IO,
    label: 'Synchronous I/O',
    api: (frame) => frame.functionName,
    suggestion:
      'Use the asynchronous APIs (fs.promises, child_process.spawn/execFile) on request paths; keep *Sync calls to startup ' +
      'and shutdown, or move them to a worker thread. (Node loading modules, require() and import, is not counted here.)',
  },
];

/** The patterns that fire, most severe first; 'healthy' alone when none does. */
function findPatterns({ busyUs, durationUs, categoryUs, hog, locations, gcSite, long, thresholdUs }) {
  const out = [];
  const lowLoad = busyUs < (LOW_LOAD / 100) * durationUs;
  const add = (id, us, location, message, suggestion) => {
    const share = percent(us, busyUs);
    if (us / 1000 < MIN_PATTERN_MS || !(share > THRESHOLDS[id].fires)) return;
    const negligible = us < (NEGLIGIBLE / 100) * durationUs;
    out.push({ id, severity: severity(id, share, lowLoad, negligible), message, location, suggestion, percent: share });
  };
  const of = (us) => `${round(percent(us, busyUs), 1)} % of busy time, ${msText(us)}`;

  const hogLong = hog && long.find((c) => c.fn === hog.fn);
  if (hog) {
    add(
      'cpu-hog',
      hog.us,
      hog.frame,
      `${where(hog.frame)} took ${of(hog.us)}, in its own code`
        + (hogLong ? `; ${plural(hogLong.calls, 'single call')} lasted ${msText(thresholdUs)} or more, the longest ${msText(hogLong.maxUs)}` : ''),
      'Make it do less per call (cache, precompute, better algorithm), split it into chunks that yield to the loop ' +
        '(setImmediate), or move it to a worker thread. Its call stacks show who calls it.',
    );
  }
  for (const { id, category, label, api, suggestion } of CATEGORY_PATTERNS) {
    const top = locations[category];
    if (!top) continue;
    const us = categoryUs[category];
    const mostly = `mostly ${api(top.api)}${top.site ? ` called from ${where(top.site)}` : ''}`;
    add(id, us, top.site ?? top.api, `${label} took ${of(us)}, ${mostly}`, suggestion);
  }
  // A hog's long calls are said in its own pattern.
  const blocking = out.some((p) => p.id === 'cpu-hog') ? long.filter((c) => c !== hogLong) : long;
  if (blocking.length > 0 && blocking[0].us / 1000 >= MIN_PATTERN_MS) {
    const [top, ...others] = blocking;
    const share = percent(top.us, busyUs);
    const level = (top.maxUs >= 1000e3 ? 2 : top.maxUs >= 100e3 || top.calls >= 3 ? 1 : 0) - (lowLoad ? 1 : 0);
    out.push({
      id: 'long-calls',
      severity: SEVERITIES[Math.max(0, level)],
      message: `${plural(top.calls, 'single call')} of ${where(top.frame)} lasted ${msText(thresholdUs)} or more, `
        + `the longest ${msText(top.maxUs)}: they blocked the loop for ${of(top.us)}`
        + (others.length > 0 ? `. ${plural(others.length, 'other function')} also made such calls, the first ${where(others[0].frame)}` : ''),
      location: top.frame,
      suggestion:
        'One call this long delays every other callback, timer and request by as much. Split the work into chunks that yield ' +
        '(setImmediate between batches), bound the input it handles per call, or move it to a worker thread.',
      percent: share,
    });
  }
  add(
    'gc-pressure',
    categoryUs[GC],
    gcSite,
    `Garbage collection took ${of(categoryUs[GC])}${gcSite ? `, most often right after ${where(gcSite)}` : ''}`,
    'Allocate less on hot paths: reuse objects and buffers, avoid temporary arrays, strings and closures in loops. ' +
      'A heap sampling profile shows the allocation sites; a larger young generation (--max-semi-space-size) helps ' +
      'when most garbage is short-lived.',
  );

  if (out.length === 0) {
    const load = percent(busyUs, durationUs);
    return [{
      id: 'healthy',
      severity: 'info',
      message: `No CPU pattern above its threshold; the thread was busy ${load} % of the profile.`,
      location: null,
      suggestion: null,
      percent: load,
    }];
  }
  const rank = (p) => SEVERITIES.indexOf(p.severity);
  return out.sort((a, b) => rank(b) - rank(a) || b.percent - a.percent);
}

module.exports = { findPatterns };

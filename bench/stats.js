'use strict';
// Robust summaries of round values: the machine is shared, so medians and MADs, not means.

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** Median, median absolute deviation and min–max of `xs` (one value per round). */
function summarize(xs) {
  const m = median(xs);
  return {
    median: m,
    mad: median(xs.map((x) => Math.abs(x - m))),
    min: Math.min(...xs),
    max: Math.max(...xs),
    n: xs.length,
  };
}

module.exports = { median, summarize };

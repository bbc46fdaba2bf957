'use strict';
// Robust summaries of round values: the machine is shared, so medians and MADs, not means.

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/**
 * A 95 % confidence interval of the median that assumes nothing of the distribution: the
 * order statistics at n/2 ∓ 0.98·√n (normal approximation of the binomial), clipped to the
 * extremes when there are too few values for better.
 */
function medianInterval(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const half = 0.98 * Math.sqrt(s.length);
  const lo = Math.max(0, Math.floor(s.length / 2 - half) - 1);
  const hi = Math.min(s.length - 1, Math.ceil(s.length / 2 + half));
  return [s[lo], s[hi]];
}

/** Median, its 95 % interval, median absolute deviation and min–max of `xs` (one value per round). */
function summarize(xs) {
  const m = median(xs);
  return {
    median: m,
    ci95: medianInterval(xs),
    mad: median(xs.map((x) => Math.abs(x - m))),
    min: Math.min(...xs),
    max: Math.max(...xs),
    n: xs.length,
  };
}

module.exports = { median, medianInterval, summarize };

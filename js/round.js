'use strict';
// The one rounding of numbers to decimal digits, for reports, events and the page: pure, so
// analyze/ and report/ may use it. Display strings (toFixed) and whole units (bytes, ns) are
// not this.

/** `x` rounded to `digits` decimals (half up, as Math.round). */
function round(x, digits) {
  const scale = 10 ** digits;
  return Math.round(x * scale) / scale;
}

module.exports = { round };

'use strict';
// The page's sizes carry one minus sign, the typographic one offset() uses, so "-290 KB" and
// "−290 KB" never both appear on one page (a heap that shrank after start-up showed the first).

const test = require('node:test');
const assert = require('node:assert');
const { size, offset } = require('../../js/report/format');

test('sizes: a loss shows "−" as offsets do, a signed gain "+", and rounding to zero no sign', () => {
  assert.strictEqual(size(-290 * 1024, true), '−290 KB');
  assert.strictEqual(size(-3.5 * 1024 * 1024), '−3.5 MB');
  assert.strictEqual(size(66.4 * 1024 * 1024, true), '+66.4 MB');
  assert.strictEqual(size(2048), '2 KB');
  assert.strictEqual(size(-100, true), '0 KB');
  assert.strictEqual(size(NaN), '—');
  assert.strictEqual(offset(-0.5), '−0.5 s');
});

'use strict';
// Allocations: the sampling heap profile of a capture (heapProfile), bytes by function and, with
// a CPU profile, by scope, with the bytes no scope can be given said as such.

const { text } = require('../escape');
const { num, size, frame } = require('../format');
const { table, bar, empty } = require('../table');
const { list } = require('../context');

function functions(h) {
  const all = list(h.functions).filter((f) => f && typeof f === 'object');
  if (all.length === 0) return empty('No allocation of the app\'s was sampled.');
  return table({
    label: 'Allocations by function',
    columns: [{ label: 'Function' }, { label: 'Package' }, { label: 'Allocated', num: true }, { label: 'Share', num: true }, { label: 'Samples', num: true }],
    rows: all.map((f) => [
      frame(f), f.package ? text(f.package, 80) : '', [size(f.bytes), f.bytes],
      [bar((Number(f.percent) || 0) / 100, `${num(f.percent, 1)} %`), f.percent], [num(f.samples), f.samples],
    ]),
  });
}

function scopes(ctx, h) {
  if (h.scopes === null || typeof h.scopes !== 'object') return empty('By scope with a CPU profile in the same capture (capture({ profile: true, heapProfile: true })): it tells the scopes each stack ran in.');
  const share = (b) => (h.bytes > 0 ? b / h.bytes : 0);
  const row = (name, b) => [name, [size(b), b], [bar(share(b), `${num(100 * share(b), 1)} %`), b]];
  const rows = list(h.scopes.byScope).filter((s) => s && typeof s === 'object').map((s) => row(`${ctx.swatch(s.scope)}${ctx.scope(s.scope)}`, s.bytes));
  if (h.scopes.several > 0) rows.push(row('<span class="muted">several scopes, on one stack: not split</span>', h.scopes.several));
  if (h.scopes.unsampled > 0) rows.push(row('<span class="muted">stacks the CPU profile never sampled</span>', h.scopes.unsampled));
  if (h.rloopBytes > 0) rows.push(row('<span class="muted">rloop itself</span>', h.rloopBytes));
  const note = '<p class="muted hint">V8 records no time with an allocation: its scope is the one the CPU profile\'s samples in the same stack of the app\'s code ran in. '
    + 'Where that stack ran in several scopes, its bytes are theirs together, not split by a guess.</p>';
  return note + table({ label: 'Allocations by scope', columns: [{ label: 'Scope' }, { label: 'Allocated', num: true }, { label: 'Share', num: true }], rows });
}

function render(ctx) {
  const h = ctx.r.heapProfile;
  if (h === null || typeof h !== 'object') return null; // asked for by capture({ heapProfile: true }) only: no section otherwise
  const head = `<p class="facts"><span>allocated <b>${size(h.bytes)}</b></span><span>samples <b>${num(h.samples)}</b></span>`
    + `<span>one in every <b>${size(h.samplingIntervalBytes)}</b></span>${h.pprof ? `<span>pprof <code>${text(h.pprof, 200)}</code></span>` : ''}</p>`
    + '<p class="muted hint">What the code allocated over the capture, objects collected since included: the churn the garbage collector pays for, not what is live.</p>';
  return `${head}<h3>By function</h3>${functions(h)}<h3>By scope</h3>${scopes(ctx, h)}`;
}

module.exports = { id: 'allocations', title: 'Allocations', render };

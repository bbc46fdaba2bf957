'use strict';
// I/O: slow operations grouped by type and target with the stacks that started them, and every
// operation of the capture, slow or not, summed by type and target; incoming requests by route
// where it is known, the paths it stands for named.

const { esc, text } = require('../escape');
const { frameText, ms, num, pct, plural } = require('../format');
const { table, empty, capped } = require('../table');
const { stackDetails } = require('./stacks');
const { groupBy } = require('../aggregate');
const { list } = require('../context');
const { topFrame } = require('../../own');
const facts = require('../facts');

const MAX_GROUPS = 100;
const MAX_TARGETS = 50;
const STACKS_PER_GROUP = 3;
const STACK_KEY_FRAMES = 8;

const listed = (values, max = 4) => {
  const counts = groupBy(values, (v) => v, () => 1);
  const shown = counts.slice(0, max).map((c) => `${text(c.key, 60)}${c.count > 1 ? ` ×${num(c.count)}` : ''}`).join(', ');
  return shown + (counts.length > max ? ` <span class="muted">+${counts.length - max}</span>` : '');
};

/** The most frequent distinct caller stacks of a group's events. */
function callers(events) {
  const stacks = groupBy(
    events.filter((e) => list(e.stack).length > 0),
    (e) => e.stack.slice(0, STACK_KEY_FRAMES).map(frameText).join('\n'),
    () => 1,
  );
  if (stacks.length === 0) return '<span class="muted">no stack (incoming, or started by Node)</span>';
  return stacks.slice(0, STACKS_PER_GROUP)
    .map((s) => stackDetails(s.items[0].stack, `${esc(frameText(topFrame(s.items[0].stack)))}${s.count > 1 ? ` <span class="muted">×${num(s.count)}</span>` : ''}`, { userFirst: true }))
    .join('') + (stacks.length > STACKS_PER_GROUP ? `<span class="muted">+${stacks.length - STACKS_PER_GROUP} other stacks</span>` : '');
}

/** A group's target: the route with the paths it stood for, or the target; its methods beside. */
function targetCell(g) {
  const methods = `<span class="muted">${listed(g.items.map((i) => i.method), 2)}</span>`;
  const e = g.items[0];
  const paths = g.items.filter((i) => i.route !== undefined && i.target !== i.route).map((i) => i.target);
  const route = paths.length > 0 ? ` <span class="muted">route of ${listed(paths, 3)}</span>` : '';
  return `<span class="target">${text(facts.targetOf(e))}</span> ${methods}${route}`;
}

function slow(ctx, events, stallEvents) {
  const groups = facts.byTarget(events);
  const rows = groups.slice(0, MAX_GROUPS).map((g) => {
    const e = g.items[0];
    const stalled = facts.stalledDuring(g.items, stallEvents).ms;
    const share = g.total > 0 ? stalled / g.total : 0;
    const outcome = (i) => (i.state === 'pending' ? 'still pending at the end' : i.error !== undefined ? `error ${i.error}` : i.status !== undefined ? String(i.status) : 'ok');
    const outcomes = g.items.map(outcome);
    return [
      text(e.type), targetCell(g),
      [num(g.count), g.count], [ms(g.total), g.total], [ms(g.max), g.max],
      [stalled > 0 ? `${ms(stalled)} <span class="muted">${pct(share)}</span>` : '<span class="muted">none</span>', stalled],
      listed(outcomes),
      listed(g.items.map((i) => ctx.scopeText(i.scope)), 2), callers(g.items),
    ];
  });
  const note = groups.length > MAX_GROUPS ? capped(ctx, `Slow I/O: the ${MAX_GROUPS} costliest of ${num(groups.length)} type and target groups are listed.`) : '';
  return table({
    label: 'Slow I/O by type and target',
    columns: [{ label: 'Type' }, { label: 'Target' }, { label: 'Slow', num: true }, { label: 'Total', num: true },
      { label: 'Longest', num: true }, { label: 'Loop stalled meanwhile', num: true }, { label: 'Outcome' }, { label: 'Scopes' },
      { label: 'Callers (callers first)' }],
    rows,
  }) + note;
}

function aggregates(ctx, byType) {
  const stat = (a) => [[num(a.count), a.count], [ms(a.totalMs), a.totalMs], [ms(a.avgMs), a.avgMs], [ms(a.maxMs), a.maxMs], [num(a.errors), a.errors]];
  const statColumns = ['Count', 'Total', 'Average', 'Longest', 'Errors'].map((label) => ({ label, num: true }));
  const types = table({ label: 'All I/O by type', columns: [{ label: 'Type' }, ...statColumns], rows: byType.map((a) => [text(a.type), ...stat(a)]) });
  const targets = byType.flatMap((a) => list(a.targets).map((t) => ({ type: a.type, ...t }))).sort((a, b) => b.totalMs - a.totalMs);
  const top = table({
    label: 'All I/O by target',
    columns: [{ label: 'Type' }, { label: 'Target' }, ...statColumns],
    rows: targets.slice(0, MAX_TARGETS).map((t) => [text(t.type), `<span class="target">${text(t.target)}</span>${t.route === true ? ' <span class="muted">route</span>' : ''}`, ...stat(t)]),
  });
  const note = targets.length > MAX_TARGETS ? capped(ctx, `All I/O: the ${MAX_TARGETS} costliest of ${num(targets.length)} targets are listed.`) : '';
  return `<div class="cols"><div><h3>All operations by type</h3>${types}</div><div><h3>Costliest targets</h3>${top}${note}</div></div>`;
}

function render(ctx) {
  const io = ctx.r.io;
  if (!io || !io.enabled) return empty('I/O tracking was off for this capture (rloop.start({ io: true }) turns it on).');
  const f = facts.slowIo(ctx.r);
  const events = list(io.events);
  const byType = list(io.aggregates);
  const head = `<p class="facts"><span>slow from <b>${ms(io.thresholdMs)}</b></span><span>slow outgoing <b>${num(f.outgoing.length)}</b></span>`
    + `<span>slow incoming (http-in) <b>${num(f.incoming.length)}</b></span>${f.dropped > 0 ? `<span>not kept <b>${num(f.dropped)}</b></span>` : ''}`
    + `<span>all operations <b>${num(byType.reduce((n, a) => n + (Number(a.count) || 0), 0))}</b></span></p>`
    + '<p class="muted hint">An incoming request that waits on an outgoing call is one wait seen from both sides: the two are counted apart. '
    + '<i>Loop stalled meanwhile</i> is the part of the wait during which the app\'s own loop was stalled (see Lag); of an outgoing wait, only the stall its response arrived in delayed it (see the Diagnosis).</p>';
  const dropped = io.dropped > 0 ? capped(ctx, `Slow I/O: the capture kept ${plural(events.length, 'slow operation')} and dropped ${num(io.dropped)} more; the groups count the kept ones.`) : '';
  const slowPart = events.length > 0 ? slow(ctx, events, facts.stalls(ctx.r).recorded) : empty(`No I/O operation took ${ms(io.thresholdMs)} or more.`);
  const allPart = byType.length > 0 ? aggregates(ctx, byType) : empty('No outgoing or incoming I/O operation ended during the capture.');
  return `${head}${dropped}<h3>Slow operations</h3>${slowPart}${allPart}`;
}

module.exports = { id: 'io', title: 'Slow I/O', render };

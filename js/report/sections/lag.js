'use strict';
// Lag: each stall of the loop on a timeline (a dot sized by how long it lasted; hover for its
// scope and stack), and stalls summed by scope and by the code that was running; with each
// stall, how much of it the thread ran and what collected garbage (js/report/taken.js), said
// beside any code named for stalls mostly not that code's.

const { esc, text } = require('../escape');
const { clock, frame, frameText, maxOf, ms, num, offset, plural } = require('../format');
const { plot, chart, tip, coord } = require('../svg');
const { table, empty, capped } = require('../table');
const { stackDetails, visibleFrames } = require('./stacks');
const { groupBy } = require('../aggregate');
const { list } = require('../context');
const { topFrame } = require('../../own');
const facts = require('../facts');
const taken = require('../taken');

const MAX_DOTS = 500;
const MAX_ROWS = 25;
const WORST = 20;
const TIP_FRAMES = 6;

// Stacks are taken mid-function: stalls in one function group together, whatever the line.
const functionKey = (f) => (f ? `${f.functionName}\0${f.url}` : '');

function timeline(ctx, events, thresholdMs) {
  const shown = events.length > MAX_DOTS ? [...events].sort((a, b) => b.lagMs - a.lagMs).slice(0, MAX_DOTS) : events;
  const durationS = facts.spanS(ctx.r, maxOf(shown, (e) => (e.at - ctx.start) / 1000));
  const maxLag = Math.max(maxOf(shown, (e) => e.lagMs), thresholdMs || 0);
  const p = plot({ xMax: durationS, yMax: maxLag * 1.1 });
  const dots = [...shown]
    .sort((a, b) => b.lagMs - a.lagMs) // small dots drawn last, on top
    .map((e) => {
      const r = 3 + 9 * Math.sqrt(Math.max(0, e.lagMs) / maxLag);
      const stack = visibleFrames(e.stack);
      const lines = [
        `${ms(e.lagMs)} stall at ${offset((e.at - ctx.start) / 1000)} (${clock(e.at)})`,
        `scope: ${ctx.scopeText(e.scope)}${e.key === null || e.key === undefined ? '' : `, key ${e.key}`}`,
        ...(e.native ? [`in native ${e.native} work`] : []),
        ...(e.rloopMs > 0 ? [`${ms(e.rloopMs)} of it rloop ${facts.OWN_WORK}`] : []),
        ...[taken.words(taken.ofStall(e))].filter(Boolean),
        ...[taken.caveat(taken.ofStall(e))].filter(Boolean).map((why) => `not all its code's: ${why}`),
        ...(e.stackFrom === 'profile' && stack.length > 0 ? [FROM_PROFILE] : []),
        ...(stack.length > 0 ? stack.slice(0, TIP_FRAMES).map((f) => `  ${frameText(f)}`) : [noStack(e)]),
        ...(topFrame(e.stackBefore) ? [`${BEFORE} ${frameText(topFrame(e.stackBefore))}`] : []),
      ];
      return `<circle class="dot" cx="${coord(p.x((e.at - ctx.start) / 1000))}" cy="${coord(p.y(e.lagMs))}" r="${coord(r)}" `
        + `style="fill:${esc(ctx.color(e.scope))}" ${tip(lines)}/>`;
    });
  const limit = thresholdMs > 0 ? `<line class="threshold" x1="${coord(p.x(0))}" x2="${coord(p.x(Infinity))}" y1="${coord(p.y(thresholdMs))}" y2="${coord(p.y(thresholdMs))}"/>` : '';
  const note = shown.length < events.length ? capped(ctx, `Lag timeline: the ${num(shown.length)} longest of ${num(events.length)} stalls are drawn.`) : '';
  return chart(p, { label: 'Stalls over the capture, ms', yFormat: (v) => `${num(v, 0)} ms`, body: limit + dots.join('') }) + note;
}

/** Why a stall has no stack of its blocker, in a line. */
function noStack(e) {
  if (e.stackNote) return `no stack of the blocker: ${e.stackNote}`;
  return e.atStart ? 'no stack: it began before rloop started' : 'no stack: the stall ended before one was taken';
}

/** The part of a stall that was rloop's own work, as a muted line. */
function ownWork(e) {
  return e.rloopMs > 0 ? `<br><span class="muted">${ms(e.rloopMs)} of it rloop ${facts.OWN_WORK}</span>` : '';
}

/** How much of a stall the thread ran, and its GC, as a muted line. */
function thread(e) {
  const said = taken.words(taken.ofStall(e));
  return said ? `<br><span class="muted">${esc(said)}</span>` : '';
}

/** Who ran inside a stall, as text: "a 200 ms, b 50 ms". */
function inside(ctx, e) {
  const scopes = list(e.scopes).filter((s) => s.ms >= 1);
  return scopes.length < 2 ? '' : scopes.slice(0, 3).map((s) => `${ctx.scopeText(s.scope)} ${ms(s.ms)}`).join(', ');
}

function byScope(ctx, events) {
  const groups = groupBy(events, (e) => e.scope ?? null, (e) => e.lagMs);
  return table({
    label: 'Stalls by scope',
    columns: [{ label: 'Scope' }, { label: 'Stalls', num: true }, { label: 'Total', num: true }, { label: 'Longest', num: true }],
    rows: groups.slice(0, MAX_ROWS).map((g) => [
      `${ctx.swatch(g.key)}${ctx.scope(g.key)}`, [num(g.count), g.count], [ms(g.total), g.total], [ms(g.max), g.max],
    ]),
  }) + (groups.length > MAX_ROWS ? capped(ctx, `Stalls by scope: the ${MAX_ROWS} with the most lag of ${num(groups.length)} scopes are listed.`) : '');
}

function byLocation(ctx, events) {
  const groups = groupBy(events, (e) => functionKey(topFrame(e.stack)), (e) => e.lagMs);
  return table({
    label: 'Stalls by code location',
    columns: [{ label: 'Code running (top frame of the app)' }, { label: 'Stalls', num: true }, { label: 'Total', num: true },
      { label: 'Longest', num: true }, { label: 'Scopes' }],
    rows: groups.slice(0, MAX_ROWS).map((g) => {
      const f = topFrame(g.items[0].stack);
      const scopes = [...new Set(g.items.map((e) => e.scope ?? null))];
      const why = f ? taken.caveat(taken.ofStalls(g.items)) : null;
      return [
        (f ? frame(f) : '<span class="muted">no stack taken</span>') + (why ? `<br><span class="muted">but ${esc(why)}</span>` : ''),
        [num(g.count), g.count], [ms(g.total), g.total], [ms(g.max), g.max],
        scopes.slice(0, 2).map((s) => ctx.scope(s)).join(', ') + (scopes.length > 2 ? ` <span class="muted">+${scopes.length - 2} more</span>` : ''),
      ];
    }),
  }) + (groups.length > MAX_ROWS ? capped(ctx, `Stalls by code location: the ${MAX_ROWS} with the most lag of ${num(groups.length)} locations are listed.`) : '');
}

function worst(ctx, events) {
  const top = [...events].sort((a, b) => b.lagMs - a.lagMs).slice(0, WORST);
  return table({
    label: 'Longest stalls',
    columns: [{ label: 'At', num: true }, { label: 'Lag', num: true }, { label: 'Scope' }, { label: 'Key' }, { label: 'Stack' }],
    rows: top.map((e) => [
      [offset((e.at - ctx.start) / 1000) + (e.atStart ? ' <span class="muted">(start-up)</span>' : ''), e.at],
      [ms(e.lagMs) + (e.ongoing ? ' <span class="muted">(still going on)</span>' : '') + ownWork(e) + thread(e), e.lagMs],
      ctx.scope(e.scope) + (inside(ctx, e) ? `<br><span class="muted">inside: ${esc(inside(ctx, e))}</span>` : ''),
      e.key === null || e.key === undefined ? '' : text(e.key, 80),
      (e.native ? `<span class="muted">native ${esc(e.native)} work</span><br>` : '') + stackCell(e),
    ]),
  });
}

// A profile's samples inside the stall are right even where V8 could not be interrupted.
const FROM_PROFILE = 'stack from the CPU profile\'s samples inside the stall';
// The profile's samples in order: the code the stall ran before the blocker (how it got there).
const BEFORE = 'ran just before it:';

function stackCell(e) {
  if (list(e.stack).length > 0) {
    const from = e.stackFrom === 'profile' ? `<span class="muted">${esc(FROM_PROFILE)}</span><br>` : '';
    const why = taken.caveat(taken.ofStall(e));
    const notAll = why ? `<span class="muted">not all this code's: ${esc(why)}</span><br>` : '';
    return notAll + from + stackDetails(e.stack, esc(frameText(topFrame(e.stack)))) + ranBefore(e);
  }
  const seen = list(e.stackSeen).length > 0 ? stackDetails(e.stackSeen, 'frames that ran after it') : '';
  return `<span class="muted">${esc(noStack(e))}</span>${seen}`;
}

/** What the profile saw run in the stall just before its blocker: how the loop got there. */
function ranBefore(e) {
  const before = topFrame(e.stackBefore);
  return before ? stackDetails(e.stackBefore, `<span class="muted">${esc(BEFORE)}</span> ${esc(frameText(before))}`) : '';
}

function render(ctx) {
  const lag = ctx.r.lag;
  if (!lag || !lag.enabled) return empty('Lag tracking was off for this capture (rloop.start({ lag: true }) turns it on).');
  const st = facts.stalls(ctx.r);
  const { events } = st;
  const head = `<p class="facts"><span>threshold <b>${ms(lag.thresholdMs)}</b></span><span>stalls <b>${num(st.count)}</b></span>`
    + `<span>longest <b>${ms(st.maxMs)}</b></span><span>busy stretches <b>${num(st.stretches)}</b></span>`
    + `<span>p99 stretch (worst window) <b>${ms(st.p99Ms)}</b></span></p>`;
  const own = st.own.length > 0 ? `<p class="muted">${esc(facts.ownStallsText(st))}</p>` : '';
  if (events.length === 0) return head + own + empty(`No stall of ${ms(lag.thresholdMs)} or more was recorded during the capture.`);
  const dropped = lag.dropped > 0 ? capped(ctx, `Lag: the capture kept ${plural(events.length, 'stall')} and dropped ${num(lag.dropped)} more; the tables count the kept ones.`) : '';
  return head + own + dropped + timeline(ctx, events, lag.thresholdMs)
    + `<h3>By scope</h3>${byScope(ctx, events)}<h3>By code location</h3>${byLocation(ctx, events)}`
    + `<h3>Longest stalls</h3>${worst(ctx, events)}`;
}

module.exports = { id: 'lag', title: 'Lag', render, topFrame };

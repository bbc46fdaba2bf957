'use strict';
// Diagnosis: what to look at first. The profile analysis's patterns (js/analyze/index.js), and what
// the rest of the report shows: a saturated loop, stalls (and what took their time besides their
// code), CPU taken from the busy loop, slow I/O, a growing heap. The findings are built once, in a
// voice: HTML for the page, plain text for the terminal (js/report/terminal.js).

const { esc, text } = require('../escape');
const { MB, size, ms, num, pct, where, whereText, plural, frame, offset, maxOf } = require('../format');
const { badge, empty } = require('../table');
const { groupBy } = require('../aggregate');
const { topFrame } = require('../../own');
const { list } = require('../context');
const facts = require('../facts');
const taken = require('../taken');

const RANK = { critical: 0, warning: 1, info: 2, ok: 3 };
const BLOCKED_SHARE = 0.2; // of a slow wait the app's own stalls may have held, from which they come first
// The profile's patterns by id, titled as the page's own findings are.
const TITLES = {
  'cpu-hog': 'CPU hog.',
  'long-calls': 'Long calls.',
  'json-heavy': 'JSON-heavy.',
  'regex-heavy': 'Regex-heavy.',
  'crypto-heavy': 'Crypto-heavy.',
  'sync-io': 'Synchronous I/O.',
  'gc-pressure': 'GC pressure.',
  healthy: 'CPU profile.',
};

// How a finding names what it shows: app text escaped and isolated on the page, as it is in a terminal.
const VOICES = {
  html: { text, esc, scope: (ctx, name) => ctx.scope(name), frame, where },
  text: {
    text: (value) => String(value),
    esc: (value) => String(value),
    scope: (ctx, name) => ctx.scopeText(name),
    frame: (f) => `${f?.functionName || '(anonymous)'} ${whereText(f)}`,
    where: whereText,
  },
};

function finding({ severity, title, message, location, suggestion, section }) {
  return `<li class="finding ${RANK[severity] === undefined ? 'info' : severity}">${badge(severity)}`
    + `<div><p class="message">${title ? `<b>${esc(title)}</b> ` : ''}${message}</p>`
    + (location ? `<p class="where">at ${location}</p>` : '')
    + (suggestion ? `<p class="suggestion">${suggestion}</p>` : '')
    + (section ? `<a class="more" href="#${section}">details</a>` : '')
    + '</div></li>';
}

function loop(ctx, v) {
  const elu = Number(ctx.r.elu?.thread?.elu);
  if (!(elu >= 0.7)) return null;
  const top = list(ctx.r.elu?.scopes)[0];
  return {
    severity: elu >= 0.9 ? 'critical' : 'warning',
    title: 'Busy loop.',
    message: `The event loop was busy ${pct(elu)} of the capture${top ? `; the busiest scope, ${v.scope(ctx, top.name)}, took ${pct(top.elu)}` : ''}.`,
    suggestion: 'Little headroom is left for new work: latency grows with load. See which scope to make cheaper, or spread the load over workers or processes.',
    section: 'elu',
  };
}

const functionKey = (f) => `${f.functionName}\0${f.url}`;

/**
 * The stalls; one already running when rloop started (zero-code: the app's start-up, before
 * any traffic) is said apart, and the others, when there are, rank scopes and code and set the
 * severity. Each counts for its app's part: less what rloop itself held the loop for (`rloopMs`,
 * a CPU profile starting or stopping); one that is under the threshold without it is rloop's, no finding.
 */
function stalls(ctx, v) {
  const st = facts.stalls(ctx.r);
  if (!st.enabled) return null;
  const appMs = (e) => e.lagMs - (e.rloopMs > 0 ? e.rloopMs : 0);
  const { events } = st;
  const own = st.own.length;
  if (events.length === 0) return null;
  const maxMs = st.dropped > 0 ? st.maxMs : maxOf(events, appMs);
  const startUp = events.filter((e) => e.atStart);
  const after = events.filter((e) => !e.atStart);
  const ranked = startUp.length > 0 && after.length > 0 ? after : events;
  const worst = startUp.length === 0 || st.dropped > 0 ? maxMs : maxOf(after, appMs);
  const [scope] = groupBy(ranked, (e) => e.scope ?? null, appMs);
  const [place] = groupBy(ranked.filter((e) => topFrame(e.stack)), (e) => functionKey(topFrame(e.stack)), appMs);
  const since = ranked === after ? 'after start-up, ' : '';
  const time = taken.ofStalls(ranked);
  const why = taken.caveat(time);
  const placeWhy = place ? taken.caveat(taken.ofStalls(place.items)) : null;
  const of = time.measuredMs >= time.lagMs - 1 ? `their ${ms(time.measuredMs)}` : `the ${ms(time.measuredMs)} of them measured`;
  const inThem = taken.words(time, of);
  return {
    severity: !(worst > 0) ? 'info' : worst >= 1000 ? 'critical' : worst >= 100 ? 'warning' : 'info',
    title: 'Loop stalls.',
    message: `The loop stalled ${plural(st.count, 'time')} for ${ms(st.thresholdMs)} or more, the longest ${ms(maxMs)}`
      + (own > 0 ? ` (not counting ${plural(own, 'stall')} of rloop's own, ${facts.OWN_WORK})` : '')
      + (startUp.length > 0 ? `; ${num(startUp.length)} of them (${ms(maxOf(startUp, appMs))}) was already running when rloop started (zero-code: the app's start-up)` : '')
      + `; ${since}by scope, the most lag was in ${v.scope(ctx, scope.key)} (${plural(scope.count, 'stall')}, ${ms(scope.total)})`
      + (place ? `; by code, in ${v.frame(topFrame(place.items[0].stack))} (${plural(place.count, 'stall')}, ${ms(place.total)}, the longest ${ms(place.max)})` : '')
      + (placeWhy ? `, but ${v.esc(placeWhy)}.` : '.')
      + (inThem ? ` In ${since ? 'those' : 'the'} stalls, ${v.esc(inThem)}.` : ''),
    location: place ? v.where(topFrame(place.items[0].stack)) : null,
    suggestion: (why ? `${notTheCode(time)} ` : '')
      + 'Nothing else runs while the loop is stalled: split the synchronous work into chunks that yield (setImmediate), or move it to a worker thread.'
      + (startUp.length > 0 ? ' RLOOP_DELAY starts a zero-code capture after the start-up.' : ''),
    section: 'lag',
  };
}

/** What to do first when most of the stalls' time was not their code's (`taken.caveat` said so). */
function notTheCode(time) {
  if (time.gcMs >= taken.MOSTLY * time.lagMs) {
    return 'Most of the stalls\' time was garbage collection: allocate less in the code that runs then, or look at the heap\'s size (Memory).';
  }
  return time.throttledMs >= taken.notRan(time).waitedMs
    ? 'Most of the stalls\' time the thread was held back by its CPU quota (a container\'s CPU limit, cpu.max): raise the quota or lower the load first; cheaper code shortens these stalls less than it seems.'
    : 'Most of the stalls\' time the thread did not run: waiting for a CPU on a busy machine, or in a system call (synchronous I/O, a child process): give the process CPU, or find the blocking call.';
}

/**
 * The busy loop's CPU taken away: the windows' busy time the thread did not run (throttled by a
 * CPU quota, waiting for a CPU), which every busy time of the report (ELU, scopes, stalls) counts
 * as if the code ran. A warning when the quota took most of it.
 */
function cpuTaken(ctx, v) {
  const t = taken.ofWindows(ctx.r.elu?.windows);
  if (!(t.notRanMs >= 100 && t.notRanMs >= taken.FIFTH * t.busyMs)) return null;
  const quota = t.throttledMs >= t.notRanMs / 2;
  const from = taken.scopesWords(taken.ofScopes(ctx.r.elu?.windows), (name) => v.scope(ctx, name));
  return {
    severity: quota ? 'warning' : 'info',
    title: 'CPU taken away.',
    message: `${v.esc(taken.windowWords(t)).replace(/^t/, 'T')}.${from ? ` Taken most from ${from}.` : ''}`
      + ' Busy time per scope, ELU and stalls count that time as the code\'s: it ran for less.',
    suggestion: quota
      ? 'The process used up its CPU quota (a container\'s CPU limit, cpu.max): raise it, or spread the load, before making the code cheaper.'
      : 'Other work on the machine held the thread back (or it sat in system calls): compare with a quieter machine before making the code cheaper.',
    section: 'elu',
  };
}

const held = (heldMs, stalls) => (stalls > 0 ? `: ${plural(stalls, 'stall')} may have held one, ${ms(heldMs)} at most, so` : ', and none was under way as one was read:');

/** `lo` to `hi` ms, one figure where they are less than 1 ms apart or round alike. */
function range(lo, hi) {
  const [a, b] = [ms(lo), ms(hi)];
  if (a === b || hi - lo < 1) return b;
  return a.endsWith(' ms') && b.endsWith(' ms') ? `${a.slice(0, -3)}–${b}` : `${a}–${b}`;
}

/**
 * Slow I/O, outgoing and incoming apart (an incoming request waiting on an outgoing call is one
 * wait, seen from both sides), and how much of the costliest target's wait was the app's own
 * loop stalled. Of an outgoing wait only the stall its response arrived in delayed it (it waits
 * for the loop to read it): the other side's time is a range, from the wait less the most that
 * stall may have held it to the whole wait.
 */
function slowIo(ctx, v) {
  const io = facts.slowIo(ctx.r);
  if (!io.enabled || io.events.length === 0) return null;
  const side = io.outgoing.length > 0 ? io.outgoing : io.incoming;
  const [top] = facts.byTarget(side);
  const st = facts.stalls(ctx.r);
  const { ms: blockedMs, stalls: overlapping } = facts.stalledDuring(top.items, st.recorded);
  const share = top.total > 0 ? blockedMs / top.total : 0;
  const out = io.outgoing.length > 0;
  const { heldMs, stalls: holding } = out ? facts.heldResponses(top.items, st.recorded, st.thresholdMs) : { heldMs: blockedMs, stalls: overlapping };
  const counts = [
    io.outgoing.length > 0 ? `${plural(io.outgoing.length, 'outgoing operation')} took ${ms(io.thresholdMs)} or more` : '',
    io.incoming.length > 0 ? `${plural(io.incoming.length, 'incoming request')} took as long to answer` : '',
  ].filter(Boolean).join('; ');
  const dropped = io.dropped > 0 ? ` (and ${plural(io.dropped, 'more slow operation')} not kept)` : '';
  const blocked = blockedMs > 0
    ? ` Of their ${ms(top.total)} of waiting, ${ms(blockedMs)} (${pct(share)}) was this app's own loop stalled (${plural(overlapping, 'stall')} overlapped them)`
      + (out ? `. A response waits only for a stall it arrives in${held(heldMs, holding)} the other side took about ${range((top.total - heldMs) / top.count, top.total / top.count)} a call.` : '.')
    : ' No stall of the loop overlapped them.';
  const own = top.total > 0 && heldMs / top.total >= BLOCKED_SHARE;
  const where = out ? 'remote side' : 'code that answers them';
  return {
    severity: 'warning',
    title: 'Slow I/O.',
    message: `${counts}${dropped}. The costliest ${out ? 'target' : 'endpoint'} is ${v.text(top.items[0].type)} ${v.text(facts.targetOf(top.items[0]))} `
      + `(${num(top.count)} slow, longest ${ms(top.max)}).${blocked}`,
    suggestion: own
      ? `Fix the loop's stalls first (see Lag): while the loop is blocked no response is read, so the waits look longer than the ${where} made them. `
        + 'Then set timeouts, reuse connections (keepAlive agents), cache answers, and run independent calls in parallel.'
      : `Look at the ${where} first; set timeouts, reuse connections (keepAlive agents), cache answers, and run independent calls in parallel.`,
    section: 'io',
  };
}

/**
 * A growing heap. Heap used between GCs holds garbage not yet collected, so only the heap after
 * GCs (facts.heapGrowth's `kept`) can show a leak, and sets the severity; without it growth is
 * said as such and warns of nothing. Of a capture that held the app's start-up, the growth in it
 * is the app loading (modules, caches built at start).
 */
function heapGrowth(ctx) {
  const heap = ctx.r.heap;
  const g = facts.heapGrowth(ctx.r);
  const grewKept = g.kept?.grew ?? null;
  if (!(g.total > MB) && !(grewKept > MB)) return null;
  if (g.startUp === null && g.kept !== null && !(grewKept > MB)) return null; // garbage: the GCs freed it
  const at = (sample) => offset((sample.at - ctx.start) / 1000);
  const since = g.startUp === null ? '' : ' after start-up';
  const grew = `Heap used grew by ${size(g.total)} over the capture (${size(heap.start.heapUsed)} to ${size(heap.end.heapUsed)})`;
  const inStartUp = g.startUp === null ? '.'
    : `: ${size(g.startUp, true)} during the app's start-up (to ${offset((g.startUpAt - ctx.start) / 1000)}, `
      + `the event loop's first turn: loading modules and building state, not a leak), ${size(g.after, true)} after it.`;
  const k = g.kept;
  const verdict = grewKept > MB ? 'memory the GC could not free' : 'the rest was garbage the GCs freed';
  const said = k === null
    ? ` No GC${since} was recorded to tell live memory from garbage not yet collected: a leak cannot be told from it in this capture.`
    : k.kind === 'major' && k.count === 1
      ? ` After the major GC${since} at ${at(k.to)} the heap held ${size(k.to.heapUsed)}, ${size(grewKept)} more than heap used at ${at(k.from)} with its garbage: memory the GC could not free.`
      : k.kind === 'major'
        ? ` After major GCs${since} the heap went from ${size(k.from.heapUsed)} (${at(k.from)}) to ${size(k.to.heapUsed)} (${at(k.to)}), ${size(grewKept, true)} over ${plural(k.count, 'major GC')}: ${verdict}.`
        : ` No major GC ran${since}; after minor GCs, young garbage gone, the heap went from ${size(k.from.heapUsed)} (${at(k.from)}) to ${size(k.to.heapUsed)} (${at(k.to)}), `
          + `${size(grewKept, true)} of objects that outlived the young generation: ${grewKept > MB ? 'memory kept, though a major GC may still free some' : 'the rest was young garbage'}.`;
  const advice = 'If it keeps growing across captures, take heap snapshots (heapSnapshot) at two times and compare what retains the new objects.';
  const suggestion = grewKept > MB ? `Growth over one capture may be a cache warming up. ${advice}`
    : k === null ? `A longer capture, with GCs in it, tells a leak from garbage. ${advice}` : '';
  return {
    severity: grewKept > 10 * MB ? 'warning' : 'info',
    title: 'Heap growth.',
    message: grew + inStartUp + said,
    suggestion: [suggestion, g.startUp === null ? '' : 'RLOOP_DELAY starts a zero-code capture after the start-up.'].filter(Boolean).join(' '),
    section: 'memory',
  };
}

/** For a long-calls pattern: how many stalls had its function on their stack. */
function onStalls(ctx, p) {
  const f = p.location;
  if (p.id !== 'long-calls' || !f) return '';
  const withStack = facts.stalls(ctx.r).events.filter((e) => list(e.stack).length > 0);
  const hit = withStack.filter((e) => list(e.stack).some((g) => g.functionName === f.functionName && g.url === f.url));
  return withStack.length > 0 ? ` It was on the stack of ${num(hit.length)} of the ${plural(withStack.length, 'stall')} whose stack was taken.` : '';
}

function patterns(ctx, v) {
  return list(ctx.r.profile?.analysis?.patterns).map((p) => ({
    severity: p.id === 'healthy' ? 'ok' : p.severity,
    title: TITLES[p.id] ?? `${String(p.id)}.`,
    message: v.text(/[.!?]$/.test(String(p.message)) ? p.message : `${p.message}.`, 2000) + v.esc(onStalls(ctx, p)),
    location: p.location ? v.where(p.location) : null,
    suggestion: p.suggestion ? v.text(p.suggestion, 2000) : null,
    section: 'cpu',
  }));
}

/** The findings, most severe first, in voice `v` (VOICES.html or VOICES.text). */
function findings(ctx, v) {
  const found = [loop(ctx, v), stalls(ctx, v), cpuTaken(ctx, v), slowIo(ctx, v), heapGrowth(ctx), ...patterns(ctx, v)].filter(Boolean);
  return found.sort((a, b) => (RANK[a.severity] ?? RANK.info) - (RANK[b.severity] ?? RANK.info));
}

function render(ctx) {
  const found = findings(ctx, VOICES.html);
  const note = ctx.r.profile ? '' : empty('No CPU profile was taken in this capture, so no CPU pattern was looked for (one is taken by capture({ profile: true }) in code, RLOOP_PROFILE=1 in zero-code use, and rloop attach unless --no-profile).');
  if (found.length === 0) return `${note}${empty('Nothing stands out in what this capture collected.')}`;
  return `<ul class="findings">${found.map(finding).join('')}</ul>${note}`;
}

module.exports = { id: 'diagnosis', title: 'Diagnosis', render, findings, VOICES };

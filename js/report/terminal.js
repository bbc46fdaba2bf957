'use strict';
// A report and its live events as text for a terminal, pure functions of a report or an event:
// colours only when asked (a TTY without NO_COLOR), plain otherwise.

const { num, ms, pct, size, plural, shortUrl } = require('./format');
const { topFrame, OWN_SCHEME } = require('../own');
const facts = require('./facts');
const taken = require('./taken');
const { context } = require('./context');
const { findings, VOICES } = require('./sections/diagnosis');

const CODES = { bold: 1, dim: 2, red: 31, green: 32, yellow: 33, cyan: 36 };
const SEVERITY = { critical: 'red', warning: 'yellow', info: 'cyan', ok: 'green' };
const TOP = 10;
const BAR = 20;

/** Colour functions: `c.red('x')`, identity when `color` is false. */
function palette(color) {
  const c = {};
  for (const [name, code] of Object.entries(CODES)) c[name] = color ? (s) => `\x1b[${code}m${s}\x1b[0m` : (s) => String(s);
  return c;
}

/** Whether `stream` gets colours: a TTY, and NO_COLOR (https://no-color.org) unset or empty. */
function wantsColor(stream, env = process.env) {
  return Boolean(stream.isTTY) && !env.NO_COLOR && env.TERM !== 'dumb';
}

const where = (f) => (f ? `${f.functionName || '(anonymous)'} ${f.line === null || f.line === undefined ? '(native)' : `${shortUrl(f.url)}:${f.line}`}` : '(no stack)');

function bar(share, width = BAR) {
  const n = Math.max(0, Math.min(width, Math.round(share * width)));
  return '█'.repeat(n) + '·'.repeat(width - n);
}

/**
 * One stall as it happens: '⚠ lag 213 ms  scope route:/a  at spin app.js:12  (the thread ran
 * 200 ms of it; 2 minor GCs 3 ms)', or where most of it was not that code's, why.
 */
function lagLine(e, c) {
  const frame = topFrame(e.stack) ?? topFrame(e.stackSeen);
  const seen = e.stack ? '' : e.stackSeen ? ' (seen after it)' : '';
  const p = taken.ofStall(e);
  const why = taken.caveat(p);
  const said = [e.rloopMs > 0 && `${ms(e.rloopMs)} of it rloop ${facts.OWN_WORK}`, why ? `but ${why}` : taken.words(p)].filter(Boolean).join('; ');
  return `${c.yellow('⚠ lag')} ${c.bold(ms(e.lagMs))}  scope ${e.scope ?? '(unattributed)'}${e.key ? ` [${e.key}]` : ''}  at ${where(frame)}${seen}`
    + (said ? `  ${c.dim(`(${said})`)}` : '');
}

/** One slow I/O operation as it ends (or is still pending). */
function ioLine(e, c) {
  const what = `${e.type}${e.method ? ` ${e.method}` : ''} ${e.target ?? ''}`.trim();
  const end = e.state === 'pending' ? 'still pending after' : e.error ? `failed (${e.error}) after` : `${e.status ?? 'done'} in`;
  return `${c.cyan('⏱ slow I/O')} ${what} ${end} ${c.bold(ms(e.durationMs))}  from ${where(topFrame(e.stack))}${e.scope ? `  scope ${e.scope}` : ''}`;
}

/** The distinct values, the most frequent first, up to `max` and how many more: 'a ×3, b, +2'. */
function listedText(values, max) {
  const counts = new Map();
  for (const v of values) counts.set(v, (counts.get(v) ?? 0) + 1);
  const sorted = [...counts].sort((a, b) => b[1] - a[1]);
  const shown = sorted.slice(0, max).map(([v, n]) => (n > 1 ? `${v} ×${num(n)}` : v));
  return shown.join(', ') + (sorted.length > max ? `, +${num(sorted.length - max)}` : '');
}

/** Slow operations of one type and target summed (facts.byTarget's group): incoming requests by route, the paths named. */
function ioGroupLine(g, c) {
  const e = g.items[0];
  const routed = g.items.filter((i) => i.route !== undefined && i.target !== i.route);
  const methods = [...new Set(g.items.map((i) => i.method).filter(Boolean))].slice(0, 2).join(' ');
  const what = `${e.type} ${methods} ${facts.targetOf(e)}`.replace(/ {2,}/g, ' ');
  const paths = routed.length > 0 ? ` (route of ${listedText(routed.map((i) => i.target), 3)})` : '';
  const pending = g.items.filter((i) => i.state === 'pending').length;
  const failed = g.items.filter((i) => i.error !== undefined || i.status >= 500).length;
  const outcome = [failed && `${num(failed)} failed`, pending && `${num(pending)} still pending`].filter(Boolean).join(', ');
  const time = g.count === 1 ? c.bold(ms(g.max)) : `${num(g.count)} slow, ${ms(g.total)} in all, longest ${c.bold(ms(g.max))}`;
  const scopes = [...new Set(g.items.map((i) => i.scope ?? '(unattributed)'))];
  const caller = topFrame(g.items.find((i) => Array.isArray(i.stack) && i.stack.length > 0)?.stack);
  return `${c.cyan('⏱')} ${what}${paths}  ${time}${outcome ? ` (${outcome})` : ''}  scope ${scopes.slice(0, 2).join(', ')}${scopes.length > 2 ? ', …' : ''}`
    + (caller ? `  from ${where(caller)}` : '');
}

function heading(c, title) {
  return `\n${c.bold(title)}`;
}

/** The diagnosis the HTML page gives, in the same words (js/report/sections/diagnosis.js). */
function diagnosis(r, c) {
  const out = [heading(c, 'Diagnosis')];
  const found = findings(context(r), VOICES.text);
  if (found.length === 0) out.push('  Nothing stands out in what this capture collected.');
  for (const f of found) {
    out.push(`  ${c[SEVERITY[f.severity] ?? 'cyan'](`[${f.severity}]`)} ${f.title ? `${f.title} ` : ''}${f.message}`);
    if (f.location) out.push(`    ${c.dim(`at ${f.location}`)}`);
    if (f.suggestion) out.push(`    ${f.suggestion}`);
  }
  if (!r.profile) out.push(c.dim('  No CPU profile was taken in this capture, so no CPU pattern was looked for (rloop attach takes one unless --no-profile).'));
  return out;
}

function scopes(r, c) {
  const e = r.elu;
  const out = [heading(c, `Busy time by scope (thread ELU ${pct(e.thread.elu)}, ${ms(e.thread.busyMs)} busy)`)];
  // A Node-RED node by its name (or type), as the editor shows it, its scope beside.
  const nodes = r.nodered?.nodes ?? {};
  const label = (name) => {
    const id = name.startsWith('node:') ? name.slice(5) : null;
    const n = id !== null && Object.hasOwn(nodes, id) ? nodes[id] : null;
    return n ? `${n.name || n.type} (${name})` : name;
  };
  const ran = new Map(taken.ofScopes(e.windows).map((s) => [s.name, s]));
  const rows = [...e.scopes.slice(0, TOP).map((s) => ({ ...s, label: label(s.name), ran: ran.get(s.name) })),
    { ...e.unattributed, label: '(unattributed)', ran: ran.get(null) }];
  const width = Math.min(40, Math.max(...rows.map((s) => s.label.length)));
  for (const s of rows) {
    const note = taken.ranWords(s.ran);
    out.push(`  ${s.label.slice(0, width).padEnd(width)}  ${c.green(bar(s.elu))} ${pct(s.elu).padStart(7)}  ${ms(s.busyMs).padStart(9)}  ${plural(s.calls, 'call')}${note ? c.dim(`  (the thread ${note} of it)`) : ''}`);
  }
  if (e.scopes.length > TOP) out.push(c.dim(`  … ${plural(e.scopes.length - TOP, 'more scope')}`));
  return out;
}

function heavy(r, c) {
  const a = r.profile?.analysis;
  if (!a) return [];
  const busy = facts.busyMs(a);
  const out = [heading(c, `Heavy functions (self time, of ${ms(busy)} busy in the profile)`)];
  // A builtin V8 gives no frame (JSON.parse, a regex) is on the frame of rloop's marker: no file of the app's.
  const at = (f) => (f.line === null ? '' : f.url.startsWith(OWN_SCHEME) ? '(builtin)' : `${shortUrl(f.url)}:${f.line}`);
  for (const f of a.heavyFunctions.slice(0, TOP)) {
    out.push(`  ${ms(f.selfMs).padStart(9)} ${pct((facts.busyPercent(f, busy) ?? 0) / 100).padStart(7)}  ${f.functionName || '(anonymous)'} ${c.dim(at(f))}`);
  }
  if (a.heavyFunctions.length > TOP) out.push(c.dim(`  … ${plural(a.heavyFunctions.length - TOP, 'more function')} in the HTML report`));
  for (const s of a.callStacks.slice(0, 3)) {
    const [stack] = s.stacks;
    if (!stack || stack.frames.length < 2) continue; // no caller to show (GC, idle)
    out.push(`  ${c.bold(s.functionName || '(anonymous)')} called from (${pct(stack.percent / 100)} of its time):`);
    for (const f of stack.frames.slice(1, 6)) out.push(`      ${c.dim(where(f))}`);
  }
  return out;
}

function lag(r, c) {
  const st = facts.stalls(r);
  if (!st.enabled) return [heading(c, 'Lag'), '  off'];
  const out = [heading(c, `Lag: ${plural(st.count, 'stall')} of ${ms(st.thresholdMs)} or more${st.count ? `, longest ${ms(st.maxMs)}, p99 ${ms(st.p99Ms)}` : ''}`)];
  if (st.own.length > 0) out.push(c.dim(`  ${facts.ownStallsText(st)}`));
  const worst = [...st.events].sort((a, b) => b.lagMs - a.lagMs).slice(0, 5);
  if (worst.length < st.count) out.push(c.dim(`  the ${worst.length} longest of ${num(st.count)}:`));
  for (const e of worst) {
    out.push(`  ${lagLine(e, c)}`);
    for (const f of (e.stack ?? []).slice(0, 4)) out.push(`      ${c.dim(where(f))}`);
  }
  return out;
}

function io(r, c) {
  const s = facts.slowIo(r);
  if (!s.enabled) return [heading(c, 'Slow I/O'), '  off'];
  const out = [heading(c, `Slow I/O: ${plural(s.events.length + s.dropped, 'operation')} of ${ms(s.thresholdMs)} or more`)];
  // As the page's table: by type and target, an incoming request's by route.
  const groups = facts.byTarget(s.events);
  const costliest = groups.slice(0, 5);
  const notKept = s.dropped > 0 ? ` (${num(s.dropped)} not kept)` : '';
  if (costliest.length < groups.length || notKept) out.push(c.dim(`  the ${costliest.length} costliest of ${plural(groups.length, 'target')}${notKept}:`));
  for (const g of costliest) out.push(`  ${ioGroupLine(g, c)}`);
  for (const a of r.io.aggregates.slice(0, 5)) {
    out.push(`  ${a.type.padEnd(8)} ${plural(a.count, 'operation')}, avg ${ms(a.avgMs)}, max ${ms(a.maxMs)}${a.errors ? `, ${plural(a.errors, 'error')}` : ''}`);
  }
  if (r.io.aggregates.length > 5) out.push(c.dim(`  … ${plural(r.io.aggregates.length - 5, 'more type')}`));
  return out;
}

function memory(r, c) {
  const h = r.heap;
  if (!h) return [];
  const delta = (k) => h.end[k] - h.start[k];
  const d = delta('heapUsed');
  const paint = d > 0 ? c.yellow : c.green;
  return [heading(c, 'Memory'),
    `  heap used ${size(h.start.heapUsed)} → ${size(h.end.heapUsed)} (${paint(size(d, true))}), rss ${size(h.start.rss)} → ${size(h.end.rss)} (${size(delta('rss'), true)})`,
    ...(h.snapshot ? [`  heap snapshot ${h.snapshot.path} (${size(h.snapshot.bytes)})`] : [])];
}

/** The whole terminal report of one capture. */
function formatReport(r, { color = false } = {}) {
  const c = palette(color);
  const m = r.meta;
  const thread = m.thread === 0 ? 'main thread' : `worker thread ${m.thread}`;
  const head = `${c.bold('rloop')} PID ${m.pid}, ${thread}, Node ${m.node}: ${ms(m.durationMs)} captured`
    + (m.partial ? c.red(` — partial (${m.reason})`) : '');
  return [head, ...diagnosis(r, c), ...scopes(r, c), ...heavy(r, c), ...lag(r, c), ...io(r, c), ...memory(r, c)].join('\n') + '\n';
}

module.exports = { formatReport, lagLine, ioLine, palette, wantsColor, bar, num };

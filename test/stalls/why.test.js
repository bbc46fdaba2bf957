'use strict';
// A stall says what else took its time: how much of it the thread ran, what a CPU quota
// throttled (a real cgroup), and its garbage collections; each checked against what the app
// measured itself around the blocking call (test/fixtures/stall-time-app.js), and said in the
// report's words wherever the stall's code is named.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const { spawn } = require('node:child_process');
const { constants } = require('node:perf_hooks');
const { renderHtml } = require('../../js/report/html');
const { formatReport, lagLine, palette } = require('../../js/report/terminal');
const { findings, VOICES } = require('../../js/report/sections/diagnosis');
const { context } = require('../../js/report/context');
const { ms } = require('../../js/report/format');
const { assertValidReport } = require('../fixtures/report');

const APP = path.join(__dirname, '..', 'fixtures', 'stall-time-app.js');
const LINUX = process.platform === 'linux';
const plain = (html) => html.replace(/<[^>]+>/g, ' ').replace(/&#39;/g, "'").replace(/\s+/g, ' ');

/** Where cgroup v1's cpu controller is mounted, or why there is none to test with. */
function cpuController() {
  if (!LINUX) return { why: 'not Linux: no cgroups' };
  if (process.getuid() !== 0) return { why: 'not root: cannot make a cgroup' };
  const line = fs.readFileSync('/proc/self/mountinfo', 'utf8').split('\n').find((l) => / - cgroup \S+ .*\bcpu\b/.test(l.replace(/,/g, ' ')));
  const dir = line?.split(' ')[4];
  return dir && fs.existsSync(path.join(dir, 'cpu.cfs_quota_us')) ? { dir } : { why: 'the kernel gives no cgroup v1 cpu controller' };
}
const controller = cpuController();

/** This process's own cgroup in the cpu controller (its children start in it). */
function ownGroup() {
  const rel = /^\d+:(?:[^:]*,)?cpu(?:,[^:]*)?:(.*)$/m.exec(fs.readFileSync('/proc/self/cgroup', 'utf8'))?.[1] ?? '/';
  return path.join(controller.dir, rel);
}

/** Runs the app with `stall`; `group`, a cgroup directory to put it into before rloop starts. */
function run(stall, { group = null, flags = [] } = {}) {
  const stat = controller.dir ? path.join(group ?? ownGroup(), 'cpu.stat') : '';
  const child = spawn(process.execPath, [...flags, APP], { env: { ...process.env, STALL: stall, CPU_STAT: stat }, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { err += d; });
  if (group) fs.writeFileSync(path.join(group, 'cgroup.procs'), String(child.pid));
  child.stdin.write('go\n');
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30000);
    child.on('close', (code) => {
      clearTimeout(timer);
      if (code !== 0) return reject(new Error(`app exited ${code}\n${err}`));
      const r = JSON.parse(out);
      assertValidReport(r.report);
      resolve(r);
    });
  });
}

const stallOf = (r, scope) => {
  const e = r.report.lag.events.find((x) => x.scope === scope);
  assert.ok(e, `a stall in ${scope}: ${JSON.stringify(r.report.lag.events.map((x) => [x.scope, x.lagMs]))}`);
  assert.deepStrictEqual(r.events.find((x) => x.scope === scope && x.at === e.at)?.gc, e.gc, "the 'lag' event says what the report does");
  return e;
};

/**
 * The stall's CPU time and throttling against the app's own readings: those around the call
 * inside it, and those from the end of the callback before it to a setImmediate after it, which
 * hold the stall and rloop's readings of it. The cgroup counts throttling per CPU, and rloop keeps
 * it within the time the thread did not run.
 */
function assertMeasured(e, own) {
  const { outer } = own;
  console.log(`# ${e.scope}: stall ${e.lagMs.toFixed(1)} ms, ran ${e.cpuMs.toFixed(2)}, throttled ${e.throttledMs?.toFixed(2)}; the app: `
    + `call ${own.wallMs.toFixed(1)} ms, ran ${own.cpuMs.toFixed(2)} (${outer.cpuMs.toFixed(2)} around the stall), throttled ${own.throttledMs?.toFixed(2)} (${outer.throttledMs?.toFixed(2)})`);
  assert.ok(e.lagMs >= own.wallMs, `the stall (${e.lagMs} ms) holds the call (${own.wallMs} ms)`);
  assert.strictEqual(e.cpuFromMs, 0, 'read while idle before it: measured whole');
  // Both read the same counters, in ns and µs: equal up to rounding.
  const close = 1e-6;
  assert.ok(e.cpuMs >= own.cpuMs - close && e.cpuMs <= outer.cpuMs + close, `cpuMs ${e.cpuMs}: the app read ${own.cpuMs} in the call, ${outer.cpuMs} around the stall`);
  if (own.throttledMs === null) return;
  const least = Math.min(own.throttledMs, e.lagMs - e.cpuMs);
  assert.ok(e.throttledMs >= least - close && e.throttledMs <= outer.throttledMs + close, `throttledMs ${e.throttledMs}: the app read ${own.throttledMs} in the call, ${outer.throttledMs} around the stall`);
}

/**
 * Each window's scope entries say what of their busy time the thread ran: never more than their
 * busy time, together never more than the thread's CPU time.
 */
function assertScopesFit(windows) {
  for (const w of windows) {
    const entries = [w.unattributed, ...w.scopes];
    for (const s of entries) assert.ok(s.cpuMs >= 0 && s.cpuMs <= s.busyMs, `${s.name}: cpuMs ${s.cpuMs} of busyMs ${s.busyMs}`);
    const sum = entries.reduce((a, s) => a + s.cpuMs, 0);
    assert.ok(sum <= w.thread.cpuMs + 1e-6, `window ${w.seq}: scopes ran ${sum} ms, the thread ${w.thread.cpuMs} ms`);
  }
}

/**
 * A scope's CPU time summed over the windows against what the app read inside its callbacks:
 * sampled by the lookout thread, so within a few of its looks (5 ms each) and a tenth, and
 * `unseen` (see unseenOfNoScope). Its busy time holds the callbacks (and what a quota held back
 * between a callback's start and the app's first reading).
 */
function assertScopeRan(windows, scope, own, unseen = 0) {
  const entries = windows.flatMap((w) => w.scopes.filter((s) => s.name === scope));
  const busyMs = entries.reduce((a, s) => a + s.busyMs, 0);
  const cpuMs = entries.reduce((a, s) => a + s.cpuMs, 0);
  console.log(`# scope ${scope}: busy ${busyMs.toFixed(1)} ms, ran ${cpuMs.toFixed(2)}; the app: calls ${own.wallMs.toFixed(1)} ms, ran ${own.cpuMs.toFixed(2)}`);
  assert.ok(busyMs >= own.wallMs - 1 && busyMs <= 2 + 1.25 * own.wallMs, `busy ${busyMs} ms, the calls ${own.wallMs} ms`);
  const tolerance = 15 + 0.1 * own.wallMs + unseen;
  assert.ok(Math.abs(cpuMs - own.cpuMs) <= tolerance, `scope ${scope} ran ${cpuMs} ms of ${busyMs}, the app read ${own.cpuMs} ms (± ${tolerance})`);
  return { busyMs, cpuMs };
}

/**
 * What the stretches of no scope did not run of their busy time, as far as the app's own
 * readings (`own`, by scope) leave it. A quota throttles the lookout thread with the app's: a
 * throttled stretch that ends before the lookout's next look is never seen, and the CPU time a
 * window's scopes are short of is shared by all the busy time no look saw (docs/stalls.md). So
 * throttling that landed in the loop's own work between callbacks may be charged to a scope of
 * short callbacks, up to `unseen`; `busyMs`: those stretches' busy time.
 */
function unseenOfNoScope(windows, own) {
  const sum = (f) => windows.reduce((a, w) => a + f(w), 0);
  const ran = sum((w) => w.thread.cpuMs) - Object.values(own).reduce((a, o) => a + o.cpuMs, 0);
  const busyMs = sum((w) => w.unattributed.busyMs);
  return { busyMs, unseen: Math.max(0, busyMs - Math.max(0, ran)) };
}

/** A cgroup allowed 20 % of a CPU, removed after test `t`. */
function quota(t, name) {
  const group = path.join(controller.dir, `rloop-test-${process.pid}-${name}`);
  fs.mkdirSync(group);
  t.after(() => fs.rmdirSync(group));
  fs.writeFileSync(path.join(group, 'cpu.cfs_period_us'), '100000');
  fs.writeFileSync(path.join(group, 'cpu.cfs_quota_us'), '20000');
  return group;
}

test('a stall under a CPU quota: what the thread ran and what the quota throttled, as the app measured them', { skip: controller.why }, async (t) => {
  const r = await run('spin', { group: quota(t, 'spin') });
  const e = stallOf(r, 'spin');
  const own = r.own.spin;
  assert.ok(own.throttledMs >= 50, `the quota held the app back: ${JSON.stringify(own)}`);
  assertMeasured(e, own);
  assert.ok(e.throttledMs >= 50);

  // The windows read the same counter: they hold the stall's throttling.
  const windows = r.report.elu.windows;
  assert.ok(windows[0].start <= e.at && e.at + e.lagMs <= windows[windows.length - 1].end, 'the stall lies within the windows');
  const throttled = windows.reduce((sum, w) => sum + w.thread.throttledMs, 0);
  assert.ok(throttled >= e.throttledMs - 0.1, `windows ${throttled} ms, the stall ${e.throttledMs} ms`);
  // And per scope: 'spin' ran a fraction of its busy time, as the app measured; 'sleep' next to none.
  assertScopesFit(windows);
  const spin = assertScopeRan(windows, 'spin', own);
  assert.ok(spin.cpuMs <= 0.5 * spin.busyMs, `spin: throttled, it ran ${spin.cpuMs} of ${spin.busyMs} ms`);
  const sleep = assertScopeRan(windows, 'sleep', r.own.sleep);
  assert.ok(sleep.cpuMs <= 0.1 * sleep.busyMs, `sleep: ${sleep.cpuMs} of ${sleep.busyMs} ms`);

  // Said wherever the stall is: the live line names its code with why most of it was not. The
  // stack is spin's, its top frame spin or the reading of its CPU time it calls each turn (V8
  // takes the interrupt at a function's entry as often as in a loop).
  const line = lagLine(e, palette(false));
  assert.match(line, /at (spin|cpuMs) .*stall-time-app\.js:\d+ {2}\(but the thread ran only [\d.]+ % of that time: /, line);
  assert.ok(e.stack.some((f) => f.functionName === 'spin'), JSON.stringify(e.stack));
  const html = renderHtml(r.report);
  const lag = plain(html.slice(html.indexOf('id="lag"')));
  assert.ok(lag.includes(`the thread ran ${ms(e.cpuMs)} of it, throttled ${ms(e.throttledMs)} by its CPU quota`), lag);
  const said = findings(context(r.report), VOICES.text);
  const stalls = said.find((f) => f.title === 'Loop stalls.');
  assert.match(stalls.message, /by code, in (spin|cpuMs) .*, but the thread ran only [\d.]+ % of that time: /, stalls.message);
  assert.match(stalls.message, / throttled [\d,.]+ ms by its CPU quota/);
  const taken = said.find((f) => f.title === 'CPU taken away.');
  assert.match(taken?.message ?? '', /at least [\d,.]+ ms of its busy time it did not run, [\d,.]+ ms of it throttled by its CPU quota\. Taken most from spin \(not run [\d,.]+ ms of its [\d,.]+ ms\)/, JSON.stringify(said));
  assert.match(formatReport(r.report), /\n {2}spin .*\(the thread ran [\d.]+ % of it\)\n/, 'the scope\'s busy time says it');
  assert.match(formatReport(r.report), /CPU taken away\./, 'the terminal says it as the page does');
});

test('two scopes in one window under a CPU quota: what each ran, as the app measured it; the CPU-bound one a fraction of its busy time', { skip: controller.why }, async (t) => {
  const r = await run('mixed', { group: quota(t, 'mixed') });
  const windows = r.report.elu.windows;
  assertScopesFit(windows);
  const both = windows.find((w) => ['spin', 'light'].every((name) => w.scopes.some((s) => s.name === name)));
  assert.ok(both, 'one window holds both');
  const spin = assertScopeRan(windows, 'spin', r.own.spin);
  assert.ok(r.own.spin.throttledMs >= 50 && spin.cpuMs <= 0.5 * spin.busyMs, `throttled, spin ran ${spin.cpuMs} of ${spin.busyMs} ms`);
  const { busyMs, unseen } = unseenOfNoScope(windows, r.own);
  console.log(`# the stretches of no scope: busy ${busyMs.toFixed(1)} ms, not run ${unseen.toFixed(1)} as the app's readings leave it`);
  const light = assertScopeRan(windows, 'light', r.own.light, unseen);
  // Fitted to the window's CPU time alone, both would have run the same share of their busy
  // time; told apart, they are apart as the app measured them (on a loaded machine the quota
  // throttles 'light' too, so the gap is the app's, not a fixed one).
  const share = (ran, busy) => ran / busy;
  const app = share(r.own.light.cpuMs, r.own.light.wallMs) - share(r.own.spin.cpuMs, r.own.spin.wallMs);
  const seen = share(light.cpuMs, light.busyMs) - share(spin.cpuMs, spin.busyMs);
  const what = `spin ran ${spin.cpuMs} of ${spin.busyMs} ms, light ${light.cpuMs} of ${light.busyMs}; the app: ${JSON.stringify(r.own)}`;
  assert.ok(Math.abs(seen - app) <= 0.05 + 0.5 * Math.abs(app), `${what}: apart by ${seen}, the app's by ${app}`);
});

test(`no CPU quota: the stall's CPU time as the app measured it, throttled ${controller.dir ? 'as its own cgroup counted' : 'unknown (no cpu controller)'}; a stall asleep ran next to nothing`, { skip: !LINUX && 'thread CPU time is read on Linux only' }, async () => {
  if (controller.why) console.log(`# no cgroup to put the app in (${controller.why}): the stall's throttling is unknown`);
  const r = await run('spin');
  const e = stallOf(r, 'spin');
  assertMeasured(e, r.own.spin);
  if (!controller.dir) assert.strictEqual(e.throttledMs, null, 'no cgroup counts it: unknown');
  const sleep = stallOf(r, 'sleep');
  assertMeasured(sleep, r.own.sleep);
  assert.ok(sleep.cpuMs < 0.1 * sleep.lagMs, `asleep: ${sleep.cpuMs} of ${sleep.lagMs} ms`);
  assert.match(lagLine(sleep, palette(false)), /\(but the thread ran only [\d.]+ % of that time: it waited [\d,.]+ ms for a CPU or in a system call\)$/);
  assert.ok(r.report.elu.windows.every((w) => w.thread.cpuMs >= 0 && w.thread.cpuMs <= w.durationMs * 1.001), 'each window: its thread CPU time, never more than its span');
  assertScopesFit(r.report.elu.windows);
  assertScopeRan(r.report.elu.windows, 'spin', r.own.spin);
  const asleep = assertScopeRan(r.report.elu.windows, 'sleep', r.own.sleep);
  assert.ok(asleep.cpuMs <= 0.1 * asleep.busyMs, `asleep: ran ${asleep.cpuMs} of ${asleep.busyMs} ms`);
});

let gcRun = null; // one run of the app for the stall's GC and the windows'
const runGc = () => (gcRun ??= run('gc', { flags: ['--expose-gc'] }));

/**
 * Runs `check` on the app's run for GC. rloop and Node read the clock each in its own GC
 * callbacks, which V8 calls one after the other: a pause of the thread between the two (the
 * scheduler's, the VM's) lengthens one collection by as much in one of them alone. So a check
 * that fails is made again on a fresh run of the app: a fault of rloop's fails both.
 */
async function onGcRun(check) {
  try {
    check(await runGc());
  } catch (e) {
    if (!(e instanceof assert.AssertionError)) throw e;
    console.log(`# ${e.message.split('\n')[0]}: checked again on a fresh run of the app`);
    check(await run('gc', { flags: ['--expose-gc'] }));
  }
}

test('a forced GC in a scope: its kind and time, as Node\'s own gc entries say', () => onGcRun((r) => {
  const e = stallOf(r, 'collect');
  const start = e.at - r.timeOrigin;
  const inside = r.own.gc.filter((g) => g.startTime >= start && g.startTime + g.duration <= start + e.lagMs && g.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
  assert.strictEqual(inside.length, 1, JSON.stringify(r.own.gc));
  const major = e.gc.find((g) => g.kind === 'major');
  assert.ok(major, JSON.stringify(e.gc));
  assert.strictEqual(major.count, 1);
  console.log(`# collect: stall ${e.lagMs.toFixed(1)} ms, major GC ${major.ms.toFixed(2)} ms; Node's entry ${inside[0].duration.toFixed(2)} ms, the call ${r.own.collect.wallMs.toFixed(1)} ms`);
  // Both are read in V8's GC callbacks, Node's and rloop's side by side.
  assert.ok(Math.abs(major.ms - inside[0].duration) <= 1, `rloop ${major.ms} ms, Node ${inside[0].duration} ms`);
  assert.ok(major.ms <= r.own.collect.wallMs + 0.1 && major.ms >= 0.5 * e.lagMs, `${major.ms} ms of the stall's ${e.lagMs}`);
  const line = lagLine(e, palette(false));
  assert.match(line, /\(but [\d.]+ % of that time was garbage collection: major GC [\d,.]+ ms/, line);
  const html = renderHtml(r.report);
  assert.ok(plain(html.slice(html.indexOf('id="lag"'))).includes(`major GC ${ms(major.ms)}`), 'the Lag section says it');
}));

test('a forced GC inside windows: their gc holds it by kind, as Node\'s own gc entries say, in the \'window\' event, liveWindow() and the report', { skip: process.platform === 'win32' && 'no GC callbacks on Windows' }, () => onGcRun((r) => {
  const collect = stallOf(r, 'collect');
  const start = collect.at - r.timeOrigin;
  const entry = r.own.gc.find((g) => g.startTime >= start && g.startTime + g.duration <= start + collect.lagMs && g.kind === constants.NODE_PERFORMANCE_GC_MAJOR);
  assert.ok(entry, JSON.stringify(r.own.gc));
  const windows = r.own.windows;
  assert.ok(windows.every((w) => Array.isArray(w.thread.gc)), 'each complete window says its collections ([] for none)');
  // Node's collections, each clipped to [from, to] (epoch ms): its part there, by kind.
  const KIND = { major: constants.NODE_PERFORMANCE_GC_MAJOR, minor: constants.NODE_PERFORMANCE_GC_MINOR, incremental: constants.NODE_PERFORMANCE_GC_INCREMENTAL, weakcb: constants.NODE_PERFORMANCE_GC_WEAKCB };
  const nodeMs = (kind, from, to) => r.own.gc.filter((g) => g.kind === KIND[kind])
    .reduce((sum, g) => sum + Math.max(0, Math.min(to, r.timeOrigin + g.startTime + g.duration) - Math.max(from, r.timeOrigin + g.startTime)), 0);
  const kindMs = (w, kind) => w.thread.gc.find((g) => g.kind === kind)?.ms ?? 0;
  // The windows the forced collection ran in hold it, each its part, as Node's entries say.
  const gcFrom = r.timeOrigin + entry.startTime;
  const gcTo = gcFrom + entry.duration;
  const over = windows.filter((w) => w.end > gcFrom && w.start < gcTo);
  assert.ok(over.length >= 1, `windows over the collection: ${JSON.stringify(windows.map((w) => [w.start, w.end]))}`);
  for (const w of over) {
    console.log(`# window ${w.seq} (${w.durationMs.toFixed(1)} ms): gc ${JSON.stringify(w.thread.gc)}; Node's major there ${nodeMs('major', w.start, w.end).toFixed(2)} ms`);
    assert.ok(Math.abs(kindMs(w, 'major') - nodeMs('major', w.start, w.end)) <= 1, `window ${w.seq}: rloop ${kindMs(w, 'major')} ms, Node ${nodeMs('major', w.start, w.end)} ms`);
    assert.ok(kindMs(w, 'major') <= w.durationMs + 0.01, 'no more than the window');
    assert.deepStrictEqual(w.thread.gc.map((g) => g.ms), w.thread.gc.map((g) => g.ms).sort((a, b) => b - a), 'longest first');
  }
  const overMs = over.reduce((sum, w) => sum + kindMs(w, 'major'), 0);
  assert.ok(overMs >= entry.duration - 1, `the forced collection, ${entry.duration} ms: ${overMs} ms in its windows`);
  const ended = windows.find((w) => w.start <= gcTo && gcTo <= w.end);
  assert.ok(ended.thread.gc.find((g) => g.kind === 'major')?.count >= 1, 'counted in the window it ended in');
  // Over all the windows, every kind as Node says (each collection within a ms).
  const from = windows[0].start;
  const to = windows[windows.length - 1].end;
  for (const kind of Object.keys(KIND)) {
    const rloopMs = windows.reduce((sum, w) => sum + kindMs(w, kind), 0);
    const n = r.own.gc.filter((g) => g.kind === KIND[kind]).length;
    assert.ok(Math.abs(rloopMs - nodeMs(kind, from, to)) <= Math.max(1, n * 0.5), `${kind}: rloop ${rloopMs} ms, Node ${nodeMs(kind, from, to)} ms over ${n} collections`);
  }
  // The same wherever a window is read.
  const recorded = r.report.elu.windows.find((w) => w.seq === ended.seq);
  assert.deepStrictEqual(recorded?.thread.gc, ended.thread.gc, "the report's window says what the 'window' event did");
  const live = windows.find((w) => w.seq === r.own.last.seq);
  assert.deepStrictEqual(r.own.last.thread.gc, live?.thread.gc, "liveWindow().last says what the 'window' event did");
  // The page's ELU timeline says it in the tooltip of the window it took most of, where it says
  // the thread's CPU (a collection ending just past a close leaves the next one under 0.5 ms).
  const most = over.reduce((a, w) => (kindMs(w, 'major') > kindMs(a, 'major') ? w : a));
  const tips = [...renderHtml(r.report).matchAll(/data-tip="([^"]*)"/g)].map((m) => m[1]).filter((t) => t.includes('thread CPU'));
  const gcMs = most.thread.gc.reduce((sum, g) => sum + g.ms, 0);
  assert.ok(tips.some((t) => t.includes(`garbage collection ${ms(gcMs)}: `) && t.includes(`major GC ${ms(kindMs(most, 'major'))}`)), tips.join('\n---\n'));
}));

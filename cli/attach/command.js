'use strict';
// `rloop attach <pid>`: a capture of a running process, no restart. Events stream while they
// happen; the report comes back and is written here. Exit 0 done, 1 rloop's error, 2 the target
// exited mid-capture (what was collected is written).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { AttachError } = require('./inspector');
const { TargetGone } = require('./session');
const connection = require('./connection');
const agent = require('./agent');
const terminal = require('../../js/report/terminal');
const { liveLines } = require('../../js/top/lines');
const { renderJson } = require('../../js/report/json');
const { compare, formatComparison } = require('../../js/report/compare');
const { OPTIONS } = require('../../js/options');
const { duration } = require('../../js/validate');

// The part of `rloop --help` about attach, and all of `rloop attach --help`.
const USAGE = `  rloop attach <pid> [-d <duration>] [--json <f>] [--html <f>]   capture a running Node process (see docs/attach.md)
      [--port <n> [--host <h>]] [-t <duration>] [--io-threshold <duration>] [--no-io] [--no-auto-scopes] [--no-profile] [--no-heap-stats]
      [--heap-snapshot <f>] [--cpuprofile <f>] [--pprof <f>] [--heap-profile [--heap-pprof <f>]] [--compare <base.json>] [--watch] [--list-targets] [--target <n>]
      durations such as 10s, 500ms, 2m (a bare number: seconds for -d, ms for the thresholds)
      --save-profile, --save-pprof, --save-heap-pprof: aliases of --cpuprofile, --pprof, --heap-pprof
      exit 0 done, 1 failed, 2 the target exited mid-capture (what was collected is written)
`;

// The flags of options of start() and capture() are in their table (js/options.js), their
// aliases too; the rest are attach's own.
const TABLED = OPTIONS.filter((o) => o.flag !== undefined);
const FLAGS = {
  ...Object.fromEntries(TABLED.flatMap(({ flag }) => [flag.name, ...(flag.aliases ?? [])].map((name) => [name, {
    type: flag.arg === undefined ? 'boolean' : 'string',
    ...(name === flag.name && flag.short ? { short: flag.short } : {}),
  }]))),
  port: { type: 'string' },
  host: { type: 'string' },
  'heap-stats': { type: 'boolean' }, // loop-detective's flag; heap stats are on unless --no-heap-stats
  compare: { type: 'string' },
  watch: { type: 'boolean' },
  'list-targets': { type: 'boolean' },
  target: { type: 'string', default: '0' },
  help: { type: 'boolean', short: 'h' },
};

function number(name, text, min, max) {
  const n = Number(text);
  if (!Number.isFinite(n) || n < min || n > max) throw new AttachError(`--${name} must be a number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return n;
}

/** The text given to the flag of option `label` or to one of its aliases, or undefined. */
function flagText(values, label) {
  const { flag } = TABLED.find((o) => o.label === label);
  const given = [flag.name, ...(flag.aliases ?? [])].filter((name) => values[name] !== undefined);
  if (given.length > 1) throw new AttachError(`--${given[0]} and --${given[1]} (its alias) are both given: give one`);
  return values[given[0]];
}

/** The duration in ms given to the flag of option `label`, or the option's default. */
function durationFlag(values, label) {
  const text = flagText(values, label);
  const { flag, range: [min, max], default: fallback } = TABLED.find((o) => o.label === label);
  if (text === undefined) return fallback;
  let ms;
  try {
    ms = Math.round(duration(`--${flag.name}`, text, 'ms', flag.bare));
  } catch (e) {
    throw new AttachError(e.message);
  }
  if (ms < min || ms > max) throw new AttachError(`--${flag.name} must be between ${min}ms and ${max}ms, got ${JSON.stringify(text)}`);
  return ms;
}

/** The command line, checked: every mistake is an AttachError naming the option. */
function options(args) {
  let parsed;
  try {
    parsed = parseArgs({ args, options: FLAGS, allowPositionals: true });
  } catch (e) {
    throw new AttachError(e.message);
  }
  const { values: v, positionals } = parsed;
  if (v.help) return { help: true };
  if (positionals.length > 1) throw new AttachError(`attach takes one PID, got ${positionals.join(' ')}`);
  const pid = positionals.length ? number('pid', positionals[0], 1, 2 ** 22) : undefined;
  if (pid === undefined && v.port === undefined) throw new AttachError('attach needs a PID, or --port of an open inspector');
  if (pid !== undefined && !Number.isInteger(pid)) throw new AttachError(`not a PID: ${positionals[0]}`);
  if (v.host !== undefined && v.port === undefined) throw new AttachError('--host needs --port');
  const out = (label) => {
    const file = flagText(v, label);
    return file === undefined ? false : path.resolve(file);
  };
  const off = (label) => !flagText(v, label); // a --no-… switch
  return {
    pid,
    port: v.port === undefined ? undefined : number('port', v.port, 1, 65535),
    host: v.host,
    durationMs: durationFlag(v, 'durationMs'),
    start: {
      // By their alias names: the target's own rloop, older than this command, may know no other.
      lagThreshold: durationFlag(v, 'lagThresholdMs'),
      ioThreshold: durationFlag(v, 'ioThresholdMs'),
      io: off('io'),
      autoScopes: off('autoScopes'), // as zero-code: an app nobody instrumented still shows who is busy
    },
    profile: off('profile'),
    heapStats: off('heapStats'),
    heapSnapshot: out('heapSnapshot'),
    cpuprofile: out('cpuprofile'),
    pprof: out('pprof'),
    heapProfile: Boolean(flagText(v, 'heapProfile')),
    heapPprof: out('heapPprof'),
    json: out('json'),
    html: out('html'),
    compare: v.compare,
    watch: Boolean(v.watch),
    listTargets: Boolean(v['list-targets']),
    target: number('target', v.target, 0, 1e6),
  };
}

/** What to print where: `out` the report, `err` progress; both plain unless a colour TTY. */
function printer(out, err) {
  const c = terminal.palette(terminal.wantsColor(out));
  const live = Boolean(err.isTTY);
  let status = '';
  const clear = () => { if (live && status) err.write('\r\x1b[K'); };
  return {
    c,
    line(text) {
      clear();
      out.write(`${text}\n`);
      if (live && status) err.write(status);
    },
    log(text) {
      clear();
      err.write(`rloop: ${text}\n`);
      if (live && status) err.write(status);
    },
    status(text) {
      if (!live) return;
      clear();
      status = text;
      if (text) err.write(text);
    },
  };
}

/** One capture in the target: resolves to the report, or `{ gone: report|null }` if the target exited first. */
async function captureOnce(conn, o, p) {
  const tmp = path.join(os.tmpdir(), `rloop-attach-${conn.info.pid}-${conn.id}-${Date.now()}.json`);
  const options = {
    durationMs: o.durationMs,
    profile: o.profile,
    heapStats: o.heapStats,
    heapSnapshot: o.heapSnapshot,
    cpuprofile: o.profile ? o.cpuprofile : false,
    pprof: o.profile ? o.pprof : false,
    heapProfile: o.heapProfile,
    heapPprof: o.heapProfile ? o.heapPprof : false,
    json: tmp, // the exit guard's partial report, should the target exit mid-capture
  };
  const end = Date.now() + o.durationMs;
  const tick = setInterval(() => p.status(`capturing… ${Math.max(0, Math.ceil((end - Date.now()) / 1000))} s left`), 250);
  tick.unref?.();
  const exiting = new Promise((resolve) => {
    conn.main.once('NodeRuntime.waitingForDisconnect', () => resolve('exit'));
    conn.s.once('gone', () => resolve('exit'));
  }).then((why) => {
    conn.exiting = true; // it runs no more JS, and waits for rloop to leave
    return why;
  });
  try {
    const result = await Promise.race([conn.s.evaluate(agent.callFromLoop(agent.capture, { options }), { awaitPromise: true, withinMs: Infinity }).then((json) => JSON.parse(json)), exiting]);
    if (result !== 'exit') return result;
  } catch (e) {
    if (!(e instanceof TargetGone)) throw new AttachError(`capture failed in the target: ${e.message}`);
  } finally {
    clearInterval(tick);
    p.status('');
  }
  // The target is exiting (or gone): its exit guard wrote what was collected.
  let partial = null;
  try {
    partial = JSON.parse(fs.readFileSync(tmp, 'utf8'));
    fs.rmSync(tmp, { force: true });
  } catch {
    // killed outright: nothing was written
  }
  return { gone: partial };
}

/** `{pid}`, `{n}` (the capture's number: --watch) and `{time}` in an output path. */
function expand(file, r, n) {
  const time = new Date(r.meta.start).toISOString().replace(/[:.]/g, '-');
  return file.replaceAll('{pid}', String(r.meta.pid)).replaceAll('{n}', String(n)).replaceAll('{time}', time);
}

function report(r, o, p, out, n) {
  out.write(terminal.formatReport(r, { color: p.c.bold('x') !== 'x' }));
  if (o.json) fs.writeFileSync(expand(o.json, r, n), renderJson(r, { pretty: true }));
  if (o.html) fs.writeFileSync(expand(o.html, r, n), require('../../js/report/html').renderHtml(r));
  for (const f of [o.json, o.html]) if (f) p.log(`wrote ${expand(f, r, n)}`);
  if (o.compare) {
    let base;
    try {
      base = JSON.parse(fs.readFileSync(o.compare, 'utf8'));
    } catch (e) {
      throw new AttachError(`cannot read the baseline ${o.compare}: ${e.code || e.message}`);
    }
    out.write(`\n${formatComparison(compare(base, r))}`);
  }
}

async function attach(args, out, err) {
  const o = options(args);
  if (o.help) {
    out.write(`usage:\n${USAGE}`);
    return 0;
  }
  const p = printer(out, err);
  let capturing = false; // events between captures (the report being written) are not printed
  const live = liveLines((line) => p.line(line), p.c);
  const conn = await connection.open({ ...o, log: p.log, events: ['lag', 'slowIO'] }, (type, data) => {
    if (capturing) live.event(type, data);
  });
  if (o.listTargets) {
    for (const t of conn.targets) out.write(`${t.n}  ${t.what}${t.title ? `  ${t.title}` : ''}${t.url ? `  ${t.url}` : ''}\n`);
    await connection.close(conn);
    return 0;
  }
  const i = conn.info;
  const from = i.sessions > 1 ? 'another rloop attach is running there: its monitor is shared'
    : `rloop from ${{ running: 'the monitor already running there', app: "the app's own install", cli: 'this command' }[i.from]}`;
  p.log(`attached to PID ${i.pid} (Node ${i.node}${i.thread ? `, worker thread ${i.thread}` : ''}), ${from}${o.watch ? '' : `; capturing ${o.durationMs / 1000} s`}`);
  if (!i.linked) p.log("warning: the target cannot see this command's connection (another network namespace?): if this command is killed without leaving, rloop stays loaded there");
  let stopping = false;
  const onSignal = () => {
    if (stopping || !i.started) {
      p.log('leaving without a report');
      connection.close(conn).finally(() => process.exit(130));
      return;
    }
    stopping = true;
    p.log('stopping: writing what was collected (Ctrl-C again leaves without it)');
    // Leaving stops the monitor rloop started, which ends the running capture, partial.
    connection.leave(conn);
  };
  if (i.nodered) {
    const how = { attach: 'on, through its message hooks (start-up work is not seen)', plugin: "on: the rloop plugin's" }[i.nodered.attribution] ?? i.nodered.attribution;
    p.log(`Node-RED ${i.nodered.version}: per-node attribution ${how}`);
  }
  if (!i.started) p.log("the app's own monitor is reused (its thresholds apply); Ctrl-C leaves without a report");
  process.on('SIGINT', onSignal);
  try {
    for (let n = 1; ; n++) {
      capturing = true;
      const r = await captureOnce(conn, o, p);
      capturing = false;
      live.drop();
      if (r.gone !== undefined) {
        if (r.gone) report(r.gone, o, p, out, n);
        p.log(`the target exited mid-capture${r.gone ? '; the partial report holds what was collected' : ' without writing what was collected (killed?)'}`);
        return 2;
      }
      report(r, o, p, out, n);
      if (!o.watch || stopping) break;
    }
  } finally {
    process.off('SIGINT', onSignal);
    await connection.close(conn);
  }
  return 0;
}

/** attach(), its failures one line on `err` and exit code 1 (2 means the target exited). */
async function run(args, out, err) {
  try {
    return await attach(args, out, err);
  } catch (e) {
    err.write(`rloop: ${e instanceof AttachError ? e.message : e.stack}\n`);
    return 1;
  }
}

module.exports = { run, options, USAGE, FLAGS };

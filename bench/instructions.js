'use strict';
// Instructions per event, counted by valgrind (cachegrind, no cache simulation): a count, not a
// time, so it repeats to about 1 % whatever else this shared machine does, where wall and CPU
// times move by 10–30 % from process to process. What it leaves out: the kernel (an HTTP
// request's socket reads, writes and epoll are not counted, so a share of a request's
// instructions is larger than its share of CPU time), and waiting (time-driven work such as
// the lag lookout thread's looks is counted per event 30–50× too often, as everything runs that
// much slower under valgrind).
//
//   node bench/instructions.js [--quick] [--scale X] [--only a,b] [--configs a,b] [--out DIR]
//
// Each sample is bench/child.js under valgrind, at two sizes: instructions per event is the
// slope between them, so start-up, module loading and one-off compilation cancel. Node runs with
// --single-threaded: with V8 compiling and collecting on other threads, how many events run
// before optimised code arrives varies from run to run, and the slope by up to 30 %; on one
// thread it repeats to 1–2 %. Prints a table per workload; counts and the environment go to
// bench/results/instructions-<time>.json.

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { spawnSync } = require('node:child_process');
const WORKLOADS = require('./workloads');
const { CONFIGS, BASELINE, REFERENCE, SUBJECT, FULL } = require('./configs');
const { list, positive } = require('./options');
const { fingerprint } = require('./fingerprint');

const CHILD = path.join(__dirname, 'child.js');
const SMALL = 4; // the small size is a quarter of the large one
// Fewer than the timed benchmark's: everything runs 30–50× slower under valgrind.
const EVENTS = { setImmediate: 2e5, 'setImmediate-grouped': 2e5, await: 2e5, http: 2e4 };

const USAGE = `usage: node bench/instructions.js [options]   (needs valgrind: Debian package valgrind)
  --quick            setImmediate only, no hook and rloop, a tenth of the events (a smoke run)
  --scale X          multiply the event counts (default 1: 200 000 setImmediate or awaits,
                     20 000 HTTP requests; the slope runs from a quarter of that)
  --only a,b         workloads: ${Object.keys(EVENTS).join(', ')}
  --configs a,b      configurations: ${Object.keys(CONFIGS).join(', ')}
  --out DIR          where the JSON result goes (default bench/results)`;

function options(argv) {
  const { values: v } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      scale: { type: 'string' },
      only: { type: 'string' },
      configs: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (v.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const workloads = v.only ? list(v.only, EVENTS, 'workload', USAGE) : ['setImmediate', 'await', 'http'];
  return {
    scale: positive(v.scale ?? (v.quick ? 0.1 : 1), 'scale', USAGE),
    workloads: v.quick && !v.only ? ['setImmediate'] : workloads,
    configs: v.configs ? list(v.configs, CONFIGS, 'configuration', USAGE) : v.quick ? [BASELINE, SUBJECT] : Object.keys(CONFIGS),
    out: path.resolve(v.out ?? path.join(__dirname, 'results')),
  };
}

/** Instructions of one run of `events` events, and how many events it ran (warm-up included). */
function count(workload, config, events) {
  const node = [process.execPath, '--single-threaded', '--expose-gc', CHILD, workload, config, String(events)];
  const args = ['--tool=cachegrind', '--cache-sim=no', '--cachegrind-out-file=/dev/null', ...node];
  const p = spawnSync('valgrind', args, { encoding: 'utf8', timeout: 30 * 60e3, maxBuffer: 64e6 });
  if (p.error?.code === 'ENOENT') throw new Error(`valgrind is not installed (Debian package valgrind)\n${USAGE}`);
  const refs = /I\s+refs:\s+([\d,]+)/.exec(p.stderr ?? '');
  if (p.status !== 0 || !refs) throw new Error(`${workload}/${config} under valgrind failed (exit ${p.status} ${p.signal ?? ''}):\n${p.stderr}`);
  const result = JSON.parse(p.stdout.trim().split('\n').pop());
  return { instructions: Number(refs[1].replaceAll(',', '')), events: result.events + result.warmupEvents };
}

/** Instructions per event of `config`: the slope between a run of `events` and one a quarter as long. */
function perEvent(workload, config, events) {
  const small = count(workload, config, Math.round(events / SMALL));
  const large = count(workload, config, events);
  return { perEvent: (large.instructions - small.instructions) / (large.events - small.events), small, large };
}

/** The issue's figures in instructions: overhead per event, pure-JS ÷ rloop, and full's extra share. */
function summarize(per) {
  const base = per[BASELINE]?.perEvent;
  const over = (c) => (base === undefined || per[c] === undefined ? null : per[c].perEvent - base);
  return {
    overhead: Object.fromEntries(Object.keys(per).map((c) => [c, over(c)])),
    ratio: over(REFERENCE) !== null && over(SUBJECT) ? over(REFERENCE) / over(SUBJECT) : null,
    fullShare: per[FULL] && per[SUBJECT] && base ? (per[FULL].perEvent - per[SUBJECT].perEvent) / base : null,
  };
}

function main() {
  const opts = options(process.argv.slice(2));
  const fp = fingerprint({ scale: opts.scale, method: 'valgrind --tool=cachegrind --cache-sim=no, node --single-threaded, slope between two sizes' });
  const result = { fingerprint: fp, workloads: {} };
  for (const name of opts.workloads) {
    const w = WORKLOADS[name];
    const events = Math.max(SMALL * 100, Math.round(EVENTS[name] * opts.scale));
    const per = {};
    for (const config of opts.configs.filter((c) => !w.configs || w.configs.includes(c))) {
      per[config] = perEvent(name, config, events);
      console.error(`${name}/${config}: ${Math.round(per[config].perEvent)} instructions/event`);
    }
    const s = summarize(per);
    result.workloads[name] = { events, configs: per, ...s };
    console.log(`\n${name}: ${w.describe(events)}; instructions per event (valgrind), slope over ${events / SMALL}…${events} events`);
    for (const [c, r] of Object.entries(per)) {
      const o = s.overhead[c];
      console.log(`  ${c.padEnd(8)} ${Math.round(r.perEvent).toLocaleString('en').padStart(9)}${o === null || c === BASELINE ? '' : `   ${o >= 0 ? '+' : ''}${Math.round(o).toLocaleString('en')} over ${BASELINE}`}`);
    }
    if (s.ratio !== null) console.log(`  ${REFERENCE} overhead ÷ ${SUBJECT} overhead: ${s.ratio.toFixed(1)}× (target ${w.target.ratio}×)`);
    if (s.fullShare !== null) console.log(`  lag watchdog + I/O tracking, (${FULL} − ${SUBJECT}) ÷ ${BASELINE}: ${(s.fullShare * 100).toFixed(1)} % of the user-space instructions (target ${w.target.fullShare * 100} % of CPU)`);
  }
  fs.mkdirSync(opts.out, { recursive: true });
  const file = path.join(opts.out, `instructions-${fp.startedAt.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`\nresult: ${path.relative(process.cwd(), file)}`);
}

main();

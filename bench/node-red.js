'use strict';
// Node-RED with and without the rloop plugin: inject → 5 Function nodes → inactive debug, the
// inject driven as fast as the flow takes messages (a fixed number in flight). Messages per
// second through the flow in fresh processes, configurations interleaved and rotated each round,
// medians over rounds (method: /work/shared/DESIGN.md §7).
//
//   node bench/node-red.js [--rounds N] [--seconds S] [--configs a,b] [--node-red DIR] [--out DIR] [--quick]
//   node bench/node-red.js --instructions [--messages N] [--warmup N] [--runs N] [--configs a,b] [--node-red DIR] [--out DIR]
//
// Configurations: `none` (rloop not installed), `on` (the plugin, attribution on), `off` (the
// plugin installed, `rloop: { enabled: false }`), `core` (the plugin off, the application runs
// rloop.start() itself: the core's async hooks alone, no Node-RED hook, nothing charged to nodes),
// and two floors without rloop: `hooks` (empty async hooks) and `clock` (empty hooks that read the
// clock once per callback, the least exact timing of every callback costs); `hooks2` and `clock2`
// are the same without `init`, the floors on Node ≥ 24 (bench/acf.md); `redhooks`, the plugin's
// three Node-RED hooks left empty; `redclock`, the floor of the plugin on Node ≥ 24: those hooks
// reading the clock where a delivery changes scope (onReceive, postReceive), beside `clock2`.
// `--configs a,b` picks some (`none` always runs: the ratios are to it).
// Prints a table; raw samples and the environment go to bench/results/node-red-<time>.json.
// `--instructions`: instructions per message instead (valgrind's callgrind, Node on one thread),
// counted in steady state only: the flow first takes `--warmup` messages (default 30 000) with
// valgrind's instrumentation off, then it is switched on (callgrind_control) for N / 4 and for N
// messages (default 8 000) in two processes, and the slope between them is the figure. From
// start-up, the heap grows for the first ≈ 15 000 messages and its major GCs dominate a count
// (bench/acf.md). Everything runs ≈ 100× slower counted, so the plugin's `keyed` budget is scaled
// to match: 5 a window keys about the share of messages that 500 keys at full speed.

const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { spawn, spawnSync } = require('node:child_process');
const { summarize } = require('./stats');
const { list, positive } = require('./options');
const { fingerprint } = require('./fingerprint');

const CONFIGS = {
  none: { plugin: false, settings: {} },
  on: { plugin: true, settings: {} },
  off: { plugin: true, settings: { rloop: { enabled: false } } },
  core: { plugin: true, settings: { rloop: { enabled: false } }, monitor: true },
  hooks: { plugin: false, settings: {}, floor: 'hooks3' },
  clock: { plugin: false, settings: {}, floor: 'clock' },
  // The floors where the scope travels by AsyncContextFrame (Node ≥ 24): no init hook.
  hooks2: { plugin: false, settings: {}, floor: 'hooks2' },
  clock2: { plugin: false, settings: {}, floor: 'clock2' },
  // The plugin's three Node-RED hooks (onReceive, postReceive, onSend), empty: what hooking
  // every delivery costs in Node-RED itself, before any attribution.
  redhooks: { plugin: false, settings: {}, redHooks: 'empty' },
  redclock: { plugin: false, settings: {}, redHooks: 'clock', floor: 'clock2' },
};
const USAGE = `usage: node bench/node-red.js [--rounds N] [--seconds S] [--configs a,b] [--node-red DIR] [--out DIR] [--quick]
       node bench/node-red.js --instructions [--messages N] [--warmup N] [--runs N] [--configs a,b] [--node-red DIR] [--out DIR]
  configurations: ${Object.keys(CONFIGS).join(', ')}`;
const IN_FLIGHT = 200; // messages between the inject and the debug node at any time
const COUNTING = 'rloop-bench: counting'; // the child's mark on stdout: --trace-gc's lines after it are of the count
const WARMUP_MS = 1500;
const VALGRIND_KEYED = 5;
// V8's flags of a count. The young generation's size and when it is collected are V8's choice,
// by heuristics that differ between processes (tasks, growth): one run collected every 32 MB and
// the next every 64 MB. Fixed here, each message pays its share of the same collections in every
// configuration; a major GC is made before counting, and --trace-gc says what GCs the count holds.
const GC_FLAGS = ['--expose-gc', '--trace-gc', '--no-minor-gc-task', '--min-semi-space-size=16', '--max-semi-space-size=16'];
const clockSink = new Float64Array(1); // keeps the clock reads of `redclock` from being optimised away, allocating nothing

// Flow nodes need x and y: without them Node-RED takes a node for a config node.
const FLOWS = [
  { id: 't1', type: 'tab', label: 'bench' },
  { id: 'inj', type: 'inject', z: 't1', x: 100, y: 60, props: [{ p: 'payload' }], payload: '', payloadType: 'date', repeat: '', once: false, wires: [['f1']] },
  ...[1, 2, 3, 4, 5].map((i) => ({
    id: `f${i}`, type: 'function', z: 't1', x: 100 + 150 * i, y: 60, name: `f${i}`, outputs: 1,
    func: 'msg.payload = msg.payload + 1;\nreturn msg;', wires: [[i < 5 ? `f${i + 1}` : 'dbg']],
  })),
  { id: 'dbg', type: 'debug', z: 't1', x: 1000, y: 60, active: false, wires: [] },
];

/**
 * One sample, in this (fresh) process: messages per second through the flow; with `messages`,
 * it takes `warmup` messages, has valgrind count the next `messages`, and exits.
 */
async function child(config, seconds, nodeRed, messages, warmup) {
  const { startNodeRed } = require('../test/fixtures/node-red-embed');
  const { plugin, settings, monitor, floor, redHooks } = CONFIGS[config];
  if (monitor) require('..').start();
  if (floor) require('./configs').CONFIGS[floor].setup(); // the same hooks as bench/run.js's
  const scaled = messages && settings.rloop?.enabled !== false ? { rloop: { ...settings.rloop, keyed: VALGRIND_KEYED } } : {};
  const { RED } = await startNodeRed({ nodeRed, flows: FLOWS, plugin, settings: { ...settings, ...scaled } });
  // One argument each: Node-RED waits on a hook of two for its callback, and one of none stalled the flow.
  const clocked = (event) => { clockSink[0] += performance.now(); };
  if (redHooks) for (const hook of ['onReceive', 'postReceive', 'onSend']) RED.hooks.add(`${hook}.bench`, redHooks === 'clock' && hook !== 'onSend' ? clocked : (event) => {});
  const inject = RED.nodes.getNode('inj');
  let sent = 0;
  let done = 0;
  let until = messages === undefined ? Infinity : warmup; // messages sent in this phase at most
  let phaseDone = null;
  RED.nodes.getNode('dbg').on('input', () => {
    if (++done === until) phaseDone();
  });
  const drive = () => {
    for (; sent - done < IN_FLIGHT && sent < until; sent++) inject.receive({});
    if (sent < until) setImmediate(drive);
  };
  const phase = (n) => new Promise((resolve) => {
    until = n;
    phaseDone = resolve;
    drive();
  });
  if (messages !== undefined) {
    await phase(warmup);
    // From a collected heap: the next major GC is then far enough off not to land in a count,
    // where one would weigh as much as a few thousand messages. --trace-gc's lines after the mark
    // say what did.
    globalThis.gc();
    fs.writeSync(1, `${COUNTING}\n`);
    await callgrind('on');
    await phase(warmup + messages);
    await callgrind('off');
    process.exit(0);
  }
  drive();
  await new Promise((resolve) => setTimeout(resolve, WARMUP_MS));
  const from = done;
  const t0 = process.hrtime.bigint();
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
  const perSecond = (done - from) / (Number(process.hrtime.bigint() - t0) / 1e9);
  fs.writeSync(1, `${JSON.stringify({ config, perSecond, node: process.version, nodeRed: RED.version() })}\n`);
  process.exit(0);
}

/** Switches valgrind's instrumentation of this process on or off; resolves once it is. */
function callgrind(state) {
  return new Promise((resolve, reject) => {
    spawn('callgrind_control', [`--instr=${state}`, String(process.pid)], { stdio: 'ignore' })
      .on('error', reject)
      .on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`callgrind_control --instr=${state} exited ${code}`))));
  });
}

function sample(config, seconds, nodeRed) {
  const p = spawnSync(process.execPath, [__filename, '--child', config, '--seconds', String(seconds), ...(nodeRed ? ['--node-red', nodeRed] : [])], {
    encoding: 'utf8',
    timeout: 120e3,
  });
  if (p.status !== 0) throw new Error(`sample ${config} failed (exit ${p.status} ${p.signal ?? ''}):\n${p.stderr}`);
  return JSON.parse(p.stdout.trim().split('\n').pop());
}

/**
 * Instructions of `messages` messages through the flow, after `warmup` uncounted ones, and the
 * garbage collections V8 made while they were counted.
 */
function count(config, messages, warmup, nodeRed) {
  const node = [process.execPath, '--single-threaded', ...GC_FLAGS, __filename, '--child', config, '--messages', String(messages), '--warmup', String(warmup), ...(nodeRed ? ['--node-red', nodeRed] : [])];
  const p = spawnSync('valgrind', ['--tool=callgrind', '--instr-atstart=no', '--callgrind-out-file=/dev/null', ...node], { encoding: 'utf8', timeout: 30 * 60e3, maxBuffer: 64e6 });
  if (p.error?.code === 'ENOENT') throw new Error('valgrind is not installed (Debian package valgrind)');
  const refs = /I\s+refs:\s+([\d,]+)/.exec(p.stderr ?? '');
  const counted = p.stdout.split(`${COUNTING}\n`)[1];
  if (p.status !== 0 || !refs || counted === undefined) throw new Error(`${config} under valgrind failed (exit ${p.status} ${p.signal ?? ''}):\n${p.stderr.slice(-4000)}`);
  const gcs = (kind) => counted.split('\n').filter((line) => line.includes(kind)).length;
  return { instructions: Number(refs[1].replaceAll(',', '')), scavenges: gcs(': Scavenge'), majorGcs: gcs(': Mark-Compact') };
}

/**
 * Instructions per message of each configuration, `runs` times with the configurations
 * interleaved, and each run's ratio to `none`'s of the same run.
 */
function instructions(names, { messages, warmup, runs }, nodeRed, out) {
  const fp = fingerprint({ messages, warmup, runs, nodeRed: nodeRed ?? 'devDependency', inFlight: IN_FLIGHT, keyed: VALGRIND_KEYED, method: 'valgrind --tool=callgrind, instrumentation on after the warm-up, node --single-threaded, slope between two sizes' });
  const samples = [];
  for (let run = 0; run < runs; run++) {
    for (const c of names) {
      const small = count(c, messages / 4, warmup, nodeRed);
      const large = count(c, messages, warmup, nodeRed);
      const gcs = `GCs counted: ${small.scavenges} + ${small.majorGcs} major, ${large.scavenges} + ${large.majorGcs} major`;
      samples.push({ run, config: c, small, large, perMessage: (large.instructions - small.instructions) / (messages * 0.75) });
      console.error(`[run ${run + 1}/${runs}] ${c}: ${Math.round(samples.at(-1).perMessage)} instructions a message (${gcs})`);
    }
  }
  const of = (c) => samples.filter((s) => s.config === c);
  const ratios = (c) => of(c).map((s, run) => s.perMessage / of('none')[run].perMessage);
  const range = (xs, digits) => `${Math.min(...xs).toFixed(digits)}–${Math.max(...xs).toFixed(digits)}`;
  console.log(`Node-RED on Node ${process.version}: inject → 5 Function nodes → inactive debug; instructions a message (valgrind) after ${warmup} messages, slope over ${messages / 4}…${messages}, ${runs} runs`);
  console.log('config   instructions a message (median, min–max)   × none (median, min–max)');
  for (const c of names) {
    const per = of(c).map((s) => s.perMessage);
    const r = ratios(c);
    console.log(`${c.padEnd(8)} ${String(Math.round(summarize(per).median)).padStart(9)} (${range(per, 0)})`.padEnd(52) + (c === 'none' ? '' : `${summarize(r).median.toFixed(3)} (${range(r, 3)})`));
  }
  const major = samples.filter((s) => s.large.majorGcs !== s.small.majorGcs);
  if (major.length) console.log(`a major GC landed in the count of: ${major.map((s) => `${s.config} (run ${s.run + 1})`).join(', ')}; it weighs as much as thousands of messages`);
  fs.mkdirSync(out, { recursive: true });
  const file = path.join(out, `node-red-instructions-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify({ fingerprint: fp, samples }, null, 2)}\n`);
  console.error(`counts: ${file}`);
}

function main() {
  const { values: o } = parseArgs({
    options: {
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      'node-red': { type: 'string' },
      configs: { type: 'string' },
      quick: { type: 'boolean', default: false },
      out: { type: 'string', default: path.join(__dirname, 'results') },
      child: { type: 'string' },
      instructions: { type: 'boolean', default: false },
      messages: { type: 'string' },
      warmup: { type: 'string' },
      runs: { type: 'string' },
    },
  });
  const seconds = Number(o.seconds ?? (o.quick ? 1 : 4));
  const nodeRed = o['node-red'] && path.resolve(o['node-red']);
  const messages = o.messages === undefined ? undefined : Number(o.messages);
  const warmup = Math.round(positive(o.warmup ?? 30000, 'warmup', USAGE));
  if (o.child) return child(o.child, seconds, nodeRed, messages, warmup);
  if (messages !== undefined && !(Number.isInteger(messages) && messages >= 400 && messages % 4 === 0)) throw new RangeError(`--messages must be a multiple of 4 and at least 400, got ${o.messages}`);

  const names = o.configs ? ['none', ...list(o.configs, CONFIGS, 'configuration', USAGE).filter((c) => c !== 'none')] : Object.keys(CONFIGS);
  if (o.instructions) return instructions(names, { messages: messages ?? 8000, warmup, runs: Math.round(positive(o.runs ?? 3, 'runs', USAGE)) }, nodeRed, o.out);
  const rounds = Number(o.rounds ?? (o.quick ? 1 : 7));
  const fp = fingerprint({ rounds, seconds, nodeRed: nodeRed ?? 'devDependency', inFlight: IN_FLIGHT });
  if (fp.loadavg[0] > fp.cores / 2) console.error(`warning: load average ${fp.loadavg[0].toFixed(2)} is above half the ${fp.cores} cores: expect noise`);
  const samples = [];
  for (let round = 0; round < rounds; round++) {
    const order = [...names.slice(round % names.length), ...names.slice(0, round % names.length)];
    for (const config of order) {
      const s = { round, ...sample(config, seconds, nodeRed) };
      samples.push(s);
      console.error(`[round ${round + 1}/${rounds}] ${config}: ${Math.round(s.perSecond)} msg/s`);
    }
  }
  const per = Object.fromEntries(names.map((c) => [c, summarize(samples.filter((s) => s.config === c).map((s) => s.perSecond))]));
  // Ratios per round (on/none, off/none from the same round), then their median.
  const ratio = (c) => summarize(Array.from({ length: rounds }, (_, r) => {
    const of = (name) => samples.find((s) => s.round === r && s.config === name).perSecond;
    return of(c) / of('none');
  }));
  const ratios = Object.fromEntries(names.filter((c) => c !== 'none').map((c) => [c, ratio(c)]));
  // The fastest sample of each configuration against none's: noise only ever slows a sample down.
  const best = Object.fromEntries(names.map((c) => [c, per[c].max / per.none.max]));
  const result = { fingerprint: fp, nodeRed: samples[0].nodeRed, perSecond: per, ratio: ratios, fastestRatio: best, samples };

  console.log(`Node-RED ${result.nodeRed} on Node ${process.version}: inject → 5 Function nodes → inactive debug, ${rounds} rounds × ${seconds} s`);
  console.log('config   msg/s (median)   MAD     min–max          × none (median of rounds, its 95 % interval)   fastest ÷ none\'s fastest');
  for (const c of names) {
    const p = per[c];
    const r = c === 'none' ? '' : `${result.ratio[c].median.toFixed(3)} (${result.ratio[c].ci95.map((x) => x.toFixed(3)).join('–')})`;
    const line = `${c.padEnd(8)} ${String(Math.round(p.median)).padStart(14)} ${String(Math.round(p.mad)).padStart(7)}   ${Math.round(p.min)}–${Math.round(p.max)}`;
    console.log(`${line.padEnd(58)}${r.padEnd(33)}${c === 'none' ? '' : best[c].toFixed(3)}`);
  }
  fs.mkdirSync(o.out, { recursive: true });
  const file = path.join(o.out, `node-red-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
  console.error(`raw samples: ${file}`);
}

main();

'use strict';
// What a capture's profiles cost the app: `node bench/profiles.js [rounds]`. Each round, in a
// fresh child per configuration (their order rotated each round), an app does a fixed amount of
// work in two scopes (objects built, serialized, parsed) inside a 3 s capture, and reports its
// throughput. Configurations: no capture (the monitor only), a capture without profiles, with a
// CPU profile, with a CPU profile written as pprof, with a sampling heap profile, and with both
// and both pprofs. It prints, per configuration, the throughput's median and 95 % interval as a
// ratio to no capture, and the time the capture's end took (analysis, pprof encoding, writes:
// the loop is held then). bench/RESULTS.md quotes the result.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { summarize } = require('./stats');

const ROUNDS = Number(process.argv[2] ?? 7);
const DIR = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-bench-profiles-'));
process.on('exit', () => fs.rmSync(DIR, { recursive: true, force: true }));

const CONFIGS = {
  'no capture': null,
  capture: {},
  'CPU profile': { profile: true },
  'CPU profile + pprof': { profile: true, pprof: path.join(DIR, 'cpu.pb.gz') },
  'heap profile': { heapProfile: true },
  'both + both pprofs': { profile: true, pprof: path.join(DIR, 'cpu.pb.gz'), heapProfile: true, heapPprof: path.join(DIR, 'heap.pb.gz') },
};

function child(capture) {
  const script = `
    const rloop = require(${JSON.stringify(require.resolve('..'))});
    const mon = rloop.start();
    const doc = { items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: 'item ' + i, tags: ['a', 'b'] })) };
    const work = () => JSON.parse(JSON.stringify(doc)).items.length;
    let ops = 0;
    let running = true;
    const tick = () => {
      for (let i = 0; i < 20; i++) ops += rloop.scope(i % 4 === 0 ? 'beta' : 'alpha', work) > 0 ? 1 : 0;
      if (running) setImmediate(tick);
    };
    setTimeout(async () => {
      const capture = ${JSON.stringify(capture)};
      const start = performance.now();
      const done = capture ? mon.capture({ durationMs: 3000, heapStats: false, ...capture }) : new Promise((r) => setTimeout(r, 3000));
      tick();
      await done;
      running = false;
      const end = performance.now();
      mon.stop();
      // The capture ends at start + 3 s; what its end took held the loop until now.
      console.log(JSON.stringify({ opsPerS: ops / ((end - start) / 1000), finishMs: Math.max(0, end - start - 3000) }));
    }, 200);`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }).trim().split('\n').pop());
}

const names = Object.keys(CONFIGS);
const results = Object.fromEntries(names.map((n) => [n, []]));
for (let r = 0; r < ROUNDS; r++) {
  const order = [...names.slice(r % names.length), ...names.slice(0, r % names.length)];
  for (const n of order) results[n].push(child(CONFIGS[n]));
  process.stderr.write(`round ${r + 1}/${ROUNDS}\n`);
}
// Each round's ratio to its own no-capture run: the machine's drift between rounds cancels.
const base = results['no capture'].map((x) => x.opsPerS);
const fmt = (s, digits) => `${s.median.toFixed(digits)} [${s.ci95.map((x) => x.toFixed(digits)).join(' … ')}]`;
console.log(`| configuration | throughput, ratio to no capture | capture's end holds the loop, ms |`);
console.log('|---|---|---|');
for (const n of names) {
  const ratio = summarize(results[n].map((x, i) => x.opsPerS / base[i]));
  const finish = summarize(results[n].map((x) => x.finishMs));
  console.log(`| ${n} | ${fmt(ratio, 3)} | ${n === 'no capture' ? '–' : fmt(finish, 0)} |`);
}
console.log(`\n${ROUNDS} rounds, Node ${process.version}, ${os.cpus().length} cores, load ${os.loadavg()[0].toFixed(2)}; medians [95 % intervals].`);

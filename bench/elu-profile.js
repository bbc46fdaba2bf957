'use strict';
// Node's performance.eventLoopUtilization() against rloop's busy time, with and without a CPU
// profile running. `node bench/elu-profile.js [rounds]`: each round, in a fresh child, a loop
// busy 20 ms of every 100 ms for 2 s; it prints the medians (95 % interval) of both ELUs and of
// the profile's own busy share (1 − idle), per configuration. docs/performance.md quotes the result.

const { execFileSync } = require('node:child_process');
const { summarize } = require('./stats');

const ROUNDS = Number(process.argv[2] ?? 7);

function child(profile) {
  const script = `
    const rloop = require(${JSON.stringify(require.resolve('..'))});
    const { performance } = require('node:perf_hooks');
    const mon = rloop.start();
    const spin = (ms) => { const end = performance.now() + ms; while (performance.now() < end); };
    const t = setInterval(() => spin(20), 100);
    setTimeout(async () => {
      const captured = mon.capture({ profile: ${profile}, durationMs: 2000 });
      const before = performance.eventLoopUtilization();
      const report = await captured;
      const node = performance.eventLoopUtilization(before).utilization;
      clearInterval(t);
      mon.stop();
      const c = report.profile?.analysis.categories;
      const busy = c ? 1 - c.idle / report.profile.analysis.durationMs : null;
      console.log(JSON.stringify({ node, rloop: report.elu.thread.elu, profile: busy }));
    }, 300);`;
  return JSON.parse(execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' }));
}

const fmt = (xs) => {
  const s = summarize(xs);
  return `${s.median.toFixed(3)} (${s.ci95.map((x) => x.toFixed(3)).join(' … ')})`;
};

for (const profile of [false, true]) {
  const rounds = Array.from({ length: ROUNDS }, () => child(profile));
  const line = [`profile ${profile ? 'on ' : 'off'}`, `Node ELU ${fmt(rounds.map((r) => r.node))}`, `rloop ELU ${fmt(rounds.map((r) => r.rloop))}`];
  if (profile) line.push(`profile busy ${fmt(rounds.map((r) => r.profile))}`);
  console.log(line.join(', '));
}

'use strict';
// The benchmark orchestrator (`npm run bench`, `node bench/run.js --help`).
// Method (docs: /work/shared/DESIGN.md §7): one fresh process per sample; per round every
// workload runs each configuration once, in an order rotated each round (A B C, B C A, …);
// medians, MADs and min–max over rounds; raw samples and an environment fingerprint go to
// a JSON file; the table goes to stdout, progress to stderr.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const WORKLOADS = require('./workloads');
const { options } = require('./options');
const { fingerprint } = require('./fingerprint');
const { summarizeWorkload } = require('./summary');
const { table } = require('./table');
const { median } = require('./stats');

const CHILD = path.join(__dirname, 'child.js');
const SAMPLE_TIMEOUT_MS = 300e3;

function configsFor(workload, opts) {
  return workload.configs ? opts.configs.filter((c) => workload.configs.includes(c)) : opts.configs;
}

function eventsFor(workload, opts) {
  return Math.max(10, Math.round(workload.events * opts.scale));
}

function rotate(list, by) {
  const k = by % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

function sample(workload, config, events) {
  const args = ['--expose-gc', CHILD, workload, config, String(events)];
  const p = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: SAMPLE_TIMEOUT_MS });
  if (p.status !== 0) {
    const why = p.error?.message ?? `exit ${p.status} ${p.signal ?? ''}`;
    throw new Error(`sample ${workload}/${config} failed (${why}):\n${p.stderr}`);
  }
  return JSON.parse(p.stdout.trim().split('\n').pop());
}

function parseOptions() {
  try {
    return options(process.argv.slice(2));
  } catch (err) {
    console.error(err.message); // a usage error: no stack trace
    process.exit(2);
  }
}

function main() {
  const opts = parseOptions();
  const fp = fingerprint(opts);
  if (fp.loadavg[0] > fp.cores / 2) {
    console.error(`warning: load average ${fp.loadavg[0].toFixed(2)} is above half the ${fp.cores} cores: expect noise`);
  }
  const samples = [];
  const started = Date.now();
  for (let round = 0; round < opts.rounds; round++) {
    for (const w of opts.workloads) {
      const workload = WORKLOADS[w];
      const events = eventsFor(workload, opts);
      rotate(configsFor(workload, opts), round).forEach((config, order) => {
        const s = { round, order, workload: w, config, loadavg: os.loadavg()[0], ...sample(w, config, events) };
        s.perEvent = median(s.batches) / (s.events / s.batches.length);
        s.fastest = Math.min(...s.batches) / (s.events / s.batches.length);
        samples.push(s);
        const secs = ((Date.now() - started) / 1e3).toFixed(0);
        console.error(`[round ${round + 1}/${opts.rounds}, ${secs} s] ${w} ${config}: ${s.perEvent.toFixed(1)} ns/event`);
      });
    }
  }

  const workloads = {};
  for (const w of opts.workloads) {
    const mine = samples.filter((s) => s.workload === w);
    workloads[w] = summarizeWorkload(WORKLOADS[w], eventsFor(WORKLOADS[w], opts), configsFor(WORKLOADS[w], opts), mine);
  }
  const result = { fingerprint: fp, durationS: (Date.now() - started) / 1e3, workloads, samples };
  fs.mkdirSync(opts.out, { recursive: true });
  const file = path.join(opts.out, `${fp.startedAt.replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, `${JSON.stringify(result, null, 1)}\n`);
  console.log(table(result));
  console.log(`\nresults: ${file}`);
}

main();

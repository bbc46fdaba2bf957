#!/usr/bin/env node
'use strict';
// The node half of `npm test`: the runs of test/plan.js, each file in a `node --test` process of
// its own under that run's Node line (its bin first on PATH, so what a test spawns — `node`,
// `npm`, process.execPath — is the same line; its flags in NODE_OPTIONS). Files that measure
// no time run side by side, as many as the machine has cores; then the timed ones, one at a
// time with nothing of the suite beside them. Each file's output is printed whole when it ends.
// The end: what each failed file said of its failures (again: CI keeps the end of a long log),
// each run's counts, the ten slowest files, and `N passed, N failed`. Every file runs
// even when one fails; the exit code is 1 when any failed or left a file in the project folder
// that git does not ignore (a report a test's app wrote to the cwd).
//
//   node scripts/test.js [files…]           every run of the plan, or only these files in it
//   node scripts/test.js --install          install every Node line and Node-RED the plan needs
//   RLOOP_NODE_LINES=24 npm test             only the runs on these lines
//   RLOOP_TEST_JOBS=1 npm test               shared files one at a time too

const { spawn, spawnSync, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { FILES, RUNS } = require('../test/plan');
const { nodeFor, nodeRedFor, NODE_RED_LINES } = require('../test/fixtures/helpers');

const ROOT = path.resolve(__dirname, '..');
// A file still running after this is killed and fails: one hung test must not take CI's 90 minutes.
const FILE_TIMEOUT_MS = 10 * 60_000;

function positive(name, fallback) {
  const v = process.env[name];
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1) throw new RangeError(`${name}: '${v}' is not a positive integer`);
  return n;
}

function linesAsked() {
  const asked = process.env.RLOOP_NODE_LINES;
  if (!asked) return null;
  const majors = asked.split(',').map((s) => Number(s.trim()));
  if (majors.some((m) => !Number.isInteger(m) || m < 1)) throw new RangeError(`RLOOP_NODE_LINES: '${asked}' is not a comma-separated list of Node majors`);
  return majors;
}

/** Files under test/<area>/ that the plan does not list, and listed files that are not there (test/platform/: scripts/test-platforms.js). */
function unplanned() {
  const onDisk = fs.readdirSync(path.join(ROOT, 'test'), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !['fixtures', 'platform'].includes(d.name))
    .flatMap((d) => fs.readdirSync(path.join(ROOT, 'test', d.name)).filter((f) => f.endsWith('.test.js')).map((f) => `test/${d.name}/${f}`));
  const listed = new Set(FILES.map((f) => f.file));
  return [...onDisk.filter((f) => !listed.has(f)).map((f) => `${f} is in no area of test/plan.js`),
    ...[...listed].filter((f) => !fs.existsSync(path.join(ROOT, f))).map((f) => `${f}, listed in test/plan.js, does not exist`)];
}

const label = (run) => [`Node ${run.node}`, ...(run.flags ?? [])].join(' ');
const versionOf = (bin) => execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();

/** Runs one file; resolves to { code, counts, ms, output }. */
function runFile(job) {
  const env = { ...process.env, PATH: [path.dirname(job.bin), process.env.PATH].join(path.delimiter) };
  delete env.RLOOP_NODE_LINES; // the runner's, not rloop's: zero-code apps the tests start would warn of it
  delete env.RLOOP_TEST_JOBS;
  if (job.run.flags) env.NODE_OPTIONS = [env.NODE_OPTIONS, ...job.run.flags].filter(Boolean).join(' ');
  const args = ['--expose-gc', '--test', '--test-reporter=spec', job.file];
  const start = Date.now();
  return new Promise((resolve) => {
    const child = spawn(job.bin, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (d) => (output += d));
    child.stderr.setEncoding('utf8').on('data', (d) => (output += d));
    const timer = setTimeout(() => {
      output += `\nscripts/test.js: killed after ${FILE_TIMEOUT_MS / 60_000} minutes\n`;
      child.kill('SIGKILL');
    }, FILE_TIMEOUT_MS);
    child.on('error', (e) => resolve({ code: e.message, counts: {}, ms: Date.now() - start, output }));
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // The spec reporter's summary: `ℹ tests N`, `ℹ pass N`, `ℹ fail N`, … at a line's start.
      const counts = {};
      for (const m of output.matchAll(/^ℹ (tests|pass|fail|cancelled|skipped) (\d+)$/gm)) counts[m[1]] = Number(m[2]);
      resolve({ code: code ?? signal, counts, ms: Date.now() - start, output });
    });
  });
}

function report(job, r) {
  const ok = r.code === 0;
  const head = `━━ ${ok ? 'ok' : 'FAILED'} · ${label(job.run)} (${job.version}) · ${job.file} · ${(r.ms / 1000).toFixed(1)} s ━━`;
  process.stdout.write(`\n${head}\n${r.output}${r.output.endsWith('\n') ? '' : '\n'}`);
}

/** Runs `jobs` at most `width` at a time, each reported as it ends. */
async function pool(jobs, width) {
  const queue = [...jobs];
  const worker = async () => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      job.result = await runFile(job);
      report(job, job.result);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, jobs.length) }, worker));
}

/** Of `files` in the project folder, those git does not ignore (build outputs are: target/, artifacts/). */
function unignored(files) {
  if (files.length === 0) return files;
  const r = spawnSync('git', ['check-ignore', '--', ...files], { cwd: ROOT, encoding: 'utf8' });
  if (r.error || r.status > 1) return files; // no git here: every new file counts
  const ignored = new Set(r.stdout.split('\n').filter(Boolean));
  return files.filter((f) => !ignored.has(f));
}

const seconds = (ms) => `${(ms / 1000).toFixed(1)} s`;

/** The spec reporter's list of a file's failing tests, else (it did not get that far) the output's end. */
function failuresOf(output) {
  const at = output.lastIndexOf('✖ failing tests:');
  const text = at >= 0 ? output.slice(at) : output.slice(-4000);
  return text.length > 12_000 ? `${text.slice(0, 12_000)}\n[…]` : text.trimEnd();
}

async function main() {
  const wrong = unplanned();
  if (wrong.length) throw new Error(`test/plan.js and test/ disagree:\n  ${wrong.join('\n  ')}`);
  const lines = linesAsked();
  const runs = RUNS.filter((r) => !lines || lines.includes(r.node));
  const bins = new Map([...new Set(runs.map((r) => r.node))].map((major) => [major, nodeFor(major)])); // installs what is missing
  if (process.argv[2] === '--install') {
    for (const { nodeRed } of NODE_RED_LINES) nodeRedFor(nodeRed);
    for (const [major, bin] of bins) console.log(`Node ${major}: ${versionOf(bin)} ${bin}`);
    return;
  }
  const only = process.argv.slice(2).map((f) => path.relative(ROOT, path.resolve(f)));
  const timed = new Set(FILES.filter((f) => f.timed).map((f) => f.file));
  const versions = new Map([...bins].map(([major, bin]) => [major, versionOf(bin)]));
  const jobs = runs.flatMap((run) => run.files.filter((f) => !only.length || only.includes(f))
    .map((file) => ({ run, file, bin: bins.get(run.node), version: versions.get(run.node), timed: timed.has(file) })));
  if (!jobs.length) throw new Error(`no run of test/plan.js holds ${only.join(', ')}`);

  const before = new Set(fs.readdirSync(ROOT));
  const start = Date.now();
  await pool(jobs.filter((j) => !j.timed), positive('RLOOP_TEST_JOBS', os.availableParallelism()));
  await pool(jobs.filter((j) => j.timed), 1);
  const left = unignored(fs.readdirSync(ROOT).filter((f) => !before.has(f)));
  if (left.length) {
    console.log(`\nthe tests left ${left.join(', ')} in ${ROOT}`);
    for (const f of left) fs.rmSync(path.join(ROOT, f), { recursive: true, force: true });
  }

  for (const j of jobs.filter((j) => j.result.code !== 0)) console.log(`\n━━ failed · ${label(j.run)} (${j.version}) · ${j.file} ━━\n${failuresOf(j.result.output)}`);
  const sum = (list, k) => list.reduce((n, j) => n + (j.result.counts[k] ?? 0), 0);
  console.log('\nrun                                         version    files  tests  pass  fail  minutes  result');
  for (const run of runs) {
    const mine = jobs.filter((j) => j.run === run);
    if (!mine.length) continue;
    const failed = mine.filter((j) => j.result.code !== 0);
    const minutes = mine.reduce((n, j) => n + j.result.ms, 0) / 60_000;
    console.log(`${label(run).padEnd(44)}${versions.get(run.node).padEnd(11)}${String(mine.length).padStart(5)}${String(sum(mine, 'tests')).padStart(7)}${String(sum(mine, 'pass')).padStart(6)}${String(sum(mine, 'fail')).padStart(6)}${minutes.toFixed(1).padStart(9)}  ${failed.length ? `FAILED: ${failed.map((j) => j.file).join(', ')}` : 'ok'}`);
  }
  console.log('\nthe ten slowest files:');
  for (const j of [...jobs].sort((a, b) => b.result.ms - a.result.ms).slice(0, 10)) {
    console.log(`${seconds(j.result.ms).padStart(9)}  ${j.file}  (${label(j.run)}${j.timed ? ', timed' : ''})`);
  }
  console.log(`\nwall clock ${seconds(Date.now() - start)}; ${jobs.length} files in ${new Set(jobs.map((j) => j.run)).size} runs`);
  // A file that failed with no count of its own (it did not load, or was killed) counts one failure.
  const failures = jobs.reduce((n, j) => n + (j.result.code === 0 ? 0 : Math.max(1, j.result.counts.fail ?? 0)), 0);
  console.log(`\n${sum(jobs, 'pass')} passed, ${failures} failed`);
  if (failures || left.length) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});

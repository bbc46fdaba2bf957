'use strict';
// What `rloop attach` costs: how long from the command's start until the capture runs in the
// target, and the target's extra CPU while attached. The target (bench/attach-app.js) is a plain
// HTTP server without rloop, sent `--rate` requests a second over loopback throughout. Prints
// medians with their 95 % intervals and writes bench/results/attach-<time>.json.
//
//   node bench/attach.js [--rounds 5] [--span-ms 3000] [--rate 200] [--out bench/results]
//
// Latency: each round a fresh target (cold: the inspector opened by SIGUSR1, rloop loaded for the
// first time), then a second attach to the same target (warm: modules cached). Time to "attached"
// (rloop loaded, its monitor running, the capture started); its first window closes windowMs
// (1 s) later. CPU: spans of --span-ms, process.cpuUsage() of the target read over IPC at both
// ends, in the order none / attached --no-profile / attached with the CPU profile (the default),
// rotated each round so drift is spread over all three.

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { once } = require('node:events');
const { parseArgs } = require('node:util');
const { setTimeout: sleep } = require('node:timers/promises');
const { summarize } = require('./stats');
const { fingerprint } = require('./fingerprint');

const CLI = path.join(__dirname, '..', 'cli', 'rloop.js');
const CLOSE_MS = 2000; // after leaving, the inspector rloop opened closes 1.5 s later (cli/attach/agent.js)

const { values: v } = parseArgs({ options: { rounds: { type: 'string', default: '5' }, 'span-ms': { type: 'string', default: '3000' }, rate: { type: 'string', default: '200' }, out: { type: 'string', default: path.join(__dirname, 'results') } } });
const o = { rounds: Number(v.rounds), spanMs: Number(v['span-ms']), rate: Number(v.rate) };
for (const [k, x, min] of [['rounds', o.rounds, 1], ['span-ms', o.spanMs, 100], ['rate', o.rate, 1]]) {
  if (!Number.isInteger(x) || x < min) throw new RangeError(`--${k} must be an integer ≥ ${min}, got ${JSON.stringify(v[k])}`);
}

async function startTarget() {
  const child = spawn(process.execPath, ['--inspect-port=0', path.join(__dirname, 'attach-app.js')], { stdio: ['ignore', 'ignore', 'ignore', 'ipc'] });
  const [{ port }] = await once(child, 'message');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const load = setInterval(() => {
    http.get({ host: '127.0.0.1', port, path: '/', agent }, (res) => res.resume()).on('error', () => {});
  }, 1000 / o.rate);
  return {
    child,
    async cpu() {
      child.send('cpu');
      const [{ cpu }] = await once(child, 'message');
      return (cpu.user + cpu.system) / 1000; // ms
    },
    stop() {
      clearInterval(load);
      agent.destroy();
      child.kill();
    },
  };
}

/** Runs `rloop attach`; resolves once it says it attached: { ms, done } (`done`: its exit). */
async function attach(pid, args) {
  const t0 = performance.now();
  const cmd = spawn(process.execPath, [CLI, 'attach', String(pid), ...args], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  const done = once(cmd, 'exit').then(([code]) => {
    if (code !== 0) throw new Error(`rloop attach exited ${code}: ${err}`);
  });
  await new Promise((resolve, reject) => {
    cmd.stderr.on('data', (d) => {
      err += d;
      if (/attached to PID/.test(err)) resolve();
    });
    done.then(() => reject(new Error(`rloop attach ended before attaching: ${err}`)), reject);
  });
  return { ms: performance.now() - t0, done };
}

/** The target's CPU ms per second over one span. */
async function span(target) {
  const [c0, t0] = [await target.cpu(), performance.now()];
  await sleep(o.spanMs);
  const [c1, t1] = [await target.cpu(), performance.now()];
  return ((c1 - c0) / (t1 - t0)) * 1000;
}

const CONFIGS = {
  none: null,
  'attached, --no-profile': ['--no-profile'],
  'attached, CPU profile': [],
};

async function main() {
  const latency = { cold: [], warm: [] };
  const cpu = Object.fromEntries(Object.keys(CONFIGS).map((k) => [k, []]));
  const names = Object.keys(CONFIGS);
  for (let r = 0; r < o.rounds; r++) {
    const target = await startTarget();
    try {
      await sleep(500); // the load running, first compilations done
      for (const kind of ['cold', 'warm']) {
        const a = await attach(target.child.pid, ['-d', '0.2', '--no-profile']);
        latency[kind].push(a.ms);
        await a.done;
        await sleep(CLOSE_MS);
      }
      for (let i = 0; i < names.length; i++) {
        const name = names[(i + r) % names.length];
        const args = CONFIGS[name];
        if (args === null) {
          cpu[name].push(await span(target));
          continue;
        }
        // Long enough to cover the span; the attach is measured from its start on, settled.
        const a = await attach(target.child.pid, ['-d', String((o.spanMs + 1500) / 1000), ...args]);
        await sleep(250);
        cpu[name].push(await span(target));
        await a.done;
        await sleep(CLOSE_MS);
      }
    } finally {
      target.stop();
    }
  }
  const result = {
    fingerprint: fingerprint(o),
    latencyMs: { cold: summarize(latency.cold), warm: summarize(latency.warm) },
    cpuMsPerS: Object.fromEntries(names.map((n) => [n, summarize(cpu[n])])),
    extraCpuMsPerS: Object.fromEntries(names.slice(1).map((n) => [n, summarize(cpu[n].map((x, i) => x - cpu.none[i]))])),
    raw: { latency, cpu },
  };
  const f = (s, d = 0) => `${s.median.toFixed(d)} (95 % ${s.ci95[0].toFixed(d)} … ${s.ci95[1].toFixed(d)}, n ${s.n})`;
  console.log(`rloop attach → capture running: cold ${f(result.latencyMs.cold)} ms, warm ${f(result.latencyMs.warm)} ms; first window windowMs (1 s) later`);
  console.log(`target CPU, ms per s at ${o.rate} requests/s (${o.spanMs} ms spans):`);
  for (const n of names) console.log(`  ${n.padEnd(24)} ${f(result.cpuMsPerS[n], 1)}${n === 'none' ? '' : `   extra ${f(result.extraCpuMsPerS[n], 1)}`}`);
  fs.mkdirSync(v.out, { recursive: true });
  const file = path.join(v.out, `attach-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify(result, null, 1));
  console.log(`raw results: ${path.relative(process.cwd(), file)}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});

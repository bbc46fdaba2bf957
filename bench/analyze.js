'use strict';
// Analysis time of a 60 s profile sampled every 100 µs (600 000 samples); the target is < 1 s.
// `node bench/analyze.js`: profiles ~1.5 s of a mixed workload (JSON, regexes, sync fs, crypto,
// plain JS, idle waits), expands it to 60 s (the sample sequence replayed over 20 copies of the
// call tree, as a bigger app would have, deltas rescaled to a 100 µs mean), adds a scope
// timeline switching every ~1 ms, then times analyze() and prints the figures in ms.

const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const crypto = require('node:crypto');
const { setTimeout: sleep } = require('node:timers/promises');
const profile = require('../js/capture/profile');
const { analyze } = require('../js/analyze');
const { summarize } = require('./stats');

const SAMPLES = 600000;
const INTERVAL_US = 100;
const COPIES = 20;
const SCOPES = 20;
const SAMPLES_PER_SCOPE = 10;
const RUNS = 7;

async function mixedWorkload(ms) {
  const file = path.join(os.tmpdir(), `rloop-bench-${process.pid}`);
  fs.writeFileSync(file, crypto.randomBytes(16 * 1024));
  const doc = JSON.stringify(Array.from({ length: 2000 }, (_, i) => ({ id: i, email: `user${i}@example.com` })));
  const end = performance.now() + ms;
  try {
    for (let request = 0; performance.now() < end; request++) {
      const users = JSON.parse(doc);
      const valid = users.filter((u) => /^[\w.+-]+@[\w-]+\.[\w.]+$/.test(u.email)).length;
      fs.readFileSync(file);
      crypto.createHash('sha256').update(JSON.stringify(users.slice(0, 200))).digest('hex');
      let score = valid;
      for (let i = 0; i < 20000; i++) score = (score * 31 + i) % 1000003;
      if (request % 4 === 0) await sleep(2);
      else await new Promise(setImmediate);
    }
  } finally {
    fs.rmSync(file, { force: true });
  }
}

/** `real` replayed to SAMPLES samples over COPIES copies of its tree, deltas rescaled to INTERVAL_US on average. */
function expand(real) {
  const ids = real.nodes.map((n) => n.id);
  const maxId = Math.max(...ids);
  const root = real.nodes.find((n) => n.callFrame.functionName === '(root)');
  const nodes = [{ ...root, children: [] }];
  for (let k = 0; k < COPIES; k++) {
    const id = (x) => x + (k + 1) * maxId;
    for (const n of real.nodes) {
      if (n === root) continue;
      // Each copy of the app's code is other code (a distinct script); Node's and V8's stay as they are.
      const f = n.callFrame;
      const callFrame = f.url.startsWith('file:') ? { ...f, scriptId: `${f.scriptId}.${k}`, url: `${f.url}?copy=${k}` } : f;
      nodes.push({ ...n, id: id(n.id), callFrame, children: (n.children ?? []).map(id) });
    }
    nodes[0].children.push(...root.children.map(id));
  }
  const n = real.samples.length;
  const scale = INTERVAL_US / (real.timeDeltas.slice(1).reduce((a, b) => a + b, 0) / (n - 1));
  const samples = new Array(SAMPLES);
  const timeDeltas = new Array(SAMPLES);
  for (let i = 0; i < SAMPLES; i++) {
    const j = i % n;
    const id = real.samples[j];
    samples[i] = id === root.id ? id : id + ((Math.floor(i / n) % COPIES) + 1) * maxId;
    timeDeltas[i] = j === 0 ? INTERVAL_US : Math.round(real.timeDeltas[j] * scale);
  }
  const startTime = real.startTime;
  const endTime = startTime + timeDeltas.reduce((a, b) => a + b, 0) + INTERVAL_US;
  return { nodes, startTime, endTime, samples, timeDeltas };
}

/** A transition every SAMPLES_PER_SCOPE samples, through SCOPES scopes and unattributed time. */
function timelineOf(p) {
  const timeline = [];
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    if (i % SAMPLES_PER_SCOPE === 0) {
      const k = (i / SAMPLES_PER_SCOPE) % (SCOPES + 1);
      timeline.push([t - 1, k === SCOPES ? null : `route:/api/${k}`]);
    }
  }
  return timeline;
}

function time(fn) {
  const ms = [];
  fn(); // warm-up
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    fn();
    ms.push(performance.now() - t);
  }
  return summarize(ms);
}

(async () => {
  const p = await profile.start({ intervalUs: INTERVAL_US });
  await mixedWorkload(1500);
  const real = await p.stop();
  const big = expand(real);
  const scopeTimeline = timelineOf(big);
  const result = analyze(big, { scopeTimeline });
  const fmt = ({ median, min, max }) => `${median.toFixed(1)} ms (min ${min.toFixed(1)}, max ${max.toFixed(1)}, ${RUNS} runs)`;
  console.log(`captured: ${real.samples.length} samples, ${real.nodes.length} nodes on Node ${process.version}`);
  console.log(`expanded: ${big.samples.length} samples, ${big.nodes.length} nodes, ${(result.durationMs / 1000).toFixed(1)} s, ` +
    `${scopeTimeline.length} scope transitions; patterns: ${result.patterns.map((x) => x.id).join(', ')}`);
  console.log(`analyze, no timeline:   ${fmt(time(() => analyze(big)))}`);
  console.log(`analyze, with timeline: ${fmt(time(() => analyze(big, { scopeTimeline })))}`);
})();

'use strict';
// `npm run bench:check`: bench/node-red.js end to end in a real Node-RED (the newest version the
// running Node line supports, test/fixtures/helpers.js NODE_RED_LINES): its result file's
// shape, nothing of its speed.

const { test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { nodeRedFor } = require('../../test/fixtures/helpers');
const { RUNTIMES } = require('../../test/fixtures/node-red-embed');

assert.ok(RUNTIMES.length, `no Node-RED version is tested on Node ${process.version}`);

// Under valgrind Node-RED starts in ≈ 30 s: four runs.
test('bench/node-red.js --instructions counts instructions a message after a warm-up: a slope over two sizes', { timeout: 600_000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-bench-node-red-'));
  const bench = path.join(__dirname, '..', 'node-red.js');
  try {
    const nodeRed = nodeRedFor(RUNTIMES.at(-1).nodeRed);
    const table = execFileSync(process.execPath, [bench, '--instructions', '--messages', '400', '--warmup', '400', '--runs', '1', '--configs', 'on', '--node-red', nodeRed, '--out', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const [file] = fs.readdirSync(out);
    const { fingerprint, samples } = JSON.parse(fs.readFileSync(path.join(out, file), 'utf8'));
    assert.match(fingerprint.options.method, /callgrind.*after the warm-up.*--single-threaded/);
    assert.equal(fingerprint.options.warmup, 400);
    assert.deepEqual(samples.map((s) => s.config), ['none', 'on']);
    const none = samples[0].perMessage;
    for (const s of samples) {
      assert.equal(s.perMessage, (s.large.instructions - s.small.instructions) / 300, s.config);
      // Counted after the warm-up only: a run's start-up (billions) is in neither size.
      assert.ok(s.perMessage > 10_000 && s.small.instructions < 1000 * s.perMessage, `${s.config}: ${s.perMessage} instructions a message, ${s.small.instructions} for 100`);
      for (const size of [s.small, s.large]) assert.ok(Number.isInteger(size.scavenges) && Number.isInteger(size.majorGcs), JSON.stringify(size));
      const ratio = s.config === 'none' ? '' : `[^)]*\\)\\s+${(s.perMessage / none).toFixed(3)} \\(`;
      assert.match(table, new RegExp(`^${s.config}\\s+${Math.round(s.perMessage)} \\(${ratio}`, 'm'));
    }
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('bench/node-red.js --quick measures every configuration and writes its result', { timeout: 120_000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-bench-node-red-'));
  try {
    const nodeRed = nodeRedFor(RUNTIMES.at(-1).nodeRed);
    const table = execFileSync(process.execPath, [path.join(__dirname, '..', 'node-red.js'), '--quick', '--node-red', nodeRed, '--out', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    const [file] = fs.readdirSync(out);
    const result = JSON.parse(fs.readFileSync(path.join(out, file), 'utf8'));
    const configs = ['none', 'on', 'off', 'core', 'hooks', 'clock', 'hooks2', 'clock2', 'redhooks', 'redclock'];
    assert.deepEqual(Object.keys(result.perSecond), configs);
    for (const [config, s] of Object.entries(result.perSecond)) assert.ok(s.median > 100, `${config}: ${s.median} msg/s`);
    assert.deepEqual(Object.keys(result.ratio), configs.slice(1));
    for (const c of configs) assert.equal(result.fastestRatio[c], result.perSecond[c].max / result.perSecond.none.max, c);
    for (const [c, r] of Object.entries(result.ratio)) assert.ok(r.ci95[0] <= r.median && r.median <= r.ci95[1], `${c}: the median's interval`);
    const on = result.ratio.on;
    assert.match(table, new RegExp(`^on\\s+\\d+.* ${on.median.toFixed(3)} \\(${on.ci95[0].toFixed(3)}–${on.ci95[1].toFixed(3)}\\)`, 'm'));
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

test('bench/node-red.js --configs runs those beside none', { timeout: 120_000 }, () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-bench-node-red-'));
  const bench = path.join(__dirname, '..', 'node-red.js');
  try {
    const nodeRed = nodeRedFor(RUNTIMES.at(-1).nodeRed);
    execFileSync(process.execPath, [bench, '--quick', '--configs', 'clock2', '--node-red', nodeRed, '--out', out], { stdio: 'ignore' });
    const [file] = fs.readdirSync(out);
    const result = JSON.parse(fs.readFileSync(path.join(out, file), 'utf8'));
    assert.deepEqual(Object.keys(result.perSecond), ['none', 'clock2']);
    assert.ok(result.perSecond.clock2.median > 100, `${result.perSecond.clock2.median} msg/s`);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});

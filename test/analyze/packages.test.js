'use strict';
// Busy time by package (js/analyze/packages.js): the package of every form of frame URL, the rules on
// hand-built profiles (whose code a native frame's time is, rloop's frames, V8's entries), a real
// capture of an app calling two packages from node_modules (test/fixtures/node_modules) against
// the same samples by scope and the app's own clock, and a real package (ajv) at work.

const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { analyze } = require('../../js/analyze');
const { packageOf } = require('../../js/analyze/packages');
const { synthetic, fn, native, ownersProfile, URLS } = require('../fixtures/tree-profile');
const { assertValidReport } = require('../fixtures/report');

const { ORM, SQL, TPL } = URLS;

const busyMs = (a) => Object.entries(a.categories).reduce((sum, [c, ms]) => (c === 'idle' ? sum : sum + ms), 0);
const byName = (a) => Object.fromEntries(a.packages.map((p) => [p.name, p]));

test('the package of a frame: innermost node_modules, scoped names, pnpm and Yarn layouts, file URLs, Windows paths', () => {
  const cases = {
    'file:///srv/app/node_modules/some-orm/lib/query.js': 'some-orm',
    '/srv/app/node_modules/some-orm/index.js': 'some-orm',
    'file:///srv/app/node_modules/@acme/digest/index.js': '@acme/digest',
    'file:///srv/app/node_modules/some-orm/node_modules/@orm/sql/dist/build.js': '@orm/sql',
    '/srv/app/node_modules/@acme/tools/node_modules/left-pad/index.js': 'left-pad',
    'file:///srv/app/node_modules/.pnpm/lodash@4.17.21/node_modules/lodash/lodash.js': 'lodash',
    'file:///srv/app/node_modules/.pnpm/@babel+core@7.24.0_supports-color@9.4.0/node_modules/@babel/core/lib/index.js': '@babel/core',
    '/srv/app/.yarn/cache/lodash-npm-4.17.21-6382451519-eb835a2e51.zip/node_modules/lodash/lodash.js': 'lodash',
    'file:///C:/srv/app/node_modules/%40acme/digest/index.js': '@acme/digest',
    'file:///srv/my%20app/node_modules/some-orm/index.js': 'some-orm',
    'C:\\srv\\app\\node_modules\\@acme\\digest\\index.js': '@acme/digest',
    'C:\\srv\\app\\node_modules\\some-orm\\node_modules\\pg\\lib\\client.js': 'pg',
    'file:///srv/app/node_modules/bad%E0%A4/index.js': 'bad%E0%A4',
    'file:///srv/app/src/node_modules_helper.js': null,
    'file:///srv/app/node_modules/some-orm': null, // a folder, no file in it
    'file:///srv/app/node_modules/@acme/index.js': null,
    'file:///srv/app/src/index.js': null,
    'node:internal/timers': null,
    '': null,
  };
  for (const [url, name] of Object.entries(cases)) assert.equal(packageOf(url), name, url);
});

test("rloop's code is never a package: an installed rloop's plugin, preload and CLI frames are its own, as its js/ is", () => {
  const { packageOfFrame } = require('../../js/analyze/packages');
  const { isOwn, ROOT } = require('../../js/own');
  for (const dir of ['js/attribution', 'node-red', 'register', 'cli/attach']) {
    const installed = { functionName: 'f', url: `file:///srv/app/node_modules/rloop/${dir}/x.js` };
    const here = { functionName: 'f', url: require('node:url').pathToFileURL(path.join(ROOT, dir, 'x.js')).href };
    for (const frame of [installed, here]) {
      assert.ok(isOwn(frame), frame.url);
      assert.equal(packageOfFrame(frame), null, frame.url);
    }
  }
  assert.equal(packageOfFrame({ functionName: 'f', url: 'file:///srv/app/node_modules/rloop-like/x.js' }), 'rloop-like');
});

test('self time by owner: native, eval and rloop frames count for their caller; GC and (program) apart; idle in none', () => {
  const a = analyze(ownersProfile());
  const busy = busyMs(a);
  assert.equal(busy, 100);
  assert.deepEqual(a.packages.map((p) => [p.name, p.kind, p.selfMs, p.busyPercent]), [
    ['some-orm', 'package', 39, 39],
    ['(app)', 'app', 14, 14],
    ['@orm/sql', 'package', 11, 11],
    ['(garbage collector)', 'gc', 9, 9],
    ['lodash', 'package', 8, 8],
    ['(node core)', 'node', 7, 7],
    ['tpl', 'package', 6, 6],
    ['(program)', 'program', 4, 4],
    ['(native)', 'native', 2, 2],
  ]);
  assert.equal(a.packages.reduce((sum, p) => sum + p.selfMs, 0), busy, 'together all of the busy time');
  const orm = byName(a)['some-orm'];
  assert.deepEqual(orm.topFunctions.map((f) => [f.functionName, f.selfMs]), [['query', 30], ['JSON.parse', 5], ['RegExp: ^\\w+$', 4]]);
  assert.deepEqual(orm.topFunctions[0], { functionName: 'query', url: ORM, line: 10, column: 5, selfMs: 30 });

  // Heavy functions say their package, on the same basis as the packages' shares.
  const heavy = Object.fromEntries(a.heavyFunctions.map((f) => [`${f.functionName}@${f.url}`, f]));
  assert.equal(heavy[`query@${ORM}`].package, 'some-orm');
  assert.equal(heavy[`build@${SQL}`].package, '@orm/sql');
  assert.equal(heavy[`render@${TPL}`].package, 'tpl');
  assert.equal(heavy[`build@${SQL}`].busyPercent, byName(a)['@orm/sql'].busyPercent);
  for (const f of a.heavyFunctions.filter((x) => !x.url.includes('node_modules'))) assert.equal('package' in f, false, f.functionName);
});

test('WebAssembly and eval code count for their caller, whichever package or app that is', () => {
  const wasm = (functionName) => ({ functionName, url: 'wasm://wasm/7f3a2b1e', scriptId: '12', key: functionName });
  const tree = [native('(root)'),
    [fn('main'),
      [fn('hash', '/srv/app/node_modules/@noble/hashes/index.js'), [wasm('sha256')], [{ functionName: 'compiled', url: '', scriptId: '13', key: 'pkg eval' }]],
      [wasm('resize')]]];
  const a = analyze(synthetic(tree, ['sha256', 'sha256', 'sha256', 'pkg eval', 'resize', 'resize', 'main'], { stepUs: 1000 }));
  assert.deepEqual(a.packages.map((p) => [p.name, p.selfMs]), [['@noble/hashes', 4], ['(app)', 3]]);
  assert.equal(a.heavyFunctions.find((f) => f.functionName === 'sha256').package, undefined, 'the function is no file of the package');
});

test('past 30 packages, the rest are summed in one entry that counts them', () => {
  const names = Array.from({ length: 34 }, (_, i) => `pkg-${String(i).padStart(2, '0')}`);
  const tree = [native('(root)'), [fn('main'), ...names.map((name) => [fn(name, `/srv/app/node_modules/${name}/index.js`)])]];
  const samples = names.flatMap((name, i) => Array(40 - i).fill(name));
  const a = analyze(synthetic(tree, samples, { stepUs: 1000 }));
  assert.equal(a.packages.length, 31);
  assert.deepEqual(a.packages.slice(0, 30).map((p) => p.name), names.slice(0, 30));
  const other = a.packages[30];
  // 34 ms of the 799 ms busy.
  assert.deepEqual(other, { name: '(other packages)', kind: 'package', selfMs: 34, busyPercent: 4.26, topFunctions: [], packages: 4 });
  assert.equal(a.packages.reduce((sum, p) => sum + p.selfMs, 0), busyMs(a));
});

// Each part of the app also runs in a scope of its own: the profile's CPU by scope takes the same
// samples by time (from the hot path's changes of scope) where the packages take them by frame.
// The app's clock measures the three parts only, so the packages' shares are taken of the three
// (node core and GC, a few points more on a loaded machine, are outside its total). The parts
// are long (test/fixtures/package-app.js) and alike, so a profile that lost most of its samples
// to a starved sampler thread (1,500 of 20,000 at a load of 13 on 2 cores) still holds them.
test('a real capture: each package\'s share of busy time is the share its scope and the app\'s clock measured', async (t) => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-packages-')), 'out.json');
  execFileSync(process.execPath, [path.join(__dirname, '..', 'fixtures', 'package-app.js'), out], { stdio: ['ignore', 'ignore', 'inherit'] });
  const { report, spent } = JSON.parse(fs.readFileSync(out, 'utf8'));
  fs.rmSync(path.dirname(out), { recursive: true, force: true });
  assertValidReport(report);
  const a = report.profile.analysis;
  const parts = [['busy-orm', 'busy-orm'], ['@acme/digest', '@acme/digest'], ['(app)', 'app']];
  const clock = spent['busy-orm'] + spent['@acme/digest'] + spent.app;
  const scope = (part) => a.scopes.find((s) => s.name === part);
  const shares = byName(a);
  const seen = JSON.stringify({ intervalUs: a.intervalUs, samples: a.samples, packages: a.packages.map((p) => [p.name, p.busyPercent, p.topFunctions.map((f) => f.functionName).join()]),
    scopes: a.scopes.map((s) => [s.name, s.percent, s.busyMs]), spent });
  t.diagnostic(`${a.samples} samples over ${a.durationMs} ms`);
  for (const [name, part] of parts) {
    assert.ok(shares[name], `${name} in ${seen}`);
    const byPackage = shares[name].busyPercent;
    const bySamples = scope(part)?.percent ?? 0;
    assert.ok(Math.abs(byPackage - bySamples) <= 3, `${name}: ${byPackage} % of busy time by package, ${bySamples} % by scope; ${seen}`);
    const byClock = (100 * spent[part]) / clock;
    const ofParts = (100 * byPackage) / parts.reduce((sum, [n]) => sum + (shares[n]?.busyPercent ?? 0), 0); // the clock's total: the three parts
    assert.ok(Math.abs(ofParts - byClock) <= 3, `${name}: ${ofParts.toFixed(1)} % of the parts by package, ${byClock.toFixed(1)} % by the app's clock; ${seen}`);
  }
  assert.equal(a.heavyFunctions.find((f) => f.functionName === 'buildPlan')?.package, 'busy-orm');
  assert.equal(a.heavyFunctions.find((f) => f.functionName === 'digest')?.package, '@acme/digest');
  assert.equal(a.heavyFunctions.find((f) => f.functionName === 'renderReport')?.package, undefined, 'the app\'s own code is no package');
});

test('a real package from node_modules: compiling JSON schemas with ajv is ajv\'s time, named in its heavy functions', async () => {
  const profile = require('../../js/capture/profile');
  const Ajv = require('ajv');
  const schema = { type: 'object', properties: { a: { type: 'string', pattern: '^x+$' }, b: { type: 'array', items: { type: 'number' } } }, required: ['a'] };
  const p = await profile.start();
  for (const end = performance.now() + 500; performance.now() < end; ) new Ajv().compile(schema);
  const a = analyze(await p.stop());
  const [top] = a.packages;
  assert.equal(top.name, 'ajv', JSON.stringify(a.packages));
  assert.ok(top.busyPercent >= 30, JSON.stringify(a.packages));
  const fns = a.heavyFunctions.filter((f) => f.url.includes('/node_modules/ajv/'));
  assert.ok(fns.length > 0 && fns.every((f) => f.package === 'ajv'), JSON.stringify(a.heavyFunctions));
});

'use strict';
// Source maps: a compiled TypeScript app, a bundle and a loader that transpiles in memory get
// their stall stacks, slow I/O callers, heavy functions, long calls and flame graph at the .ts
// file and line, the generated location kept; maps that cannot be used are left aside, saying
// why, and never reach the app.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const { SourceMap } = require('node:module');
const { assertValidReport } = require('../fixtures/report');
const { renderHtml } = require('../../js/report/html');
const { withOriginals } = require('../../js/capture/source-maps');
const { originals, partsOf } = require('../../js/capture/mappings');
const { ROOT, TSC, tsc, lineOf, url, compiledApp } = require('../fixtures/typescript-app');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-source-maps-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// The app: a server answering in 300 ms, a job stalling the loop every 250 ms, one slow request.
const MAIN_TS = `import * as http from 'node:http';
import { crunch, fetchSlow } from './work';

const rloop = require(process.env.RLOOP as string);

async function main(): Promise<void> {
  const server = http.createServer((req, res) => { setTimeout(() => res.end('ok'), 300); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  const monitor = rloop.start({ lagThresholdMs: 50, ioThresholdMs: 150 });
  const capture = monitor.capture({ durationMs: 1500, profile: process.env.PROFILE === '1', json: process.env.REPORT });
  const tick = setInterval(() => crunch({ ms: 120, label: 'tick' }), 250);
  await fetchSlow(port);
  await capture;
  clearInterval(tick);
  monitor.stop();
  server.close();
}

main();
`;

/** Runs `script` in `dir` under `flags`; its capture's report. */
function reportOf(dir, script, { flags = [], profile = true } = {}) {
  const file = path.join(dir, `report-${profile ? 'profile' : 'sampler'}-${flags.length}.json`);
  const out = spawnSync(process.execPath, [...flags, script], {
    cwd: dir, encoding: 'utf8', timeout: 60_000,
    env: { ...process.env, RLOOP: ROOT, PROFILE: profile ? '1' : '0', REPORT: file },
  });
  assert.strictEqual(out.status, 0, out.stderr);
  const report = JSON.parse(fs.readFileSync(file, 'utf8'));
  assertValidReport(report);
  return report;
}

const byName = (list, name) => list.find((f) => f.functionName === name || f.name === name);

function flameNode(node, name) {
  if (node.name === name) return node;
  for (const c of node.children) {
    const found = flameNode(c, name);
    if (found) return found;
  }
  return null;
}

const app = path.join(tmp, 'app');
const { ts, js } = compiledApp(app, MAIN_TS);

test('a compiled TypeScript app: the stall stack, slow I/O caller, heavy function, long calls and flame graph name the .ts line, the .js one kept', () => {
  const report = reportOf(app, 'dist/main.js');
  const crunch = { url: url(ts), line: lineOf(ts, 'export function crunch') };
  const generated = { url: url(js), line: lineOf(js, 'function crunch(') };
  const at = (f) => ({ url: f.url, line: f.line });

  const heavy = byName(report.profile.analysis.heavyFunctions, 'crunch');
  assert.deepStrictEqual(at(heavy), crunch, JSON.stringify(heavy));
  assert.deepStrictEqual(at(heavy.generated), generated);
  assert.notStrictEqual(crunch.line, generated.line, 'the test tells them apart');
  assert.deepStrictEqual(at(byName(report.profile.analysis.longCalls.functions, 'crunch')), crunch);
  const node = flameNode(report.profile.flame.root, 'crunch');
  assert.deepStrictEqual([at(node), at(node.generated)], [crunch, generated]);
  // The pattern's words name the original too: the profile was mapped before the analysis.
  const hog = report.profile.analysis.patterns.find((p) => p.id === 'cpu-hog');
  assert.ok(hog.message.includes(`${crunch.url}:${crunch.line}:`), hog.message);

  const stalls = report.lag.events.filter((e) => e.stackFrom === 'profile' && e.stack[0].functionName === 'crunch');
  assert.ok(stalls.length >= 3, JSON.stringify(report.lag.events.map((e) => e.stack?.[0])));
  for (const e of stalls) assert.deepStrictEqual([at(e.stack[0]), at(e.stack[0].generated)], [crunch, generated]);

  const fetch = report.io.events.find((e) => e.type === 'http');
  assert.deepStrictEqual(at(fetch.stack[0]), { url: url(ts), line: lineOf(ts, 'http.get(') }, JSON.stringify(fetch.stack));
  assert.deepStrictEqual(at(fetch.stack[0].generated), { url: url(js), line: lineOf(js, 'http.get(') });
  assert.deepStrictEqual(report.meta.sourceMaps, { scripts: 2, skipped: [], dropped: 0 });

  // The page shows the original, the generated location on hover.
  const html = renderHtml(report);
  assert.ok(html.includes(`work.ts:${crunch.line}`), 'the .ts line on the page');
  assert.ok(html.includes(`(generated: ${generated.url}:${generated.line}:`), 'the .js one in its tooltip');
});

test('--enable-source-maps: the stack sampler\'s stall stacks and the slow I/O caller are mapped once, the generated line kept', () => {
  const report = reportOf(app, 'dist/main.js', { flags: ['--enable-source-maps'], profile: false });
  const line = lineOf(ts, '// CRUNCH');
  const whileAt = lineOf(js, 'while (Date.now() < until)');
  const stalls = report.lag.events.filter((e) => e.stackFrom === 'sampler' && e.stack[0].functionName === 'crunch');
  // The first stall of the process has none: the sampler starts at it.
  assert.ok(stalls.length >= 2, JSON.stringify(report.lag.events));
  for (const { stack: [f] } of stalls) {
    assert.deepStrictEqual({ url: f.url, line: f.line }, { url: url(ts), line }, JSON.stringify(f));
    // The loop's condition or its body: one .ts line, two .js ones.
    assert.ok(f.generated.url === url(js) && [whileAt, whileAt + 1].includes(f.generated.line), JSON.stringify(f));
  }
  // Node formats the app's traces at the .ts line already; rloop reads V8's own frames and maps them itself.
  const [caller] = report.io.events.find((e) => e.type === 'http').stack;
  assert.deepStrictEqual([caller.url, caller.line, caller.generated.url, caller.generated.line], [url(ts), lineOf(ts, 'http.get('), url(js), lineOf(js, 'http.get(')]);
});

test('a bundle of two .ts files with an inline map (tsc --outFile): each function at its own file and line', () => {
  const dir = path.join(tmp, 'bundle');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'spin.ts'), 'type Ms = number;\n\nfunction spin(ms: Ms): number {\n  const until = Date.now() + ms;\n  let n = 0;\n  while (Date.now() < until) n++;\n  return n;\n}\n');
  fs.writeFileSync(path.join(dir, 'jobs.ts'), 'interface Plan {\n  rounds: number;\n}\n\nfunction runJobs(plan: Plan): void {\n  for (let i = 0; i < plan.rounds; i++) spin(60);\n}\n\ndeclare const module: { exports: unknown };\nmodule.exports = { runJobs };\n');
  tsc(dir, ['--outFile', 'bundle.js', '--module', 'none', '--inlineSourceMap', 'spin.ts', 'jobs.ts']);
  assert.match(fs.readFileSync(path.join(dir, 'bundle.js'), 'utf8'), /sourceMappingURL=data:application\/json;base64,/);
  fs.writeFileSync(path.join(dir, 'main.js'), `'use strict';
const rloop = require(process.env.RLOOP);
const { runJobs } = require('./bundle.js');
const monitor = rloop.start({ lagThresholdMs: 50 });
monitor.capture({ durationMs: 1200, profile: true, json: process.env.REPORT }).then(() => { clearInterval(tick); monitor.stop(); });
const tick = setInterval(() => runJobs({ rounds: 2 }), 200);
`);
  const report = reportOf(dir, 'main.js');
  const bundle = url(path.join(dir, 'bundle.js'));
  const spin = byName(report.profile.analysis.heavyFunctions, 'spin');
  assert.deepStrictEqual([spin.url, spin.line, spin.generated.url], [url(path.join(dir, 'spin.ts')), 3, bundle], JSON.stringify(spin));
  const jobs = flameNode(report.profile.flame.root, 'runJobs');
  assert.deepStrictEqual([jobs.url, jobs.line, jobs.generated.url], [url(path.join(dir, 'jobs.ts')), 5, bundle], JSON.stringify(jobs));
  const stall = report.lag.events.find((e) => e.stackFrom === 'profile' && e.stack[0].functionName === 'spin');
  // A profile's frames are the functions', at their declarations.
  assert.deepStrictEqual(stall.stack.slice(0, 2).map((f) => [path.basename(f.url), f.line]), [['spin.ts', 3], ['jobs.ts', 5]]);
});

test('a loader that transpiles in memory (no file holds the map): Node\'s own map places the function', () => {
  const dir = path.join(tmp, 'loader');
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'hooks.mjs'), `import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';
const ts = createRequire(${JSON.stringify(TSC)})('typescript');
export async function load(url, context, next) {
  if (!url.endsWith('.ts')) return next(url, context);
  const options = { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2020, inlineSourceMap: true };
  const out = ts.transpileModule(readFileSync(new URL(url), 'utf8'), { fileName: fileURLToPath(url), compilerOptions: options });
  return { format: 'module', source: out.outputText, shortCircuit: true };
}
`);
  fs.writeFileSync(path.join(dir, 'register.mjs'), "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n");
  fs.writeFileSync(path.join(dir, 'main.ts'), `import { createRequire } from 'node:module';

interface Job {
  ms: number;
}

type Count = number;

function spin(job: Job): Count {
  const until = Date.now() + job.ms;
  let n = 0;
  while (Date.now() < until) n++;
  return n;
}

const rloop = createRequire(import.meta.url)(process.env.RLOOP as string);
const monitor = rloop.start({ lagThresholdMs: 50 });
const tick = setInterval(() => spin({ ms: 80 }), 200);
monitor.capture({ durationMs: 1200, profile: true, json: process.env.REPORT }).then(() => { clearInterval(tick); monitor.stop(); });
`);
  const report = reportOf(dir, 'main.ts', { flags: ['--enable-source-maps', '--import', './register.mjs'] });
  const spin = byName(report.profile.analysis.heavyFunctions, 'spin');
  assert.deepStrictEqual([spin.url, spin.line], [url(path.join(dir, 'main.ts')), 9], JSON.stringify(spin));
  assert.ok(spin.generated.url === spin.url && spin.generated.line < 9, 'the transpiled line: the interface and type are gone');
});

test('the one-pass decoder answers as node:module\'s SourceMap, in plain and index maps', () => {
  const map = JSON.parse(fs.readFileSync(`${js}.map`, 'utf8'));
  const lines = fs.readFileSync(js, 'utf8').split('\n');
  const asks = lines.flatMap((l, line) => Array.from({ length: l.length + 1 }, (_, column) => [line, column]));
  const node = new SourceMap(map);
  const expected = asks.map(([line, column]) => {
    const e = node.findEntry(line, column);
    return e.generatedLine === line && e.originalSource !== undefined ? [e.originalLine, e.originalColumn] : null;
  });
  const parts = partsOf(map, url(`${js}.map`));
  assert.deepStrictEqual(originals(parts, asks).map((o) => o && [o.line, o.column]), expected);
  assert.ok(expected.filter(Boolean).length > 100, 'most positions have a mapping');
  assert.strictEqual(originals(parts, [[lineOf(js, 'function crunch(') - 1, 0]])[0].url, url(ts), 'sources resolved against the map');

  // Two files joined after 3 lines of a header: an index map with the second at line 3 + its lines.
  const second = { ...map, sources: ['../src/other.ts'] };
  const index = { version: 3, sections: [{ offset: { line: 3, column: 0 }, map }, { offset: { line: 3 + lines.length, column: 0 }, map: second }] };
  const [inFirst, inSecond, inHeader] = originals(partsOf(index, url(`${js}.map`)), [[3 + 5, 4], [3 + lines.length + 5, 4], [1, 0]]);
  const direct = originals(parts, [[5, 4]])[0];
  assert.deepStrictEqual(inFirst, direct);
  assert.deepStrictEqual(inSecond, { ...direct, url: url(path.join(app, 'src', 'other.ts')) });
  assert.strictEqual(inHeader, null, 'before the first section: no map');
});

test('maps that cannot be used are left aside, saying why, and the frames stay as they ran; a script changed on disk is read again', () => {
  const dir = path.join(tmp, 'bad');
  const outside = path.join(tmp, 'elsewhere');
  fs.mkdirSync(dir);
  fs.mkdirSync(outside);
  const good = fs.readFileSync(`${js}.map`, 'utf8');
  const scripts = {
    network: '//# sourceMappingURL=https://maps.example.com/a.js.map?token=s3cret',
    outside: `//# sourceMappingURL=${url(path.join(outside, 'a.js.map'))}`,
    notJson: '//# sourceMappingURL=notJson.js.map',
    badVlq: '//# sourceMappingURL=badVlq.js.map',
    huge: '//# sourceMappingURL=huge.js.map',
    fifo: '//# sourceMappingURL=fifo.js.map',
    inlineText: '//# sourceMappingURL=data:text/plain;base64,AAAA',
  };
  fs.writeFileSync(path.join(outside, 'a.js.map'), good);
  fs.writeFileSync(path.join(dir, 'notJson.js.map'), '{ not json');
  fs.writeFileSync(path.join(dir, 'badVlq.js.map'), JSON.stringify({ version: 3, sources: ['a.ts'], names: [], mappings: 'AA!A' }));
  fs.writeFileSync(path.join(dir, 'huge.js.map'), '');
  fs.truncateSync(path.join(dir, 'huge.js.map'), 33 * 1024 * 1024); // sparse: costs no disk
  execFileSync('mkfifo', [path.join(dir, 'fifo.js.map')]); // read, it would block forever
  for (const [name, comment] of Object.entries(scripts)) fs.writeFileSync(path.join(dir, `${name}.js`), `function f() {\n  return 1;\n}\n${comment}\n`);
  const stall = (name) => ({ lagMs: 60, stack: [{ functionName: 'f', url: url(path.join(dir, `${name}.js`)), line: 2, column: 3 }] });
  const stalls = Object.keys(scripts).map(stall);
  const out = withOriginals({ profile: null, stalls, io: [] });
  assert.deepStrictEqual(out.stalls, stalls, 'no frame moved');
  const reasons = Object.fromEntries(out.sourceMaps.skipped.map((s) => [path.basename(s.url, '.js'), s.reason]));
  assert.deepStrictEqual(reasons, {
    network: 'its map is at a https: URL: only files are read',
    outside: 'its map is outside the script\'s folder and the working directory',
    notJson: 'its map is not JSON',
    badVlq: 'its mappings are not base64 VLQ',
    huge: 'its map is larger than 33554432 bytes',
    fifo: 'its map is not a regular file',
    inlineText: 'its inline map is not application/json',
  });
  assert.ok(!JSON.stringify(out).includes('s3cret'), 'a token in a map URL is never quoted');

  // Mapped now: a map beside the script, a source URL with a query (redacted), then a new build.
  const script = path.join(dir, 'rebuilt.js');
  const mapOf = (source) => JSON.stringify({ version: 3, sources: [source], names: [], mappings: ';EAEE' }); // line 2 column 3 <- line 3 column 3
  fs.writeFileSync(script, 'function f() {\n  return 1;\n}\n');
  fs.writeFileSync(`${script}.map`, mapOf('v1.ts?token=s3cret'));
  const first = withOriginals({ profile: null, stalls: [stall('rebuilt')], io: [] });
  assert.deepStrictEqual(first.stalls[0].stack[0], { functionName: 'f', url: url(path.join(dir, 'v1.ts')), line: 3, column: 3, generated: { url: url(script), line: 2, column: 3 } });
  fs.writeFileSync(script, 'function f() {\n  return 2;\n}\n// a new build\n');
  fs.writeFileSync(`${script}.map`, mapOf('v2.ts'));
  const second = withOriginals({ profile: null, stalls: [stall('rebuilt')], io: [] });
  assert.strictEqual(second.stalls[0].stack[0].url, url(path.join(dir, 'v2.ts')));
});

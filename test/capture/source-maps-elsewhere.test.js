'use strict';
// Source maps beyond the report's stacks and profile: in a compiled TypeScript app, the sampling
// heap profile's functions, the pprof files a capture writes and the profiles pulled from the
// metrics endpoint (read by go tool pprof), and the live 'lag' and 'slowIO' events with the
// OpenTelemetry log records made of them, all name the .ts file and line; a live event reads and
// decodes only small maps.

const test = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync, spawnSync } = require('node:child_process');
const { assertValidReport } = require('../fixtures/report');
const { onPath } = require('../fixtures/helpers');
const { ROOT, lineOf, url, compiledApp } = require('../fixtures/typescript-app');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-source-maps-elsewhere-'));
test.after(() => fs.rmSync(tmp, { recursive: true, force: true }));

// Stalls and allocations every 250 ms, one slow request, a capture with both profiles and their
// pprof files, then a CPU and a heap profile pulled from the endpoint; what listeners heard.
const MAIN_TS = `import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { crunch, fetchSlow, gather } from './work';

const rloop = require(process.env.RLOOP as string);
const out = process.env.OUT as string;

type Frame = { functionName: string; url: string; line: number; generated?: unknown };

async function pull(base: string, kind: string): Promise<void> {
  const r = await fetch(base + '/debug/pprof/' + kind + '?seconds=1');
  fs.writeFileSync(path.join(out, 'pulled-' + kind + '.pb.gz'), Buffer.from(await r.arrayBuffer()));
}

async function main(): Promise<void> {
  const server = http.createServer((req, res) => { setTimeout(() => res.end('ok'), 300); });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as { port: number };
  const monitor = rloop.start({ lagThresholdMs: 50, ioThresholdMs: 150, metrics: { port: 0 } });
  const heard: { event: string; stack: Frame[] }[] = [];
  monitor.on('lag', (e: { stack: Frame[] }) => heard.push({ event: 'lag', stack: e.stack }));
  monitor.on('slowIO', (e: { stack: Frame[] }) => heard.push({ event: 'slowIO', stack: e.stack }));
  const records: unknown[] = [];
  const logs = rloop.otelLogs({ getLogger: () => ({ emit: (r: { attributes: unknown }) => records.push(r.attributes) }) });
  const tick = setInterval(() => { crunch({ ms: 120, label: 'tick' }); gather(20000); }, 250);
  const file = (name: string) => path.join(out, name);
  const capture = monitor.capture({
    durationMs: 1500, profile: true, heapProfile: true,
    json: file('report.json'), pprof: file('cpu.pb.gz'), heapPprof: file('heap.pb.gz'),
  });
  await fetchSlow(port);
  await capture;
  const base = 'http://127.0.0.1:' + monitor.metrics.port;
  await pull(base, 'profile');
  await pull(base, 'heap');
  clearInterval(tick);
  logs.stop();
  fs.writeFileSync(file('heard.json'), JSON.stringify({ heard, records }));
  monitor.stop();
  server.close();
}

main();
`;

const app = path.join(tmp, 'app');
const { ts, js } = compiledApp(app, MAIN_TS);
const out = path.join(tmp, 'out');
fs.mkdirSync(out);
let ran;

test('setup: the compiled app runs a capture with both profiles, pulls two, and keeps what listeners heard', { timeout: 90_000 }, () => {
  assert.ok(onPath('go'), 'go (Debian golang-go) is on PATH: .ci/run installs it');
  ran = spawnSync(process.execPath, ['dist/main.js'], { cwd: app, encoding: 'utf8', timeout: 60_000, env: { ...process.env, RLOOP: ROOT, OUT: out } });
  assert.strictEqual(ran.status, 0, ran.stderr);
});

const at = (f) => ({ url: f.url, line: f.line });
const pprof = (...args) => execFileSync('go', ['tool', 'pprof', ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PPROF_TMPDIR: tmp } });

test('the heap profile\'s functions are at the .ts line, the .js one kept', () => {
  const report = JSON.parse(fs.readFileSync(path.join(out, 'report.json'), 'utf8'));
  assertValidReport(report);
  const gather = report.heapProfile.functions.find((f) => f.functionName === 'gather');
  assert.ok(gather, JSON.stringify(report.heapProfile.functions));
  assert.deepStrictEqual(at(gather), { url: url(ts), line: lineOf(ts, 'export function gather') }, JSON.stringify(gather));
  assert.deepStrictEqual(at(gather.generated), { url: url(js), line: lineOf(js, 'function gather(') });
  assert.notStrictEqual(gather.line, gather.generated.line, 'the test tells them apart');
  // Its scope still comes from the CPU profile: both are mapped alike.
  assert.strictEqual(report.heapProfile.scopes.unsampled < report.heapProfile.bytes, true, JSON.stringify(report.heapProfile.scopes));
});

/** `go tool pprof -traces` of `file`: the .ts and .js files each names in its traces. */
function filesIn(file, ...args) {
  const traces = pprof('-traces', '-lines', ...args, file);
  return { traces, ts: traces.includes('src/work.ts'), js: /dist\/work\.js/.test(traces) };
}

test('the pprof files of a capture and those pulled from the endpoint name the .ts files, not the .js ones', () => {
  for (const [name, args] of [['cpu.pb.gz', []], ['heap.pb.gz', ['-sample_index=alloc_space']], ['pulled-profile.pb.gz', []], ['pulled-heap.pb.gz', ['-sample_index=alloc_space']]]) {
    const { traces, ts: hasTs, js: hasJs } = filesIn(path.join(out, name), ...args);
    assert.ok(hasTs && !hasJs, `${name}:\n${traces.slice(0, 3000)}`);
  }
  // Line by line, too: the function's line in the source.
  const list = pprof('-list', '^crunch$', path.join(out, 'cpu.pb.gz'));
  assert.match(list, /src\/work\.ts/);
  assert.match(list, /\/\/ CRUNCH/, 'go tool pprof shows the .ts source lines');
});

test('the live \'lag\' and \'slowIO\' events and their OpenTelemetry records name the .ts line, the .js one kept', () => {
  const { heard, records } = JSON.parse(fs.readFileSync(path.join(out, 'heard.json'), 'utf8'));
  const stalls = heard.filter((e) => e.event === 'lag' && e.stack?.[0]?.functionName === 'crunch');
  assert.ok(stalls.length >= 2, JSON.stringify(heard));
  const whileAt = lineOf(js, 'while (Date.now() < until)');
  for (const { stack: [f] } of stalls) {
    assert.deepStrictEqual(at(f), { url: url(ts), line: lineOf(ts, '// CRUNCH') }, JSON.stringify(f));
    assert.ok(f.generated.url === url(js) && [whileAt, whileAt + 1].includes(f.generated.line), JSON.stringify(f));
  }
  const slow = heard.find((e) => e.event === 'slowIO' && e.stack?.length > 0);
  assert.deepStrictEqual([at(slow.stack[0]), at(slow.stack[0].generated)], [{ url: url(ts), line: lineOf(ts, 'http.get(') }, { url: url(js), line: lineOf(js, 'http.get(') }]);
  const code = records.filter((r) => r['code.function.name'] === 'crunch');
  assert.ok(code.length >= 2 && code.every((r) => r['code.file.path'] === url(ts) && r['code.line.number'] === lineOf(ts, '// CRUNCH')), JSON.stringify(records));
});

test('a live event maps with small maps only: a larger map\'s frames stay as they ran there, and a report maps them', () => {
  const { withOriginals, liveOriginals } = require('../../js/capture/source-maps');
  const dir = path.join(tmp, 'sizes');
  fs.mkdirSync(dir);
  const eventAt = (name, mappings) => {
    const script = path.join(dir, `${name}.js`);
    fs.writeFileSync(script, 'function f() {\n  return 1;\n}\n');
    // Line 2 column 3 <- line 3 column 3 of the source, then as many empty lines as asked.
    fs.writeFileSync(`${script}.map`, JSON.stringify({ version: 3, sources: [`${name}.ts`], names: [], mappings: `;EAEE${mappings}` }));
    return { lagMs: 60, stack: [{ functionName: 'f', url: url(script), line: 2, column: 3 }] };
  };
  const small = eventAt('small', '');
  const generated = { url: url(path.join(dir, 'small.js')), line: 2, column: 3 };
  assert.deepStrictEqual(liveOriginals(small).stack[0], { functionName: 'f', url: url(path.join(dir, 'small.ts')), line: 3, column: 3, generated });
  const large = eventAt('large', ';'.repeat(300 * 1024));
  assert.deepStrictEqual(liveOriginals(large), large, 'a map past 256 KiB is not read for a live event');
  assert.strictEqual(withOriginals({ stalls: [large] }).stalls[0].stack[0].url, url(path.join(dir, 'large.ts')), 'a report reads it');
  assert.deepStrictEqual(liveOriginals(large), large, 'nor decoded once a report has read it');
});

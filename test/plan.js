'use strict';
// What `npm test` runs where (scripts/test.js). Coverage by design, not by repetition: rloop's
// scope travels two ways — tagged in an init hook (Node 20 and 22) or on AsyncContextFrame
// (Node >= 24, unless --no-async-context-frame) — and the plugin runs on two Node-RED majors.
// Every test runs on one line of each way (22 and 24) and so on both Node-RED majors (4.1 on
// 22, 5 on 24); the other runs hold what differs by line, each for the reason it names.
//
// Every test file is listed once below, in its area, as `timed` (it asserts on time it
// measured: it runs alone, nothing of the suite beside it) or `shared` (it may run beside
// another file). A file on disk that is not listed fails the run: a new test is placed, not
// defaulted.

const AREAS = {
  attribution: {
    timed: ['api', 'attribution', 'clock', 'live', 'limits', 'memory', 'workers'],
    shared: ['extremes', 'frames', 'profile-keys', 'ring'],
  },
  invisible: {
    timed: ['fake-timers'],
    shared: ['invisible', 'permission', 'preloads', 'secrets', 'signal-listeners'],
  },
  auto: { timed: ['http', 'scopes', 'timers'], shared: [] },
  stalls: { timed: ['first-stall', 'lag', 'stack-before', 'why'], shared: [] },
  io: { timed: ['io', 'other-side'], shared: [] },
  logs: { timed: ['otel'], shared: [] },
  capture: { timed: ['capture', 'heap', 'own-work', 'partial'], shared: ['heap-profile', 'heap-startup', 'source-maps', 'source-maps-elsewhere'] },
  analyze: { timed: ['analyze', 'packages'], shared: ['flame', 'pprof'] },
  report: { timed: [], shared: ['browser', 'flame-browser', 'format', 'html', 'pure', 'taken'] },
  metrics: { timed: ['adapters', 'endpoint', 'prometheus'], shared: ['gc', 'no-keys', 'pull', 'ranking'] },
  attach: { timed: ['attach', 'leave', 'node-red', 'targets'], shared: ['interrupt'] },
  cli: { timed: ['register', 'top'], shared: ['cli'] },
  'node-red': { timed: ['plugin'], shared: ['editor', 'own-work'] },
  package: { timed: [], shared: ['node-support', 'options', 'package', 'types'] },
  bench: { timed: [], shared: ['starts'] },
};

/** Every listed file: { file: 'test/<area>/<name>.test.js', area, timed }. */
const FILES = Object.entries(AREAS).flatMap(([area, { timed, shared }]) => [
  ...timed.map((name) => ({ file: `test/${area}/${name}.test.js`, area, timed: true })),
  ...shared.map((name) => ({ file: `test/${area}/${name}.test.js`, area, timed: false })),
]);

const inAreas = (...areas) => FILES.filter((f) => areas.includes(f.area)).map((f) => f.file);
const files = (...paths) => paths.map((p) => `test/${p}.test.js`);
const ALL = FILES.map((f) => f.file);

/**
 * The runs: a Node line, flags given to it and to every Node it starts (NODE_OPTIONS), and the
 * files run there. `why` is printed with the run's results.
 */
const RUNS = [
  { node: 24, files: ALL, why: 'AsyncContextFrame, Node-RED 5: the line of Node-RED\'s official images' },
  { node: 22, files: ALL, why: 'the init hook, Node-RED 4.1' },
  {
    node: 24,
    flags: ['--no-async-context-frame'],
    files: files('attribution/attribution', 'attribution/api', 'attribution/frames', 'attribution/live', 'attribution/workers', 'auto/scopes', 'invisible/invisible'),
    why: 'the init hook on a V8 and an AsyncLocalStorage that have frames',
  },
  {
    node: 22,
    flags: ['--experimental-async-context-frame'],
    files: files('attribution/attribution', 'attribution/api', 'attribution/frames', 'auto/scopes'),
    why: 'AsyncContextFrame on its first, flagged line',
  },
  {
    node: 26,
    // Where Node 26 alone failed for a reason of its own or its code branches: frames and its
    // AsyncContextFrame class, V8's profile format (analysis, stall stacks), the clock, fake
    // timers, heap statistics, diagnostics channels.
    files: [
      ...inAreas('attribution', 'stalls', 'analyze'),
      ...files('invisible/fake-timers', 'capture/capture', 'capture/heap', 'io/io'),
    ],
    why: 'the newest line: its AsyncContextFrame, V8 profiles, heap',
  },
  {
    node: 20,
    // What Node 20 has apart: no http.server request-created channel (io), the permission
    // model behind --experimental-permission, heap statistics, no threadCpuUsage (api); the
    // memory test failed on it alone.
    files: files('io/io', 'invisible/permission', 'capture/heap', 'attribution/memory', 'attribution/api'),
    why: 'end of life, kept while it costs nothing: what it has apart',
  },
];

module.exports = { AREAS, FILES, RUNS };

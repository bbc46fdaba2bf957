'use strict';
// What rloop holds in memory: each scenario in a fresh process with rloop and without (the
// same work), heap used and RSS after GC minus what they were before the work; prints the
// deltas in MB and writes bench/results/memory-<time>.json with a fingerprint. A third run, the
// floor, has empty async hooks of the kinds rloop enables instead: what any async_hooks tool
// costs on this Node line (on Node 24 and 26 such hooks alone grow churn's young generation).
//
//   node bench/memory.js [--only churn,names,lookups,long-names,workers,capture] [--capture-ms N] [--churn-keys N] [--options JSON]
//
// --options: more rloop.start() options, as JSON: what a part costs, by turning it off or down
// ('{"lag":false}': no stack sampler; '{"keySlots":16}': a key ring of 16 slots).
//
// churn       10 M async operations in 12 000 keyed scopes (past maxScopes), 1 M distinct keys
//             (--churn-keys: that many keys, 10 operations each; on Node 24 the app alone doubles
//             V8's young generation between 1 M and 2 M, bench/memory.md)
// names       1 M distinct scope names, 990 000 past maxScopes
// lookups     names' names looked up in a Map, no scope(): V8's part of names' excess
// long-names  10 000 scope names of 256 characters busy in every window of a full default history
// workers     1 000 workers, each starting and stopping a monitor
// capture     an Infinity capture at windowMs 10, 20 keyed scopes, 10 minutes (--capture-ms)

const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { parseArgs } = require('node:util');
const { fingerprint } = require('./fingerprint');

const SCENARIOS = ['churn', 'names', 'lookups', 'long-names', 'workers', 'capture'];
const USAGE = `usage: node bench/memory.js [--only ${SCENARIOS.join(',')}] [--capture-ms N] [--churn-keys N] [--options JSON]`;
const { values: o } = parseArgs({ options: { only: { type: 'string' }, 'capture-ms': { type: 'string', default: '600000' }, 'churn-keys': { type: 'string', default: '1000000' }, options: { type: 'string', default: '{}' }, child: { type: 'string' }, rloop: { type: 'string' } } });

const sizes = { captureMs: Number(o['capture-ms']), churnKeys: Number(o['churn-keys']) };

if (o.child) {
  require('./memory-child').run(o.child, { 0: 'none', 1: 'rloop', floor: 'floor' }[o.rloop], sizes, JSON.parse(o.options)).then((r) => console.log(JSON.stringify(r)));
} else {
  const { positive } = require('./options'); // only here: a child loads nothing the scenario does not
  positive(o['capture-ms'], 'capture-ms', USAGE);
  positive(o['churn-keys'], 'churn-keys', USAGE);
  const only = o.only ? o.only.split(',') : SCENARIOS;
  const unknown = only.find((s) => !SCENARIOS.includes(s));
  if (unknown) throw new RangeError(`--only: unknown scenario '${unknown}' (known: ${SCENARIOS.join(', ')})`);
  const results = {};
  for (const scenario of only) {
    const run = (mode) => {
      const args = ['--expose-gc', __filename, '--child', scenario, '--rloop', mode, '--capture-ms', o['capture-ms'], '--churn-keys', o['churn-keys'], '--options', o.options];
      return JSON.parse(execFileSync(process.execPath, args, { encoding: 'utf8', maxBuffer: 1 << 26 }));
    };
    const none = run('0');
    const floor = scenario === 'workers' ? null : run('floor');
    const rloop = run('1');
    results[scenario] = { none, floor, rloop };
    const d = (k) => `${rloop[k].toFixed(1)} MB (without rloop ${none[k].toFixed(1)}, +${(rloop[k] - none[k]).toFixed(1)}${floor ? `; empty hooks +${(floor[k] - none[k]).toFixed(1)}` : ''})`;
    console.log(`${scenario.padEnd(11)} heap used ${d('heapUsedMb')}, RSS ${d('rssMb')}${rloop.note ? `; ${rloop.note}` : ''}${none.note ? ` (without rloop: ${none.note})` : ''}`);
    const part = (k) => `${(rloop.parts[k] - none.parts[k]).toFixed(1)}`;
    console.log(`${''.padEnd(11)} RSS over no rloop: V8 new space ${part('newSpaceMb')}, V8's other spaces ${part('v8OtherMb')}, other anonymous memory ${part('anonOutsideV8Mb')} (malloc, other isolates), file-backed ${part('fileMb')} MB`);
  }
  const dir = path.join(__dirname, 'results');
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `memory-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  fs.writeFileSync(file, JSON.stringify({ fingerprint: fingerprint({ only, ...sizes, options: JSON.parse(o.options) }), results }, null, 1));
  console.log(`raw results: ${path.relative(process.cwd(), file)}`);
}

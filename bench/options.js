'use strict';
// Command line of bench/run.js.

const path = require('node:path');
const { parseArgs } = require('node:util');
const WORKLOADS = require('./workloads');
const { CONFIGS } = require('./configs');

const USAGE = `usage: node bench/run.js [options]
  --quick            3 rounds at a tenth of the events (a smoke run)
  --rounds N         rounds of interleaved fresh-process samples (default 11, quick 3)
  --scale X          multiply every workload's event count (default 1, quick 0.1)
  --only a,b         workloads: ${Object.keys(WORKLOADS).join(', ')}
  --configs a,b      configurations: ${Object.keys(CONFIGS).join(', ')}
  --out DIR          where the JSON result goes (default bench/results)`;

function list(value, known, what, usage = USAGE) {
  const names = value.split(',').filter(Boolean);
  const unknown = names.filter((n) => !(n in known));
  if (unknown.length) throw new Error(`unknown ${what}: ${unknown.join(', ')}\n${usage}`);
  return names;
}

function positive(value, what, usage = USAGE) {
  const n = Number(value);
  if (!(n > 0)) throw new Error(`--${what} must be a positive number, got ${value}\n${usage}`);
  return n;
}

function options(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      scale: { type: 'string' },
      only: { type: 'string' },
      configs: { type: 'string' },
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  return {
    quick: values.quick,
    rounds: Math.round(positive(values.rounds ?? (values.quick ? 3 : 11), 'rounds')),
    scale: positive(values.scale ?? (values.quick ? 0.1 : 1), 'scale'),
    workloads: values.only ? list(values.only, WORKLOADS, 'workload') : Object.keys(WORKLOADS),
    configs: values.configs ? list(values.configs, CONFIGS, 'configuration') : Object.keys(CONFIGS),
    out: path.resolve(values.out ?? path.join(__dirname, 'results')),
  };
}

module.exports = { options, list, positive };

'use strict';
// One sample in a fresh process: `node --expose-gc bench/child.js <workload> <config> <events>`.
// Sets the configuration up, runs the workload (which warms up before timing) and writes
// one JSON line to stdout.

const fs = require('node:fs');
const WORKLOADS = require('./workloads');
const { CONFIGS } = require('./configs');

async function main() {
  const [workloadName, configName, events] = process.argv.slice(2);
  const workload = WORKLOADS[workloadName];
  const cfg = CONFIGS[configName].setup();
  const result = await workload.run(cfg, Number(events));
  result.attribution = cfg.attribution(workload.scopes);
  // Synchronous write, then exit: a live monitor or hook must not hold the process open.
  fs.writeSync(1, `${JSON.stringify(result)}\n`);
  process.exit(0);
}

// From inside the loop, so eventLoopUtilization() (the yardstick of attribution) counts it all.
setImmediate(() =>
  main().catch((err) => {
    fs.writeSync(2, `${err.stack}\n`);
    process.exit(1);
  }),
);

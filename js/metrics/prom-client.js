'use strict';
// rloop's metrics in an existing prom-client registry: one collector per family, same names
// and labels as the endpoint. prom-client is the app's; rloop only hands it objects it knows.

const { reader } = require('./families');
const { adapterOptions } = require('./options');
const { useGc } = require('./gc');

/**
 * Registers rloop's metrics with `register` (prom-client's default registry if omitted).
 * Returns `{ stop() }`, which removes them.
 */
function promClient(register, options) {
  const { topScopes } = adapterOptions(options);
  const registry = register ?? require('prom-client').register;
  if (typeof registry?.registerMetric !== 'function') throw new TypeError('rloop: promClient() needs a prom-client Registry');
  const families = reader(topScopes);
  const names = [];
  for (const f of families()) {
    const name = f.name;
    // prom-client's default metrics have one of these (nodejs_gc_duration_seconds): the app's stays.
    if (registry.getSingleMetric(name) !== undefined) continue;
    registry.registerMetric({
      name,
      help: f.help,
      type: f.type,
      aggregator: 'sum',
      get: async () => {
        const now = families().find((x) => x.name === name);
        const values = now.samples.map((s) => ({ value: s.value, labels: s.labels, metricName: name + s.suffix }));
        return { name, help: f.help, type: f.type, values, aggregator: 'sum' };
      },
      reset() {},
    });
    names.push(name);
  }
  const releaseGc = useGc(() => {}); // this thread's collections; the addon's recording cannot fail
  return {
    stop: () => {
      releaseGc();
      for (const n of names) registry.removeSingleMetric(n);
    },
  };
}

module.exports = { promClient };

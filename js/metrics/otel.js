'use strict';
// rloop's metrics as OpenTelemetry instruments on a MeterProvider: the given one, or the global
// one of @opentelemetry/api (an optional peer dependency, loaded only then). Observable
// instruments for counters and gauges; the histograms (stalls, garbage collections) are
// Histograms, recorded at collection time with each stall or collection that ended since the
// last one (observable instruments have no histogram).

const { reader } = require('./families');
const { adapterOptions } = require('./options');
const { useGc } = require('./gc');

// Prometheus label names that stand for a dotted OpenTelemetry attribute.
const ATTRIBUTE = { nodejs_eventloop_state: 'nodejs.eventloop.state', kind: 'v8js.gc.type' };

function attributes(labels) {
  const out = {};
  for (const [k, v] of Object.entries(labels)) out[ATTRIBUTE[k] ?? k] = v;
  return out;
}

/** Registers rloop's instruments; returns `{ stop() }`, which removes their callback. */
function otel(meterProvider, options) {
  const { topScopes } = adapterOptions(options);
  const provider = meterProvider ?? require('@opentelemetry/api').metrics.getMeterProvider();
  if (typeof provider?.getMeter !== 'function') throw new TypeError('rloop: otel() needs a MeterProvider');
  const families = reader(topScopes);
  const meter = provider.getMeter('rloop');
  const observed = new Map();
  const recorded = new Map();
  for (const f of families()) {
    const description = { description: f.help, unit: f.unit };
    if (f.type === 'histogram') {
      recorded.set(f.name, meter.createHistogram(f.otel, { ...description, advice: { explicitBucketBoundaries: f.buckets } }));
    } else {
      const make = f.type === 'counter' ? meter.createObservableCounter : meter.createObservableGauge;
      observed.set(f.name, make.call(meter, f.otel, description));
    }
  }
  const callback = (result) => {
    for (const f of families()) {
      const histogram = recorded.get(f.name);
      for (const e of f.events) histogram?.record(e.value, attributes(e.labels));
      const instrument = observed.get(f.name);
      if (instrument === undefined) continue;
      for (const s of f.samples) result.observe(instrument, s.value, attributes(s.labels));
    }
  };
  meter.addBatchObservableCallback(callback, [...observed.values()]);
  const releaseGc = useGc(() => {}); // this thread's collections; the addon's recording cannot fail
  return {
    stop: () => {
      releaseGc();
      meter.removeBatchObservableCallback(callback, [...observed.values()]);
    },
  };
}

module.exports = { otel };

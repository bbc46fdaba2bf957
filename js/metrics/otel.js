'use strict';
// rloop's metrics as OpenTelemetry observable instruments on a MeterProvider: the given one, or
// the global one of @opentelemetry/api (an optional peer dependency, loaded only then).
// Observable instruments have no histogram: the stall histogram is the endpoint's and
// prom-client's; OpenTelemetry gets the stall count (rloop.stalls).

const { families } = require('./families');
const { adapterOptions } = require('./options');

// Prometheus label names that stand for a dotted OpenTelemetry attribute.
const ATTRIBUTE = { nodejs_eventloop_state: 'nodejs.eventloop.state' };

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
  const meter = provider.getMeter('rloop');
  const instruments = new Map();
  for (const f of families(topScopes)) {
    if (f.type === 'histogram') continue;
    const make = f.type === 'counter' ? meter.createObservableCounter : meter.createObservableGauge;
    instruments.set(f.name, make.call(meter, f.otel, { description: f.help, unit: f.unit }));
  }
  const callback = (result) => {
    for (const f of families(topScopes)) {
      const instrument = instruments.get(f.name);
      if (instrument === undefined) continue;
      for (const s of f.samples) result.observe(instrument, s.value, attributes(s.labels));
    }
  };
  meter.addBatchObservableCallback(callback, [...instruments.values()]);
  return { stop: () => meter.removeBatchObservableCallback(callback, [...instruments.values()]) };
}

module.exports = { otel };

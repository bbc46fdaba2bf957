'use strict';
// The metric families of every monitored thread, as the endpoint serves them (src/metrics/),
// for one adapter: its own reader (the series it has exposed, see src/metrics/exposure.rs),
// read once per collection, as a registry asks for each metric in turn within a few ms.

const native = require('../native');
const { now } = require('../clock');

const FRESH_MS = 20;

/**
 * A function returning `[{ name, otel, unit, help, type, samples, events }]`: the families at
 * most `FRESH_MS` old. `events` (the stall histogram's stalls ended since the last read) are
 * handed on once: only by a read that reads the addon.
 */
function reader(topScopes) {
  const addon = new native.MetricsReader(topScopes);
  let cached = null;
  return () => {
    const at = now();
    if (cached === null || at - cached.at > FRESH_MS) {
      cached = { at, families: JSON.parse(addon.read()) };
      return cached.families;
    }
    return cached.families.map((f) => (f.events.length === 0 ? f : { ...f, events: [] }));
  };
}

module.exports = { reader };

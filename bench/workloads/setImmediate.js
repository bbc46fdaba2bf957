'use strict';
// 1 M setImmediate callbacks: one chain per scope, ten chains at once, so consecutive
// callbacks belong to different scopes (the case where every callback switches scope).

const { SCOPES, timeInScopes } = require('./scoped');

function chain(n) {
  return new Promise((resolve) => {
    let left = n;
    const tick = () => (--left > 0 ? setImmediate(tick) : resolve());
    setImmediate(tick);
  });
}

module.exports = {
  name: 'setImmediate',
  describe: (events) => `${events.toLocaleString('en')} setImmediate under ${SCOPES.length} interleaved scopes, wall time`,
  unit: 'ns/event',
  events: 1e6,
  scopes: SCOPES,
  target: { overheadNs: 100, ratio: 4 },
  run: (cfg, events) => timeInScopes(cfg, chain, events),
};

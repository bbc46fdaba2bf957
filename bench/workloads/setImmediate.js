'use strict';
// 1 M setImmediate callbacks in chains, ten chains at once. Interleaved: one chain per scope,
// so every callback switches scope (rloop reads the clock each time). Grouped: the scopes
// take turns, ten chains each, so neighbouring callbacks share a scope (rloop coalesces).

const { SCOPES, timeInScopes } = require('./scoped');

function chain(n) {
  return new Promise((resolve) => {
    let left = n;
    const tick = () => (--left > 0 ? setImmediate(tick) : resolve());
    setImmediate(tick);
  });
}

const workload = (name, interleaved) => ({
  name,
  describe: (events) =>
    `${events.toLocaleString('en')} setImmediate under ${SCOPES.length} scopes, ` +
    `${interleaved ? 'interleaved' : 'one after the other'}, wall time`,
  unit: 'ns/event',
  events: 1e6,
  scopes: SCOPES,
  target: { overheadNs: 100, ratio: 4 },
  configs: ['nohook', 'hooks3', 'hooks4', 'clock', 'hooks2', 'hooks2als', 'clock2', 'clock2als', 'purejs', 'rloop'],
  run: (cfg, events) => timeInScopes(cfg, chain, events, interleaved),
});

module.exports = [workload('setImmediate', true), workload('setImmediate-grouped', false)];

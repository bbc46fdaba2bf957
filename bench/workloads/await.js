'use strict';
// 1 M awaits: one async function per scope, ten at once, so continuations of different
// scopes alternate in the microtask queue.

const { SCOPES, timeInScopes } = require('./scoped');

async function chain(n) {
  for (let i = 0; i < n; i++) await null;
}

module.exports = {
  name: 'await',
  describe: (events) => `${events.toLocaleString('en')} awaits under ${SCOPES.length} interleaved scopes, wall time`,
  unit: 'ns/event',
  events: 1e6,
  scopes: SCOPES,
  target: { overheadNs: 200, ratio: 4 },
  configs: ['nohook', 'hooks3', 'hooks4', 'clock', 'hooks2', 'hooks2als', 'clock2', 'clock2als', 'purejs', 'rloop'],
  run: (cfg, events) => timeInScopes(cfg, chain, events),
};

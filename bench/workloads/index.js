'use strict';
// The workloads, in the order they run and print.

const list = [...require('./setImmediate'), require('./await'), require('./http'), ...require('./timers'), require('./memory')];

module.exports = Object.fromEntries(list.map((w) => [w.name, w]));

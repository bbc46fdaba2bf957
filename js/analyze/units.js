'use strict';
// The units of the CPU analysis's numbers: ms with 3 decimals from µs, shares in % with 2.

const { round } = require('../round');

const ms = (us) => round(us / 1000, 3);
const percent = (part, whole) => (whole > 0 ? round((100 * part) / whole, 2) : 0);

module.exports = { ms, percent };

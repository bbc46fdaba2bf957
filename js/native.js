'use strict';
// The addon, through the loader `napi build` generates (local build or platform package).
module.exports = require('../binding.js');

'use strict';
// Package managers, which NODE_OPTIONS reaches before the app they start: one monitored too
// would write its report over the app's at the same path (it exits last) and take the app's
// metrics port. Matched by the script Node runs (the bin link or the file behind it). A module of
// its own so that it can be required without starting rloop, as requiring register/ does.

const path = require('node:path');

const LAUNCHER = /^(npm|npx|yarn|yarnpkg|pnpm|pnpx|corepack)(-cli)?(\.c?js)?$/;

/** Whether this process is a package manager's (`npm start`), not the app it starts. */
function isLauncher(argv = process.argv) {
  return typeof argv[1] === 'string' && LAUNCHER.test(path.basename(argv[1]));
}

module.exports = { isLauncher };

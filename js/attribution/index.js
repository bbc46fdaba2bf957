'use strict';
// What the adapters that name scopes for the app (js/auto/, node-red/) may use of attribution:
// the scope running now, entering one, the root context, re-tagging a resource, the timers'
// scoping, and opening a window of work (Node-RED's synchronous delivery). The rest of
// attribution (the hooks' install, the ledger, context frames) is the monitor's alone.

const hooks = require('./hooks');

module.exports = {
  ROOT: hooks.ROOT,
  current: hooks.current,
  enter: hooks.enter,
  retag: hooks.retag,
  scopeTimers: hooks.scopeTimers,
  openWindow: hooks.openWindow,
};

'use strict';
// What the adapters that name scopes for the app (js/auto/, node-red/) may use of attribution:
// the scope running now, entering one, the unattributed context, re-tagging a resource, the
// timers' scoping, and the seq of the open window (Node-RED's synchronous delivery). The rest of
// attribution (the hooks' install, the ledger, context frames) is the monitor's alone.

const hooks = require('./hooks');

module.exports = {
  UNATTRIBUTED: hooks.UNATTRIBUTED,
  current: hooks.current,
  enter: hooks.enter,
  retag: hooks.retag,
  scopeTimers: hooks.scopeTimers,
  openWindowSeq: hooks.openWindowSeq,
};

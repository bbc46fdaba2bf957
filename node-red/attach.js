'use strict';
// Per-node attribution turned on from outside (rloop attach, cli/attach/agent.js) in a Node-RED
// that runs without the plugin: the plugin's message hooks (attribution.js) and its window
// bookkeeping (live.js) on the running monitor, no editor half, no admin routes. Start-up work
// has happened already and is not seen.

const { Attribution } = require('./attribution');
const { Live } = require('./live');

const KEYED = 500; // as the plugin's default setting rloop.keyed

/**
 * The RED object of the Node-RED loaded in this thread (node-red/lib/red.js, whatever the entry:
 * the node-red command or an embedding app), from `cache` (require.cache); else null.
 */
function find(cache) {
  for (const m of Object.values(cache)) {
    if (!/[\\/]node-red[\\/]lib[\\/]red\.js$/.test(m?.filename ?? '')) continue;
    const RED = m.exports;
    if (typeof RED?.hooks?.add === 'function' && typeof RED.hooks.has === 'function' && typeof RED.nodes?.getNode === 'function') return RED;
  }
  return null;
}

/**
 * Starts attribution on `mon`: `{ capture(options), stop(), by }`. Where the plugin's hooks are
 * on already, its attribution is what the monitor sees: captures go through the plugin of this
 * copy of rloop on `mon`, to name the nodes (`by: 'plugin'`, stop() leaves it on), or, if that is
 * another copy's, the result is null.
 */
function start(RED, mon) {
  if (RED.hooks.has('onReceive.rloop')) {
    const live = require('./rloop').liveOn(mon);
    return live && { capture: (options) => live.capture(options), stop() {}, by: 'plugin' };
  }
  const attribution = new Attribution(RED, KEYED);
  const live = new Live(RED, mon, attribution, [], 1, () => {});
  return {
    capture: (options) => live.capture(options),
    stop() {
      live.stop();
      attribution.stop();
    },
    by: 'attach',
  };
}

module.exports = { find, start };

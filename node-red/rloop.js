'use strict';
// The Node-RED plugin, runtime half (the editor half is rloop.html beside it): which node keeps
// the event loop busy, live in the editor and over admin HTTP. Settings, in settings.js:
//   rloop: { enabled: true, startup: true, keyed: 500, profile: true, badgeMin: 0.01,
//            windowMs: 1000, history: 60, ...other rloop.start() options }
// `startup: false` leaves node constructors alone (start-up work is then unattributed); `keyed`:
// messages a node and window timed one by one, a uniform sample beyond (attribution.js);
// `profile`: the editor's captures take a CPU profile; `badgeMin`: the editor hides badges below
// this ELU. The windows kept outlive the switch: the editor shows them while off. Off, by
// settings or by the editor's switch, nothing of it runs: no hooks, no wrapped constructors, and
// no monitor unless the host application started one itself.

const rloop = require('..');
const { Attribution } = require('./attribution');
const { Live } = require('./live');
const startup = require('./startup');
const { routes } = require('./admin');

const HISTORY = 60; // windows kept when the host application's monitor is used
const plugins = new Set(); // of this copy of rloop, for rloop attach (attach.js)

class Plugin {
  #RED;
  #options;
  #startup;
  #keyed;
  #profile;
  #badgeMin;
  #history = []; // the windows kept, across the switch
  #editors = 0; // comms connections: windows are published only while an editor listens
  #on = null; // while enabled: { mon, owned, attribution, live, undoStartup }

  constructor(RED) {
    const { enabled = true, startup: withStartup = true, keyed = 500, profile = true, badgeMin = 0.01, ...options } = RED.settings.rloop ?? {};
    this.#RED = RED;
    plugins.add(this);
    this.#options = options;
    this.#startup = withStartup;
    this.#keyed = keyed;
    this.#profile = profile === true;
    this.#badgeMin = typeof badgeMin === 'number' && badgeMin >= 0 ? badgeMin : 0.01;
    if (typeof profile !== 'boolean') RED.log.warn(`rloop: setting rloop.profile must be true or false, got ${profile}: no CPU profile`);
    if (this.#badgeMin !== badgeMin) RED.log.warn(`rloop: setting rloop.badgeMin must be a number ≥ 0, got ${badgeMin}: 0.01 used`);
    RED.events.on('comms:connection-added', () => this.#editors++);
    RED.events.on('comms:connection-removed', () => (this.#editors = Math.max(0, this.#editors - 1)));
    routes(RED, this);
    if (enabled) {
      try {
        this.enable();
      } catch (e) {
        RED.log.error(`rloop: not started: ${e.message}`);
      }
    }
  }

  get enabled() {
    return this.#on !== null;
  }

  /** Starts attribution, on the host application's monitor if it runs one. */
  enable() {
    if (this.#on) return;
    if (!Number.isInteger(this.#keyed) || this.#keyed < 1) throw new TypeError(`setting rloop.keyed must be a positive integer, got ${this.#keyed}`);
    const RED = this.#RED;
    const running = rloop.monitor();
    const mon = running ?? rloop.start(this.#options);
    const attribution = new Attribution(RED, this.#keyed);
    const size = running ? HISTORY : (this.#options.history ?? HISTORY);
    const live = new Live(RED, mon, attribution, this.#history, size, (summary) => {
      if (this.#editors > 0) RED.comms.publish('rloop/window', summary, false);
    });
    const undoStartup = this.#startup ? startup.install(RED) : null;
    this.#on = { mon, owned: running === null, attribution, live, undoStartup };
    this.#publishState();
  }

  /** Stops attribution and removes all it added; a monitor of the host application keeps running. */
  disable() {
    const on = this.#on;
    if (!on) return;
    this.#on = null;
    on.undoStartup?.();
    on.live.stop();
    on.attribution.stop();
    if (on.owned) on.mon.stop();
    this.#publishState();
  }

  /** While enabled on monitor `mon`, its windows and captures with the nodes they name; else null. */
  liveOn(mon) {
    return this.#on?.mon === mon ? this.#on.live : null;
  }

  /** On or off, the window, and the settings the editor follows. */
  state() {
    return { enabled: this.enabled, windowMs: this.#on?.mon.windowMs ?? null, profile: this.#profile, badgeMin: this.#badgeMin };
  }

  elu() {
    return { ...this.state(), ...this.#on?.live.elu() };
  }

  /** The windows kept, oldest first; kept while off too, until the next switch on fills them. */
  history() {
    return { ...this.state(), windows: this.#history };
  }

  /**
   * A capture of `durationMs` as a report (docs/report-schema.md) with the nodes it names and the
   * messages each received in it; with a CPU profile when `profile` (default: the setting).
   */
  async capture(durationMs, profile = this.#profile) {
    return this.#on.live.capture({ durationMs, profile });
  }

  #publishState() {
    this.#RED.comms.publish('rloop/state', this.state(), true);
  }
}

module.exports = function (RED) {
  RED.plugins.registerPlugin('rloop', {
    onadd: () => new Plugin(RED),
  });
};
/** The Live of the enabled plugin on monitor `mon`, or null. */
module.exports.liveOn = (mon) => [...plugins].map((p) => p.liveOn(mon)).find(Boolean) ?? null;

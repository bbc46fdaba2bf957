'use strict';
// One monitor's scopes and keys: the contexts it charges, registered with its addon as they are
// first named. Slots: unattributed, OTHER ('(other)'), then scopes from FIRST_SCOPE, then a ring
// of key slots.

const hooks = require('./hooks');
const { UNATTRIBUTED, OTHER, FIRST_SCOPE } = require('./ledger');
const { OUTSIDE_CALLBACKS, FULL } = require('./timeline');

const OTHER_NAME = '(other)';
const NOT_RECORDED = '(not recorded)'; // a profile's samples after its timeline filled up

class Scopes {
  #addScope; // addScope(name) -> slot, a raw native function
  #bindNative; // bindKey(slot, scope, key), a raw native function
  #rescopeNative; // rescopeKey(slot, scope), a raw native function
  #keySlots;
  #byName = new Map(); // name -> context of the scope without a key, at most maxScopes
  #bySlot = []; // slot -> the same contexts
  #other = new Map(); // automatic -> the one context of every name past maxScopes: '(other)'
  #full = false; // the addon holds maxScopes names: it looks every name up from then on
  #keyBase;
  // key slot - keyBase -> the slot of the scope of the key bound to it, UNATTRIBUTED before any:
  // outside V8's heap, and of the ring's size from the start, as a JS array grown with the ring
  // was copied and kept through scavenges while keyed scopes begin.
  #keyScopes;
  #nextKey = 0;

  /** `native`: the monitor's NativeMonitor; `options`: start()'s. */
  constructor(native, { maxScopes, keySlots }) {
    this.#addScope = native.scopeAdder();
    this.#bindNative = native.keyBinder();
    this.#rescopeNative = native.keyRescoper();
    this.#keySlots = keySlots;
    this.#keyBase = FIRST_SCOPE + maxScopes;
    this.#keyScopes = new Int32Array(keySlots).fill(UNATTRIBUTED);
  }

  /** Slots of the ledger: the built-in ones, the scopes', then the keys'. */
  get slots() {
    return this.#keyBase + this.#keySlots;
  }

  /**
   * The context charged for `name` (and `key`), registering what is new; `automatic`: false, or
   * the kind of scope an automatic-scope adapter gives ('route', 'timer'). Once the registry is
   * full the addon looks every name up: a Map lookup makes V8 keep an internalized copy of a
   * fresh string, and an app naming a scope per call would have a million kept (bench/memory.md
   * measures it) where the names past the cap are meant to cost nothing.
   */
  context(name, key, automatic = false) {
    const scope = this.#full ? this.#bySlot[this.#addScope(name)] ?? this.#overflow(automatic) : this.#byName.get(name) ?? this.#register(name, automatic);
    return key === undefined ? scope : this.#bindKey(scope, key);
  }

  #register(name, automatic) {
    const slot = this.#addScope(name);
    if (slot === OTHER) {
      this.#full = true; // names are never unregistered
      return this.#overflow(automatic);
    }
    const scope = hooks.context(slot, null, name, undefined);
    scope.automatic = automatic;
    this.#byName.set(name, scope);
    this.#bySlot[slot] = scope;
    return scope;
  }

  /**
   * The context of a name past maxScopes, '(other)' as the windows say: one for all of them,
   * counted by the addon. Nothing is kept or allocated per name: an app naming a scope per
   * request would otherwise grow V8's young generation (a context per call, or a cache of names
   * seen; bench/memory.md).
   */
  #overflow(automatic) {
    let other = this.#other.get(automatic);
    if (other === undefined) {
      other = hooks.context(OTHER, null, OTHER_NAME, undefined);
      other.automatic = automatic;
      this.#other.set(automatic, other);
    }
    return other;
  }

  /**
   * Moves key context `ctx` to the scope `name` (of its scope's kind), with what its key was
   * charged in the current window so far: a request whose route became known after it began.
   * Returns `ctx`, or a new context of the key once a newer key took its slot (its time so far
   * then stays with its scope).
   */
  rescope(ctx, name) {
    const scope = this.context(name, undefined, ctx.scope.automatic);
    if (!hooks.owns(ctx)) return this.#bindKey(scope, ctx.key);
    this.#rescopeNative(ctx.slot, scope.slot);
    hooks.moveKey(ctx, scope);
    this.#keyScopes[ctx.slot - this.#keyBase] = scope.slot;
    return ctx;
  }

  #bindKey(scope, key) {
    const n = this.#keySlots;
    let j = this.#nextKey++ % n;
    // Never rebind the slot being charged right now (a key entered inside its own callback).
    if (this.#keyBase + j === hooks.running()) j = this.#nextKey++ % n;
    const ctx = hooks.keyContext(this.#keyBase + j, scope, key); // late work of the slot's old key goes to its scope
    this.#keyScopes[j] = scope.slot;
    this.#bindNative(ctx.slot, scope.slot, key);
    return ctx;
  }

  /** A profile timeline's slot as a name: false outside callbacks, null unattributed. */
  nameOf(slot) {
    if (slot === OUTSIDE_CALLBACKS) return false;
    if (slot === FULL) return NOT_RECORDED;
    if (slot === OTHER) return OTHER_NAME;
    if (slot >= this.#keyBase) return this.nameOf(this.#keyScopes[slot - this.#keyBase] ?? UNATTRIBUTED);
    return this.#bySlot[slot]?.name ?? null;
  }

  /** The names of the HTTP route scopes (js/auto/http.js). */
  routes() {
    const routes = new Set();
    for (const scope of this.#byName.values()) if (scope.automatic === 'route') routes.add(scope.name);
    return routes;
  }
}

module.exports = { Scopes };

'use strict';
// Start-up work: a node's constructor, and the timers, intervals and promises it creates (a
// Function node's On Start code among them), are charged to the node. Node-RED has no hook for
// construction, so this wraps the constructors that @node-red/registry's get() hands the
// runtime; only where those internals are the ones known (Node-RED 4.1 to 5.x), else it warns
// once and attribution goes on without start-up work.

const path = require('node:path');
const rloop = require('..');

const REGISTRY = path.join('@node-red', 'registry', 'lib', 'index.js');

/** Whether `version` (Node-RED's, e.g. '4.1.15' or '5.0.7-git') is one whose internals are known. */
function supported(version) {
  const [major, minor] = String(version).split('.').map(Number);
  return (major === 4 && minor >= 1) || major === 5;
}

/** The registry module instance of this runtime: the one loaded whose version is Node-RED's. */
function registryOf(version) {
  for (const [file, mod] of Object.entries(require.cache)) {
    if (!file.endsWith(REGISTRY)) continue;
    const own = require(path.join(file, '..', '..', 'package.json')).version;
    if (version === own || version === `${own}-git`) return mod.exports;
  }
  return null;
}

let warned = false;

/** Wraps node construction; returns the function that undoes it, or null (after one warning). */
function install(RED) {
  const version = RED.version();
  const registry = supported(version) ? registryOf(version) : null;
  const get = registry?.get;
  if (typeof get !== 'function' || !Object.getOwnPropertyDescriptor(registry, 'get').writable) {
    if (!warned) RED.log.warn(`rloop: no start-up attribution: Node-RED ${version} internals are not the ones this rloop knows (4.1 to 5.x)`);
    warned = true;
    return null;
  }
  const wrapped = new WeakMap(); // constructor -> its proxy
  const construct = (target, args, newTarget) => {
    const id = args[0]?.id;
    const make = () => Reflect.construct(target, args, newTarget);
    return typeof id === 'string' ? rloop.scope(`node:${id}`, make) : make();
  };
  registry.get = function (type) {
    const made = get.call(this, type);
    if (typeof made !== 'function') return made; // a subflow module's definition, or nothing
    let proxy = wrapped.get(made);
    if (proxy === undefined) wrapped.set(made, (proxy = new Proxy(made, { construct })));
    return proxy;
  };
  const ours = registry.get;
  return () => {
    if (registry.get === ours) registry.get = get;
  };
}

module.exports = { install, supported };

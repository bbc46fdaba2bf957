'use strict';
// Incoming HTTP by route: each request is charged to a scope `GET /users/:id`, keyed by its path,
// from Node's `http.server.request.start` channel (http itself is not patched). The name is the
// path with identifiers collapsed until the framework tells the route's template:
// - Express 4 and 5: when its router sets `req.route` (an accessor on the app's request prototype,
//   not on the request, that makes the own property an assignment makes);
// - Fastify: its `tracing:fastify.request.handler` channel, as the handler starts.
// Not Koa: @koa/router sets `ctx._matchedRoute` before the handler, but Koa makes each ctx from
// its app's prototype, and the server's listener (a closure) does not give the app; only Koa's
// module-wide context prototype would, and rloop does not change a package's modules.
// Time before that (parsing, middleware) stays with the collapsed path's name. The request's
// async work inherits its scope; its socket's callbacks (the body arriving) are charged to it
// until the response finishes. The app's own scope, inside a request or around the server,
// always wins.

const dc = require('node:diagnostics_channel');
const hooks = require('../attribution');
const { requestPath } = require('../redact');
const { attempt } = require('../attempt');

const MAX_ROUTES = 500; // distinct names; requests past them go to OTHER, and are counted
const OTHER = 'HTTP (other routes)';
const MAX_NAME = 256;
const MAX_KEY = 200;
// Paths (of at most MAX_KEY characters) remembered with their name and key, so that a path seen
// again is one lookup, not its collapsing; past this many, all are forgotten.
const MAX_PATHS = 1000;

// A path segment that is an identifier: a number, a UUID, hex of 8+ digits with a digit in it, or
// a long token (16+ characters with a digit, or 32+ of any token characters).
const ID = /^(?:\d+|[\da-f]{8}-[\da-f]{4}-[\da-f]{4}-[\da-f]{4}-[\da-f]{12}|(?=[a-f]*\d)[\da-f]{8,}|(?=\D*\d)[\w.~%-]{16,}|[\w.~%-]{32,})$/i;

const MAYBE_ID = /\d|[^/]{32}/; // every identifier has a digit or 32+ characters

/** `/users/42/posts/9f86d081` → `/users/:id/posts/:id`. */
function collapse(path) {
  if (!MAYBE_ID.test(path)) return path;
  const parts = path.split('/');
  for (let i = 0; i < parts.length; i++) if (ID.test(parts[i])) parts[i] = ':id';
  return parts.join('/');
}

/** `true` for the function Express passes to `http.createServer()`. */
function isExpress(listener) {
  return typeof listener === 'function' && typeof listener.handle === 'function' && typeof listener.engine === 'function' && typeof listener.set === 'function';
}

// Express's router assigns `req.route` as it dispatches to a route. An accessor on the prototype
// Express gives its requests (`app.request`, which its mounted apps' inherit) sees that and makes
// the own property the assignment would have: no own property, key or per-request work is added.
let onRoute = null; // the running adapter's (request, route)
const patched = []; // WeakRefs to the prototypes given the accessor

function setRoute(route) {
  Object.defineProperty(this, 'route', { value: route, writable: true, enumerable: true, configurable: true });
  onRoute?.(this, route);
}

const ROUTE = { configurable: true, enumerable: false, get: () => undefined, set: setRoute };

function watchRoutes(proto) {
  if (proto === null || typeof proto !== 'object' || Object.hasOwn(proto, 'route') || !Object.isExtensible(proto)) return;
  Object.defineProperty(proto, 'route', ROUTE);
  patched.push(new WeakRef(proto));
}

function unwatchRoutes() {
  onRoute = null;
  for (const ref of patched) {
    const proto = ref.deref();
    if (proto !== undefined && Object.getOwnPropertyDescriptor(proto, 'route')?.set === setRoute) delete proto.route;
  }
  patched.length = 0;
}

/** Starts charging requests for `monitor`; returns `{ stop(), stats() }`. */
function start(monitor) {
  const names = new Set(); // the names given so far, at most MAX_ROUTES
  let overflowed = 0; // requests charged to OTHER
  const requests = new WeakMap(); // request -> { ctx, socket, handle, prev }
  const servers = new WeakSet(); // those whose Express apps' prototypes are watched

  function nameFor(method, route) {
    const name = `${method} ${route}`.slice(0, MAX_NAME);
    if (names.has(name)) return name;
    if (names.size >= MAX_ROUTES) {
      overflowed++;
      return OTHER;
    }
    names.add(name);
    return name;
  }

  const paths = new Map(); // `${method} ${path}` -> { name, key }

  /** Whether code charged now is in no scope or an automatic one (a keep-alive socket's): the app's own wins. */
  function mayCharge() {
    const c = hooks.current();
    return c.scope === null || c.automatic;
  }

  function pathOf(request) {
    const path = requestPath(String(request.url ?? ''));
    const id = `${request.method} ${path}`;
    let p = paths.get(id);
    if (p === undefined) {
      p = { name: nameFor(request.method, collapse(path)), key: path.slice(0, MAX_KEY) };
      if (paths.size >= MAX_PATHS) paths.clear();
      if (path.length <= MAX_KEY) paths.set(id, p); // ≤ 1 000 short strings
    } else if (p.name === OTHER) overflowed++;
    return p;
  }

  function charge(request, socket, name, key) {
    const ctx = monitor.context(name, key, 'route'); // a key per request: its percentiles are requests'
    hooks.enter(ctx); // the rest of this callback, and all it starts
    const r = requests.get(request);
    const handle = socket?._handle;
    if (r !== undefined) {
      r.ctx = ctx;
      if (r.handle !== null) hooks.retag(r.handle, r.handle.getAsyncId(), ctx);
    } else {
      const tagged = typeof handle?.getAsyncId === 'function' ? handle : null;
      const prev = tagged === null ? null : hooks.retag(tagged, tagged.getAsyncId(), ctx);
      requests.set(request, { ctx, handle: tagged, prev });
    }
  }

  function onStart({ request, socket, server }) {
    if (!mayCharge()) return;
    const p = pathOf(request);
    charge(request, socket, p.name, p.key);
    if (server !== undefined && !servers.has(server)) {
      servers.add(server);
      for (const l of server.listeners('request')) if (isExpress(l)) watchRoutes(l.request);
    }
  }

  function routed(request, template) {
    const r = requests.get(request);
    if (r === undefined || monitor.stopped || !mayCharge()) return;
    const name = nameFor(request.method, template);
    if (name !== r.ctx.name) charge(request, null, name, r.ctx.key);
  }

  function onFinish({ request }) {
    const r = requests.get(request);
    if (r === undefined) return;
    requests.delete(request);
    if (r.handle !== null) hooks.retag(r.handle, r.handle.getAsyncId(), r.prev);
  }

  function onFastify({ request, route }) {
    const raw = request?.raw;
    if (raw !== undefined && typeof route?.url === 'string') routed(raw, route.url);
  }

  function onExpress(request, route) {
    if (typeof route?.path === 'string') routed(request, `${request.baseUrl ?? ''}${route.path}`);
  }

  // Inside Express's router: on a failure the request stays as it was charged.
  onRoute = (request, route) => attempt(onExpress, request, route);
  const channels = [
    ['http.server.request.start', onStart],
    ['http.server.response.finish', onFinish],
    ['tracing:fastify.request.handler:start', onFastify],
  ];
  // A subscriber's exception would reach the app (Node rethrows it on the next tick): never one.
  // On a failure the request stays as it was charged.
  for (const c of channels) {
    const fn = c[1];
    c[1] = (message) => attempt(fn, message);
    dc.subscribe(c[0], c[1]);
  }
  return {
    stop() {
      for (const [name, fn] of channels) dc.unsubscribe(name, fn);
      unwatchRoutes();
    },
    stats: () => ({ routes: names.size, overflowed }),
  };
}

module.exports = { start, collapse };

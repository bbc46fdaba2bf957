'use strict';
// Incoming HTTP by route: each request is charged to a scope `GET /users/:id`, under a key of its
// own (`/users/793 #57`: its path, and its number among the requests charged), from Node's
// `http.server.request.start` channel (http itself is not patched). The name is the path with
// identifiers collapsed until the framework tells the route's template:
// - Express 4 and 5: when its router sets `req.route` (an accessor on the app's request prototype,
//   not on the request, that makes the own property an assignment makes);
// - Fastify: its `tracing:fastify.request.handler` channel, as the handler starts.
// Not Koa: @koa/router sets `ctx._matchedRoute` before the handler, but Koa makes each ctx from
// its app's prototype, and the server's listener (a closure) does not give the app; only Koa's
// module-wide context prototype would, and rloop does not change a package's modules.
// Then the request's key moves to the template's scope with its time so far in the window (time
// of an earlier window stays with the collapsed path's name). The request's async work inherits
// its scope; its socket's callbacks (the body arriving) are charged to it until the response
// finishes. The app's own scope, inside a request or around the server, always wins; the
// request's route is known all the same, for its I/O (`incoming()`).

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

function trapRoutes(proto) {
  if (proto === null || typeof proto !== 'object' || Object.hasOwn(proto, 'route') || !Object.isExtensible(proto)) return;
  Object.defineProperty(proto, 'route', ROUTE);
  patched.push(new WeakRef(proto));
}

function untrapRoutes() {
  onRoute = null;
  for (const ref of patched) {
    const proto = ref.deref();
    if (proto !== undefined && Object.getOwnPropertyDescriptor(proto, 'route')?.set === setRoute) delete proto.route;
  }
  patched.length = 0;
}

/** Starts charging requests for `monitor`; returns `{ incoming(request), stop(), stats() }`. */
function start(monitor) {
  const names = new Set(); // the names given so far, at most MAX_ROUTES
  let overflowed = 0; // requests charged to OTHER
  let served = 0; // requests charged: a request's key is its path and its number among them
  // request -> { ctx (null while the app's own scope charges it), route, handle, prev }; kept
  // after the response (a WeakMap entry) for the I/O tracker, which reads it as the response ends.
  const requests = new WeakMap();
  const servers = new WeakSet(); // those whose Express apps' prototypes are trapped

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

  const paths = new Map(); // `${method} ${path}` -> { route, name }, name given once charged

  /** Whether code charged now is in no scope or an automatic one (a keep-alive socket's): the app's own wins. */
  function mayCharge() {
    const c = hooks.current();
    return c.scope === null || c.automatic;
  }

  /** The route as known at a request's start, its path collapsed, and its name once asked for. */
  function pathOf(method, path) {
    const id = `${method} ${path}`;
    let p = paths.get(id);
    if (p === undefined) {
      p = { route: collapse(path).slice(0, MAX_NAME), name: null };
      if (paths.size >= MAX_PATHS) paths.clear();
      if (path.length <= MAX_KEY) paths.set(id, p); // ≤ 1 000 short strings
    }
    return p;
  }

  /** Charges the rest of this callback, all it starts, and the request's socket until the response finishes, to `ctx`. */
  function use(r, ctx) {
    hooks.enter(ctx);
    r.ctx = ctx;
    if (r.handle !== null) hooks.retag(r.handle, r.handle.getAsyncId(), ctx);
  }

  function onStart({ request, socket, server }) {
    const path = requestPath(String(request.url ?? ''));
    const p = pathOf(request.method, path);
    const r = { ctx: null, route: p.route, handle: null, prev: null };
    requests.set(request, r);
    if (server !== undefined && !servers.has(server)) {
      servers.add(server);
      for (const l of server.listeners('request')) if (isExpress(l)) trapRoutes(l.request);
    }
    if (!mayCharge()) return;
    if (p.name === null) p.name = nameFor(request.method, p.route);
    else if (p.name === OTHER) overflowed++;
    // A key per request, so that its percentiles are requests'; the path says which one.
    const ctx = monitor.context(p.name, `${path.slice(0, MAX_KEY)} #${++served}`, 'route');
    const handle = socket?._handle;
    if (typeof handle?.getAsyncId === 'function') {
      r.handle = handle;
      r.prev = hooks.retag(handle, handle.getAsyncId(), ctx);
    }
    use(r, ctx);
  }

  /** The framework routed `request`: its route is `template`, and so is its scope, its time so far in this window with it. */
  function routed(request, template) {
    const r = requests.get(request);
    if (r === undefined || monitor.stopped) return;
    r.route = template.slice(0, MAX_NAME);
    if (r.ctx === null || !mayCharge()) return;
    const name = nameFor(request.method, r.route);
    if (name !== r.ctx.name) use(r, monitor.rescope(r.ctx, name));
  }

  function onFinish({ request }) {
    const r = requests.get(request);
    if (r === undefined || r.handle === null) return;
    hooks.retag(r.handle, r.handle.getAsyncId(), r.prev);
    r.handle = null;
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
    /**
     * What is known of an incoming request: `{ scope, key, route }`, `route` its template or
     * collapsed path (no method), scope and key null when the app's own scope charged it; null
     * for a request not seen.
     */
    incoming(request) {
      const r = requests.get(request);
      return r === undefined ? null : { scope: r.ctx?.name ?? null, key: r.ctx?.key ?? null, route: r.route };
    },
    stop() {
      for (const [name, fn] of channels) dc.unsubscribe(name, fn);
      untrapRoutes();
    },
    stats: () => ({ routes: names.size, overflowed }),
  };
}

module.exports = { start, collapse };

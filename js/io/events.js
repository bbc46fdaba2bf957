'use strict';
// What a slow I/O event says about one operation (js/io/index.js times them): its target, from what
// the channels pass, with secrets redacted; its error; and its caller's stack, captured when
// the operation begins and formatted only for a slow one.

const { ORIGIN } = require('../clock');
const { pathToFileURL } = require('node:url');
const { redactUrl, redactLink, redactText, requestPath, target } = require('../redact');
const { isOwnFile } = require('../own');
const { round } = require('../round');

const MAX_TARGET_LENGTH = 256; // a path may be kilobytes long: targets are kept and reported
// Frames captured below rloop's own, each costing up to a microsecond: enough for some 6 of the
// caller's under those Node puts above them (4 for http, none for dns), undici (20 to 26 for
// fetch) or both (27 to 34 for a socket undici connects; sockets are connected far less often).
const DEPTH = { http: 10, https: 10, dns: 10, fetch: 32, tcp: 40 };
const MAX_FRAMES = 10;
const FRAME = /^\s*at (?:async )?(?:(.*?) \()?(.+?):(\d+):(\d+)\)?$/;

function httpTarget(request) {
  return target(String(request.getHeader('host') ?? request.host), request.path);
}

function fetchTarget(request) {
  return redactUrl(String(request.origin) + request.path);
}

function failedTarget(err) {
  if (err?.address !== undefined) return hostPort(err.address, err.port);
  return err?.hostname ?? '(unknown)';
}

function hostPort(address, port) {
  return address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
}

function errorName(err) {
  return err == null ? undefined : String(err.code ?? err.message ?? err);
}

// V8 keeps the structured trace and formats it only when `.stack` is read.
function captureStack(rec, top) {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = DEPTH[rec.type];
  Error.captureStackTrace(rec, top);
  Error.stackTraceLimit = limit;
}

// What an operation in flight is, from what its record was begun on.
const DESCRIBE = {
  http: (request) => [request.method, httpTarget(request)],
  https: (request) => [request.method, httpTarget(request)],
  fetch: (request) => [request.method, fetchTarget(request)],
  tcp: (socket) => ['connect', socket.remoteAddress === undefined ? '(connecting)' : hostPort(socket.remoteAddress, socket.remotePort)],
  'http-in': (response) => [response.req?.method ?? '', requestPath(String(response.req?.url ?? ''))],
  dns: (hostname) => ['lookup', String(hostname)],
};

/** The event of an operation still in flight after `ms`. */
function pendingEvent(rec, ms) {
  const [method, where] = DESCRIBE[rec.type](rec.owner);
  return { ...slowEvent(rec, method, clip(where), undefined, undefined, ms), state: 'pending' };
}

function clip(where) {
  return where.length > MAX_TARGET_LENGTH ? where.slice(0, MAX_TARGET_LENGTH) : where;
}

function slowEvent(rec, method, where, status, error, ms) {
  const event = { type: rec.type, method, target: where };
  if (rec.route !== undefined) event.route = rec.route;
  if (status !== undefined) event.status = status;
  if (error !== undefined) event.error = redactText(error); // a message may hold a URL, credentials and all
  event.durationMs = round(ms, 3);
  event.at = Math.round(ORIGIN + rec.t0);
  event.stack = frames(v8Stack(rec));
  event.scope = rec.ctx?.scope ?? null;
  event.key = rec.ctx?.key ?? null;
  event.trace = rec.trace ?? null;
  return event;
}

// V8's own format of the frames captured: Node's source maps (--enable-source-maps) or the app's
// prepareStackTrace would give other lines or none; js/capture/source-maps.js maps these and keeps them.
const v8Format = (_, calls) => calls.map((c) => `\n    at ${c}`).join('');

/** The text of a record's stack, formatted as V8 does; as the app formats it where its Error is frozen. */
function v8Stack(rec) {
  const prepare = Error.prepareStackTrace;
  try {
    Error.prepareStackTrace = v8Format;
  } catch {
    return rec.stack;
  }
  try {
    return rec.stack;
  } finally {
    Error.prepareStackTrace = prepare;
  }
}

/** Stack frames, the app's first, then Node's and rloop's; shaped as the stack sampler's (1-based). */
function frames(stack) {
  if (typeof stack !== 'string') return [];
  const user = [];
  const internal = [];
  for (const text of stack.split('\n')) {
    const m = FRAME.exec(text);
    if (m === null) continue; // the message line, and frames without a position
    const [, functionName = '(anonymous)', file, line, column] = m;
    const url = file.startsWith('/') ? pathToFileURL(file).href : redactLink(file); // an ES module's may have a query
    const frame = { functionName, url, line: Number(line), column: Number(column) };
    (file.startsWith('node:') || isOwnFile(file) ? internal : user).push(frame);
  }
  return user.concat(internal).slice(0, MAX_FRAMES);
}

module.exports = { httpTarget, fetchTarget, failedTarget, hostPort, errorName, captureStack, pendingEvent, clip, slowEvent };

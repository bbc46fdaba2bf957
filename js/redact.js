'use strict';
// What of a URL may appear in a report: scheme, host, port and path. Never the credentials
// (user:pass@), the query string, the fragment or path parameters (`;jsessionid=…`), where tokens
// and personal data travel. Applied to every URL rloop records: I/O targets, the URLs of stack
// frames (a script loaded as `x.mjs?v=…`), and URLs inside error messages.

const AUTHORITY_END = /[/?#]/;
const SCHEME = /^[a-z][a-z\d+.-]*:\/\//i;
const PATH_PARAMETERS = /;[^/]*/g;
// A URL inside free text: a scheme and `//`, or a path from `/` at the start of a word, up to
// the next space or quote.
const URL_IN_TEXT = /\b[a-z][a-z\d+.-]*:\/\/[^\s"'`<>]*|(?<![^\s"'`(=])\/[^\s"'`<>]*/gi;
const SLASH = 47;

/** `path` without its query string, fragment and path parameters. */
function pathOnly(path) {
  let end = path.indexOf('?');
  const hash = path.indexOf('#');
  if (hash !== -1 && (end === -1 || hash < end)) end = hash;
  const bare = end === -1 ? path : path.slice(0, end);
  return bare.includes(';') ? bare.replace(PATH_PARAMETERS, '') : bare;
}

/** 'host:port/path' of an absolute or scheme-less URL: an I/O target. */
function redactUrl(url) {
  const scheme = SCHEME.exec(url);
  const rest = scheme === null ? url : url.slice(scheme[0].length);
  const end = rest.search(AUTHORITY_END);
  if (end === -1) return withoutCredentials(rest);
  return withoutCredentials(rest.slice(0, end)) + pathOnly(rest.slice(end));
}

/** `url` with its scheme kept: a stack frame's ('file:///app/x.mjs', 'node:fs', a path). */
function redactLink(url) {
  const scheme = SCHEME.exec(url);
  return scheme === null ? pathOnly(url) : scheme[0] + redactUrl(url.slice(scheme[0].length));
}

/** `text` (an error message) with each URL in it redacted. */
function redactText(text) {
  return text.replace(URL_IN_TEXT, redactLink);
}

/** Stack frames `[{ url, … }]` with their URLs redacted; the same array when none needs it. */
function redactStack(frames) {
  if (!Array.isArray(frames) || !frames.some((f) => typeof f?.url === 'string' && redactLink(f.url) !== f.url)) return frames;
  return frames.map((f) => (typeof f?.url === 'string' ? { ...f, url: redactLink(f.url) } : f));
}

/** A stall event with its frames' URLs redacted: the stack sampler passes on what V8 gave. */
function redactStall(event) {
  const stack = redactStack(event.stack);
  const stackSeen = redactStack(event.stackSeen);
  return stack === event.stack && stackSeen === event.stackSeen ? event : { ...event, stack, stackSeen };
}

/**
 * 'host:port/path' of a request to `authority` for `path`. A path in absolute form (sent to a
 * forward proxy) names the real destination, so it wins.
 */
function target(authority, path) {
  return path.charCodeAt(0) === SLASH ? withoutCredentials(authority) + pathOnly(path) : redactUrl(path);
}

/** The path of a request line, as `target()` without the authority: an incoming request's. */
function requestPath(path) {
  return path.charCodeAt(0) === SLASH ? pathOnly(path) : redactUrl(path);
}

function withoutCredentials(authority) {
  const at = authority.lastIndexOf('@');
  return at === -1 ? authority : authority.slice(at + 1);
}

module.exports = { redactUrl, redactLink, redactText, redactStack, redactStall, target, requestPath };

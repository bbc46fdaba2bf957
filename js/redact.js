'use strict';
// What of a URL may appear in a report: host, port and path. Never the scheme's credentials
// (user:pass@), the query string or the fragment, where tokens and personal data travel.

const AUTHORITY_END = /[/?#]/;
const SLASH = 47;

/** `path` without its query string or fragment. */
function pathOnly(path) {
  let end = path.indexOf('?');
  const hash = path.indexOf('#');
  if (hash !== -1 && (end === -1 || hash < end)) end = hash;
  return end === -1 ? path : path.slice(0, end);
}

/** 'host:port/path' of an absolute or scheme-less URL. */
function redactUrl(url) {
  const scheme = url.indexOf('://');
  const rest = scheme === -1 ? url : url.slice(scheme + 3);
  const end = rest.search(AUTHORITY_END);
  if (end === -1) return withoutCredentials(rest);
  return withoutCredentials(rest.slice(0, end)) + pathOnly(rest.slice(end));
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

module.exports = { redactUrl, target, requestPath };

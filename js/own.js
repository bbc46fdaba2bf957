'use strict';
// Whose code a stack frame is: rloop's own (hidden from the app's stacks, never a finding), a
// library's (Node's internals, node_modules, native code: folded), or the app's. Stack frames are
// `{ functionName, url, line, column }`; profile call frames (`url` only) work the same.

const path = require('node:path');
const { pathToFileURL } = require('node:url');

// rloop's code: the folders of its package that run in the app, as this copy names them, and as
// any installed copy does (a report may be rendered by another checkout than the one that
// captured it). The one place that decides what is rloop's own.
const ROOT = path.join(__dirname, '..');
const OWN_DIRS = ['js', 'register', 'node-red', 'cli'].map((d) => path.join(ROOT, d) + path.sep);
const OWN_URLS = OWN_DIRS.map((d) => pathToFileURL(d).href);
const OWN_INSTALLED = /[/\\]node_modules[/\\]rloop[/\\](js|register|node-red|cli)[/\\]/;
const OWN_SCHEME = 'rloop:'; // code rloop compiles: its markers of builtins, attach's agent
const JSON_MARKER_URL = `${OWN_SCHEME}json`; // js/capture/markers.js: JSON.parse/stringify
const REGEX_MARKER_URL = `${OWN_SCHEME}regex`; // and the RegExp methods

/** A file path (as V8's call sites give it) of rloop's own code. */
const isOwnFile = (file) => typeof file === 'string' && (OWN_DIRS.some((d) => file.startsWith(d)) || OWN_INSTALLED.test(file));

const urlOf = (f) => (f && typeof f.url === 'string' ? f.url : '');

/** rloop's own frame: its scope and I/O wrappers, its markers of builtins. */
function isOwn(f) {
  const url = urlOf(f);
  return OWN_URLS.some((d) => url.startsWith(d)) || url.startsWith(OWN_SCHEME) || OWN_INSTALLED.test(url);
}

/**
 * A library frame: native code, Node's own modules, anything under node_modules. A frame at its
 * original location is one where it ran too: a package's map may name its sources `webpack://pkg/…`.
 */
function isLibrary(f) {
  const url = urlOf(f);
  return url === '' || url.startsWith('node:') || /[/\\]node_modules[/\\]/.test(url) || (f?.generated != null && isLibrary(f.generated));
}

/** The app's own frame. */
const isApp = (f) => f !== null && typeof f === 'object' && !isOwn(f) && !isLibrary(f);

/** The innermost frame of the app's code on a stack (innermost first); else the innermost that is not rloop's; else null. */
function topFrame(stack) {
  const frames = Array.isArray(stack) ? stack.filter((f) => f !== null && typeof f === 'object') : [];
  return frames.find(isApp) ?? frames.find((f) => !isOwn(f)) ?? null;
}

module.exports = { ROOT, OWN_SCHEME, isOwnFile, isOwn, isLibrary, isApp, topFrame, JSON_MARKER_URL, REGEX_MARKER_URL };

'use strict';
// Whose code a stack frame is: rloop's own (hidden from the app's stacks), a library's (Node's
// internals, node_modules, native code: folded), or the app's. Stack frames are
// `{ functionName, url, line, column }`; profile call frames (`url` only) work the same.

const path = require('node:path');
const { pathToFileURL } = require('node:url');

// rloop's js/ folder as this copy of rloop names it, and as any installed copy does (a report
// may be rendered by another checkout than the one that captured it).
const OWN_DIR = `${pathToFileURL(path.join(__dirname, '..')).href}/`;
const OWN_INSTALLED = /[/\\]node_modules[/\\]rloop[/\\]js[/\\]/;
const OWN_SCHEME = 'rloop:'; // code rloop compiles: its markers of builtins (rloop:json, rloop:regex)

const urlOf = (f) => (f && typeof f.url === 'string' ? f.url : '');

/** rloop's own frame: its scope and I/O wrappers, its markers of builtins. */
function isOwn(f) {
  const url = urlOf(f);
  return url.startsWith(OWN_DIR) || url.startsWith(OWN_SCHEME) || OWN_INSTALLED.test(url);
}

/** A library frame: native code, Node's own modules, anything under node_modules. */
function isLibrary(f) {
  const url = urlOf(f);
  return url === '' || url.startsWith('node:') || /[/\\]node_modules[/\\]/.test(url);
}

/** The app's own frame. */
const isApp = (f) => f !== null && typeof f === 'object' && !isOwn(f) && !isLibrary(f);

/** The innermost frame of the app's code on a stack (innermost first); else the innermost that is not rloop's; else null. */
function topFrame(stack) {
  const frames = Array.isArray(stack) ? stack.filter((f) => f !== null && typeof f === 'object') : [];
  return frames.find(isApp) ?? frames.find((f) => !isOwn(f)) ?? null;
}

module.exports = { isOwn, isLibrary, isApp, topFrame };

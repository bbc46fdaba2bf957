'use strict';
// The kind of work each node of a V8 CPU profile stands for, and the profile's tree as arrays.
//
// A frame's kind comes from what the frame is, never from its name alone (a user function named
// parseConfig is user code). Measured on Node 20, 22 and 24:
//   json     the frames js/capture/markers.js puts around JSON.parse/stringify: V8 reports no frame for
//            these C++ builtins, their time otherwise lands on the caller
//   regex    'RegExp: <source>' (script 0): regular expressions compiled to native code while
//            the profile ran; and js/capture/markers.js's frames around RegExp.prototype.test and the
//            Symbol.match/matchAll/replace/search/split methods, which also hold the time V8
//            runs a regex in its interpreter or in code compiled before the profile started
//   sync-io  *Sync functions of node:fs, node:internal/fs/*, node:child_process, and all under them,
//            except where Node loads a module: under its loader's frames (node:internal/modules/*:
//            require, Module._load, compileFunction…) and before any of the module's own code, the
//            reads are loading the app's code, node work, not a finding of the app's I/O
//   crypto   node:crypto and node:internal/crypto/* functions, and all under them (native hashing)
//   gc, idle, program   V8's '(garbage collector)', '(idle)' and '(program)' entries
//   native   other script-0 frames (C++ bindings); node: other node:* code and rloop's own
//            wrappers (js/own.js says which: its frames are never the app's); user: the rest
// A sample's time goes to the innermost json/regex/sync-io/crypto frame on its stack, else to
// its leaf's kind: native time under readFileSync is sync-io.

const { redactLink } = require('../redact');
const { isOwn, JSON_MARKER_URL, REGEX_MARKER_URL } = require('../own');

const { CATEGORIES } = require('../schema');
const [USER, NODE, NATIVE, JSON_, REGEX, CRYPTO, SYNC_IO, GC, PROGRAM, IDLE] = CATEGORIES.keys();
const MARKED = new Set([JSON_, REGEX, CRYPTO, SYNC_IO]); // kinds that claim the frames under them

const SYNC_IO_URL = /^node:(fs|internal\/fs\/.*|child_process|internal\/child_process)$/;
const MODULE_LOADER_URL = /^node:internal\/modules\//;
const REGEXP_PREFIX = 'RegExp: ';

function categoryOf({ functionName, url, scriptId }) {
  if (url === '' && String(scriptId) === '0') {
    switch (functionName) {
      case '(idle)': return IDLE;
      case '(garbage collector)': return GC;
      case '(program)':
      case '(root)': return PROGRAM;
      default: return functionName.startsWith(REGEXP_PREFIX) ? REGEX : NATIVE;
    }
  }
  if (url === JSON_MARKER_URL) return JSON_;
  if (url === REGEX_MARKER_URL) return REGEX;
  if (isOwn({ url })) return NODE;
  if (!url.startsWith('node:')) return USER;
  if (SYNC_IO_URL.test(url) && functionName.endsWith('Sync')) return SYNC_IO;
  if (url === 'node:crypto' || url.startsWith('node:internal/crypto/')) return CRYPTO;
  return NODE;
}

/** A call frame as a report's frame; one at its original location (js/capture/source-maps.js) keeps its `generated` one. */
function frameOf({ functionName, url, lineNumber, columnNumber, generated }) {
  return {
    functionName: functionName || '(anonymous)',
    url: redactLink(url), // a script loaded as 'x.mjs?token=…'
    line: lineNumber >= 0 ? lineNumber + 1 : null,
    column: columnNumber >= 0 ? columnNumber + 1 : null,
    ...(generated && { generated }),
  };
}

/** The profile's nodes as arrays by index, in an order where parents come before children. */
function indexNodes(nodes) {
  const n = nodes.length;
  const index = new Map();
  nodes.forEach((node, i) => index.set(node.id, i));
  const parent = new Int32Array(n).fill(-1);
  for (let i = 0; i < n; i++) {
    for (const child of nodes[i].children ?? []) parent[index.get(child)] = i;
  }
  const children = nodes.map((node) => (node.children ?? []).map((id) => index.get(id)));
  const order = [];
  for (let i = 0; i < n; i++) {
    if (parent[i] !== -1) continue;
    const stack = [i];
    while (stack.length > 0) {
      const j = stack.pop();
      order.push(j);
      for (const c of children[j]) stack.push(c);
    }
  }
  return { index, parent, order };
}

/** Functions (distinct call frames), each node's function, and each function's first node. */
function indexFunctions(nodes) {
  const byKey = new Map();
  const fnOf = new Int32Array(nodes.length);
  const first = [];
  nodes.forEach(({ callFrame: f }, i) => {
    const key = `${f.scriptId}\0${f.lineNumber}\0${f.columnNumber}\0${f.url}\0${f.functionName}`;
    let fn = byKey.get(key);
    if (fn === undefined) {
      fn = first.length;
      byKey.set(key, fn);
      first.push(i);
    }
    fnOf[i] = fn;
  });
  return { fnOf, first };
}

/**
 * Per node: the category its self time goes to, the marking frame it runs under (-1: none) and
 * the user frame that called that marking frame (-1: none), its nearest user frame, and whether
 * it is rloop's own.
 */
function classify(nodes, { parent, order }) {
  const n = nodes.length;
  const category = new Uint8Array(n);
  const mark = new Int32Array(n).fill(-1);
  const site = new Int32Array(n).fill(-1);
  const user = new Int32Array(n).fill(-1);
  const own = new Uint8Array(n); // rloop's wrappers: left out of stacks and the flame tree
  // Inside Node's module loader, up to the module's own code: its file reads are not sync-io.
  const loading = new Uint8Array(n);
  for (const i of order) {
    const p = parent[i];
    const found = categoryOf(nodes[i].callFrame);
    loading[i] = MODULE_LOADER_URL.test(nodes[i].callFrame.url) || (p >= 0 && loading[p] === 1 && found !== USER) ? 1 : 0;
    const kind = found === SYNC_IO && loading[i] === 1 ? NODE : found;
    own[i] = kind === NODE && isOwn(nodes[i].callFrame) ? 1 : 0;
    const inherited = p >= 0 && mark[p] >= 0;
    // The compiled regex under rloop's marker names the pattern; the caller stays the marker's.
    const pattern = kind === REGEX && inherited && category[p] === REGEX && nodes[mark[p]].callFrame.url === REGEX_MARKER_URL;
    if (MARKED.has(kind) && (!(inherited && category[p] === kind) || pattern)) {
      // A new kind of work starts here; nested frames of the same kind (readFileSync → readSync)
      // keep the outer one, the API the caller used.
      category[i] = kind;
      mark[i] = i;
      site[i] = pattern ? site[p] : p >= 0 ? user[p] : -1;
    } else if (inherited) {
      category[i] = category[p];
      mark[i] = mark[p];
      site[i] = site[p];
    } else {
      category[i] = kind;
    }
    user[i] = kind === USER ? i : p >= 0 ? user[p] : -1;
  }
  return { category, mark, site, user, own };
}

module.exports = {
  CATEGORIES, USER, NODE, NATIVE, JSON_, REGEX, CRYPTO, SYNC_IO, GC, PROGRAM, IDLE, REGEXP_PREFIX,
  categoryOf, frameOf, indexNodes, indexFunctions, classify,
};

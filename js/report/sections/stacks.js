'use strict';
// Call stacks as collapsible lists in calling order, callers first: the app's frames shown,
// library frames (Node's internals, node_modules, native code) folded and counted, rloop's own
// frames left out (its JSON.parse/stringify markers show as the builtins they stand for).

const { esc } = require('../escape');
const { frame, plural } = require('../format');
const { list } = require('../context');
const { isOwn, isLibrary } = require('../../own');

const MAX_FRAMES = 32;
const MARKER = /^rloop:/;

/** Where a library frame comes from, briefly: 'undici', 'node', 'native', a package name. */
function source(f) {
  const url = String(f.url ?? '');
  if (url === '') return 'native';
  if (url.includes('undici')) return 'undici';
  if (url.startsWith('node:')) return 'node';
  const m = /[/\\]node_modules[/\\]((?:@[^/\\]+[/\\])?[^/\\]+)/.exec(url);
  return m ? m[1].replace('\\', '/') : 'library';
}

/** The frames to show, innermost first: rloop's markers as builtins, its other frames left out. */
function visibleFrames(stack) {
  return list(stack).flatMap((f) => {
    if (MARKER.test(String(f.url ?? ''))) return [{ functionName: f.functionName, url: '', line: null, column: null }];
    return isOwn(f) ? [] : [f];
  });
}

function folded(frames) {
  const counts = new Map();
  for (const f of frames) counts.set(source(f), (counts.get(source(f)) ?? 0) + 1);
  const from = [...counts].sort((a, b) => b[1] - a[1]).map(([s, n]) => (counts.size > 1 ? `${s} ×${n}` : s)).join(', ');
  const items = frames.map((f) => `<li>${frame(f)}</li>`).join('');
  return `<li class="lib"><details><summary>${esc(plural(frames.length, 'library frame'))} <span class="muted">(${esc(from)})</span></summary><ol>${items}</ol></details></li>`;
}

/**
 * A closed <details> whose summary is `summaryHtml` and whose body lists `stack` (innermost
 * first, as reports hold stacks) callers first. `userFirst`: the stack holds the app's frames
 * first and then the rest (slow I/O stacks), so the library frames, which the app's innermost
 * frame called into, come last.
 */
function stackDetails(stack, summaryHtml, { userFirst = false } = {}) {
  const frames = visibleFrames(stack);
  let ordered;
  if (userFirst) {
    const app = frames.filter((f) => !isLibrary(f)).reverse();
    const lib = frames.filter((f) => isLibrary(f)).reverse();
    ordered = [...app, ...lib];
  } else {
    ordered = [...frames].reverse();
  }
  const cut = ordered.length > MAX_FRAMES ? ordered.length - MAX_FRAMES : 0;
  const shown = ordered.slice(cut); // the innermost: what ran
  const items = [];
  for (let i = 0; i < shown.length;) {
    if (!isLibrary(shown[i])) {
      items.push(`<li>${frame(shown[i])}</li>`);
      i++;
      continue;
    }
    let j = i;
    while (j < shown.length && isLibrary(shown[j])) j++;
    items.push(j - i === 1 ? `<li class="lib">${frame(shown[i])}</li>` : folded(shown.slice(i, j)));
    i = j;
  }
  const more = cut > 0 ? `<li class="muted">${esc(plural(cut, 'outer frame'))} not shown</li>` : '';
  return `<details class="stack"><summary>${summaryHtml}</summary><ol class="calls" aria-label="callers first">${more}${items.join('')}</ol></details>`;
}

module.exports = { stackDetails, visibleFrames };

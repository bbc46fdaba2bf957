'use strict';
// Everything in a report may have come from the app (scope names, keys, function names, URLs)
// or from a hand-edited file: every string goes through here on its way into the page.

const MAX_CHARS = 300; // a string longer than this is clipped, and says by how much
const HTML = /[&<>"']/g;
const ENTITY = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
// C0 and C1 controls except tab and newline: invisible, or garbling (ANSI escapes), so shown.
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g;
const JSON_UNSAFE = /[<>&\u2028\u2029]/g;

const hex = (c, width) => c.charCodeAt(0).toString(16).padStart(width, '0');

/** `value` as a string of at most `max` characters, never splitting a surrogate pair. */
function clip(value, max = MAX_CHARS) {
  const s = value === null || value === undefined ? '' : String(value);
  if (s.length <= max) return s;
  const end = /[\ud800-\udbff]/.test(s[max - 1]) ? max - 1 : max;
  return `${s.slice(0, end)}… (+${(s.length - end).toLocaleString('en-US')} chars)`;
}

/** Control characters as visible `\xNN`. */
function visible(s) {
  return s.replace(CONTROL, (c) => `\\x${hex(c, 2)}`);
}

/** Safe in HTML text and in quoted attribute values: clipped, controls shown, markup escaped. */
function esc(value, max) {
  return visible(clip(value, max)).replace(HTML, (c) => ENTITY[c]);
}

/** App text in its own bidi isolate: right-to-left names cannot reorder what surrounds them. */
function text(value, max) {
  return `<bdi>${esc(value, max)}</bdi>`;
}

/** JSON for a `<script type="application/json">` island: nothing in it can end the element. */
function jsonIsland(data) {
  return JSON.stringify(data).replace(JSON_UNSAFE, (c) => `\\u${hex(c, 4)}`);
}

module.exports = { clip, visible, esc, text, jsonIsland };

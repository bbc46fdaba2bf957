'use strict';
// Original positions from a source map's `mappings`, for a batch of generated positions, in one
// pass over the string: nothing is kept but the answers. A map decoded whole (node:module's
// SourceMap) holds an array per segment, many times the text: for a bundle's map, more memory
// than the app may spare, for a handful of frames. Pure: no I/O.
//
// A map is its `parts`: a plain map is one part at offset 0:0, an index map one per section,
// each `{ line, column, mappings, sources }` (0-based offset in the generated file; sources
// resolved to URLs, null where a map names none).

const DIGITS = new Int8Array(128).fill(-1);
[...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].forEach((c, i) => { DIGITS[c.charCodeAt(0)] = i; });
const COMMA = 44;
const SEMICOLON = 59;

/**
 * For each ask `[line, column]` (0-based, generated), the segment in force there: the last one at
 * or before it on its line, as `[source index, original line, original column]`; null where
 * none is, or it maps to no source (generated code of the compiler's own). A segment on an
 * earlier line never answers: that line's code is not the frame's. Throws on text that is no VLQ.
 */
function originalsIn(mappings, asks) {
  const order = asks.map((_, i) => i).sort((a, b) => asks[a][0] - asks[b][0] || asks[a][1] - asks[b][1]);
  const found = new Array(asks.length).fill(null);
  // The running state is in plain locals, captured by no closure, so V8 keeps it in registers.
  const fields = [0, 0, 0, 0, 0]; // of the segment being read, each relative to the one before
  let count = 0; // fields read of it
  let value = 0; // of the field being read
  let shift = 0;
  let k = 0; // asks settled, in order
  let line = 0;
  let column = 0;
  let source = 0;
  let originalLine = 0;
  let originalColumn = 0;
  let mapped = false; // whether the last segment on this line names a source
  for (let at = 0, n = mappings.length; at <= n && k < order.length; at++) {
    const c = at < n ? mappings.charCodeAt(at) : SEMICOLON;
    if (c !== COMMA && c !== SEMICOLON) {
      const digit = c < 128 ? DIGITS[c] : -1;
      // Positions past 2^30 are no file's: a longer value is no map's.
      if (digit < 0 || count === 5 || shift > 25) throw new Error(`mappings: not base64 VLQ at ${at}`);
      value |= (digit & 31) << shift;
      shift += 5;
      if ((digit & 32) === 0) {
        fields[count++] = value & 1 ? -(value >>> 1) : value >>> 1;
        value = 0;
        shift = 0;
      }
      continue;
    }
    if (shift !== 0) throw new Error(`mappings: a value cut short at ${at}`);
    if (count > 0) {
      // A segment: the asks on this line before it are the previous segment's.
      column += fields[0];
      if (asks[order[k]][0] === line) k = settle(asks, order, k, line, column, mapped, source, originalLine, originalColumn, found);
      mapped = count >= 4;
      if (mapped) {
        source += fields[1];
        originalLine += fields[2];
        originalColumn += fields[3];
      }
      count = 0;
    }
    if (c === SEMICOLON) {
      k = settle(asks, order, k, line, Infinity, mapped, source, originalLine, originalColumn, found);
      line++;
      column = 0;
      mapped = false;
    }
  }
  return found;
}

/**
 * Answers with the segment in force (if `mapped`) the asks from the `k`-th in order that are on
 * `line` before `upTo`, and leaves those on earlier lines unanswered; returns the first ask not
 * settled.
 */
function settle(asks, order, k, line, upTo, mapped, source, originalLine, originalColumn, found) {
  for (; k < order.length; k++) {
    const ask = asks[order[k]];
    if (ask[0] > line || (ask[0] === line && ask[1] >= upTo)) break;
    if (ask[0] === line && mapped) found[order[k]] = [source, originalLine, originalColumn];
  }
  return k;
}

/**
 * For each ask `[line, column]` (0-based, generated), `{ url, line, column }` (0-based, original)
 * in a map's `parts`; null where the map says nothing of it.
 */
function originals(parts, asks) {
  const found = new Array(asks.length).fill(null);
  const byPart = parts.map(() => ({ asks: [], at: [] }));
  asks.forEach(([line, column], i) => {
    // The section the position falls in: the last that starts at or before it.
    let p = parts.length - 1;
    while (p >= 0 && (parts[p].line > line || (parts[p].line === line && parts[p].column > column))) p--;
    if (p < 0) return;
    byPart[p].asks.push([line - parts[p].line, line === parts[p].line ? column - parts[p].column : column]);
    byPart[p].at.push(i);
  });
  parts.forEach((part, p) => {
    if (byPart[p].asks.length === 0) return;
    originalsIn(part.mappings, byPart[p].asks).forEach((s, j) => {
      const url = s === null ? null : part.sources[s[0]];
      if (typeof url === 'string' && s[1] >= 0 && s[2] >= 0) found[byPart[p].at[j]] = { url, line: s[1], column: s[2] };
    });
  });
  return found;
}

/** A source map's JSON as `parts`, sources resolved against `base` (the map's URL); throws what is wrong with it. */
function partsOf(map, base) {
  if (map === null || typeof map !== 'object' || map.version !== 3) throw new Error('its map is not a version 3 source map');
  if (!Array.isArray(map.sections)) return [{ line: 0, column: 0, ...plainPart(map, base) }];
  const parts = map.sections.map((s) => {
    const { line, column } = s?.offset ?? {};
    if (!Number.isInteger(line) || !Number.isInteger(column) || line < 0 || column < 0) throw new Error('its map has a section without its offset');
    if (Array.isArray(s.map?.sections)) throw new Error('its map has a section that is itself an index map');
    return { line, column, ...plainPart(s.map, base) };
  });
  return parts.sort((a, b) => a.line - b.line || a.column - b.column);
}

function plainPart(map, base) {
  if (typeof map?.mappings !== 'string' || !Array.isArray(map.sources)) throw new Error('its map has no mappings or sources');
  const root = typeof map.sourceRoot === 'string' && map.sourceRoot !== '' ? map.sourceRoot.replace(/\/?$/, '/') : '';
  return { mappings: map.mappings, sources: map.sources.map((s) => (typeof s === 'string' ? resolved(root + s, base) : null)) };
}

function resolved(source, base) {
  try {
    return new URL(source, base).href;
  } catch {
    return source; // neither a URL nor relative to one: as the map says it
  }
}

module.exports = { originals, partsOf };

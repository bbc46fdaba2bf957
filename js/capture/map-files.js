'use strict';
// A script's source map on disk, for js/capture/source-maps.js: the one its last
// `//# sourceMappingURL=` comment names, a data: URL or a file, else `<script>.map` beside it.
// Only regular files under the script's folder or the working directory, at most MAX_MAP_BYTES
// (or the smaller size a caller asks: a map larger than that throws an error whose `limit` is it):
// never the network, never a device or a FIFO. What is wrong with one is thrown as the reason the
// report gives, never quoting the comment (its URL may hold a token).

const fs = require('node:fs');
const path = require('node:path');
const { cwd } = require('node:process'); // the process's own, whatever the app puts at global.process
const { fileURLToPath, pathToFileURL } = require('node:url');
const { partsOf } = require('./mappings');

const MAX_MAP_BYTES = 32 * 1024 * 1024;
const TAIL_BYTES = 64 * 1024; // of a script, read for its comment
const REFERENCE = /\/\/[#@][ \t]+sourceMappingURL=[ \t]*(\S+)/g;
const XSSI = /^\)\]\}'[^\n]*\n/; // a prefix the format allows, to keep a map from running as script

/**
 * A script's map as `parts` (js/capture/mappings.js), null when it names none; throws why one
 * cannot be read, or that it is larger than `maxBytes` (at most MAX_MAP_BYTES).
 */
function readMap(file, size, maxBytes = MAX_MAP_BYTES) {
  const reference = referenceIn(file, size, maxBytes);
  if (reference === null) {
    const beside = `${file}.map`;
    if (!fs.statSync(beside, { throwIfNoEntry: false })?.isFile()) return null;
    return parsed(readFile(beside, maxBytes), pathToFileURL(beside).href);
  }
  if (/^data:/i.test(reference)) return parsed(inline(reference, maxBytes), pathToFileURL(file).href);
  let url;
  try {
    url = new URL(reference, pathToFileURL(file));
  } catch {
    throw new Error('its sourceMappingURL is no URL');
  }
  if (url.protocol !== 'file:') throw new Error(`its map is at a ${url.protocol} URL: only files are read`);
  const mapFile = fileURLToPath(url);
  if (!within(mapFile, path.dirname(file)) && !within(mapFile, cwd())) throw new Error('its map is outside the script\'s folder and the working directory');
  return parsed(readFile(mapFile, maxBytes), url.href);
}

/** Base64 characters of a map of `bytes`. */
const inlineChars = (bytes) => Math.ceil(bytes / 3) * 4;

/** Why a map is not read: larger than `limit` bytes, the error's `limit`. */
function larger(limit, what = 'its map') {
  return Object.assign(new Error(`${what} is larger than ${limit} bytes`), { limit });
}

/** The URL in the script's last sourceMappingURL comment, or null. */
function referenceIn(file, size, maxBytes) {
  let text = readEnd(file, size, TAIL_BYTES);
  // A last line longer than the tail may be an inline map's comment: read as much as one can be.
  if (size > TAIL_BYTES && !text.trimEnd().includes('\n')) {
    const bytes = inlineChars(maxBytes) + TAIL_BYTES;
    text = readEnd(file, size, bytes);
    // Asked for less than the most: a line longer still may be an inline map larger than asked.
    if (maxBytes < MAX_MAP_BYTES && size > bytes && !text.trimEnd().includes('\n')) throw larger(maxBytes);
  }
  let last = null;
  for (const m of text.matchAll(REFERENCE)) last = m[1];
  return last;
}

function inline(url, maxBytes) {
  const comma = url.indexOf(',');
  const type = comma < 0 ? [] : url.slice(5, comma).toLowerCase().split(';');
  if (type[0] !== 'application/json') throw new Error('its inline map is not application/json');
  const body = url.slice(comma + 1);
  if (body.length > inlineChars(maxBytes)) throw larger(maxBytes, 'its inline map');
  try {
    return type.includes('base64') ? Buffer.from(body, 'base64').toString('utf8') : decodeURIComponent(body);
  } catch {
    throw new Error('its inline map is not URL-encoded');
  }
}

function parsed(text, base) {
  let map;
  try {
    map = JSON.parse(String(text).replace(XSSI, ''));
  } catch {
    throw new Error('its map is not JSON');
  }
  return partsOf(map, base);
}

/** A regular file's bytes, at most `maxBytes`. */
function readFile(file, maxBytes) {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat) throw new Error('its map file does not exist');
  if (!stat.isFile()) throw new Error('its map is not a regular file');
  if (stat.size > maxBytes) throw larger(maxBytes);
  return readAt(file, 0, stat.size);
}

/** The last `bytes` of a file of `size` bytes, as text. */
function readEnd(file, size, bytes) {
  const n = Math.min(size, bytes);
  return readAt(file, size - n, n).toString('utf8');
}

function readAt(file, position, length) {
  // Non-blocking: a file that became a FIFO since it was looked at never holds the thread.
  const fd = fs.openSync(file, fs.constants.O_RDONLY | (fs.constants.O_NONBLOCK ?? 0));
  try {
    const buffer = Buffer.alloc(length);
    return buffer.subarray(0, fs.readSync(fd, buffer, 0, length, position));
  } finally {
    fs.closeSync(fd);
  }
}

function within(file, dir) {
  const rel = path.relative(dir, file);
  return rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel);
}

module.exports = { readMap, MAX_MAP_BYTES };

'use strict';
// The smallest WebSocket client (RFC 6455) the inspector needs: text messages over a plain TCP
// connection, pings answered, fragments joined. Written here rather than taken from npm: the
// inspector's loopback socket needs none of the rest, and Node 20's WebSocket is behind a flag.

const net = require('node:net');
const crypto = require('node:crypto');
const { EventEmitter } = require('node:events');

const GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';
const TEXT = 0x1;
const CLOSE = 0x8;
const PING = 0x9;
const PONG = 0xa;
const MAX_MESSAGE = 1 << 30; // a report with a large profile is tens of MB; refuse beyond reason

class WebSocket extends EventEmitter {
  #socket;
  #chunks = [];
  #buffered = 0;
  #parts = []; // fragments of the message being received
  #closed = false;

  /** This end's TCP port (the target's watchdog looks for the connection from it). */
  get localPort() {
    return this.#socket.localPort;
  }

  constructor(socket) {
    super();
    this.#socket = socket;
    socket.on('data', (chunk) => this.#data(chunk));
    socket.on('error', (e) => this.#close(e));
    socket.on('close', () => this.#close(null));
  }

  /** Opens `url` (ws://host:port/path); resolves once the server accepted the upgrade. */
  static connect(url) {
    const u = new URL(url);
    if (u.protocol !== 'ws:') return Promise.reject(new Error(`not a ws:// URL: ${url}`));
    const key = crypto.randomBytes(16).toString('base64');
    const accept = crypto.createHash('sha1').update(key + GUID).digest('base64');
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: u.hostname.replace(/^\[|\]$/g, ''), port: Number(u.port) || 80 });
      let head = Buffer.alloc(0);
      const fail = (e) => { socket.destroy(); reject(e); };
      const onData = (chunk) => {
        head = Buffer.concat([head, chunk]);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        socket.off('data', onData).off('error', fail);
        const lines = head.subarray(0, end).toString('latin1').split('\r\n');
        const headers = new Map(lines.slice(1).map((l) => [l.slice(0, l.indexOf(':')).trim().toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        if (!/^HTTP\/1\.1 101 /.test(lines[0]) || headers.get('sec-websocket-accept') !== accept) {
          return fail(new Error(`no WebSocket upgrade at ${url}: ${lines[0]}`));
        }
        const ws = new WebSocket(socket);
        resolve(ws);
        if (head.length > end + 4) ws.#data(head.subarray(end + 4));
      };
      socket.on('data', onData).on('error', fail);
      socket.on('connect', () => {
        socket.write(`GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${key}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      });
    });
  }

  send(text) {
    if (!this.#closed) this.#socket.write(frame(TEXT, Buffer.from(text)));
  }

  close() {
    if (this.#closed) return;
    const socket = this.#socket;
    socket.end(frame(CLOSE, Buffer.from([0x03, 0xe8]))); // 1000: normal closure
    // A peer that never closes its side (a target stopped in its inspector's close) must not keep this process.
    const cut = setTimeout(() => socket.destroy(), 1000);
    socket.once('close', () => clearTimeout(cut));
  }

  get closed() {
    return this.#closed;
  }

  #close(error) {
    if (this.#closed) return;
    this.#closed = true;
    this.#socket.destroy();
    this.emit('close', error);
  }

  /** Joins chunks only once a whole frame is there: a large message is copied once, not per chunk. */
  #data(chunk) {
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
    for (;;) {
      const head = this.#peek(Math.min(this.#buffered, 14));
      if (head.length < 2) return;
      let len = head[1] & 0x7f;
      let offset = 2;
      if (len === 126) {
        if (head.length < 4) return;
        len = head.readUInt16BE(2);
        offset = 4;
      } else if (len === 127) {
        if (head.length < 10) return;
        len = Number(head.readBigUInt64BE(2));
        offset = 10;
      }
      if (head[1] & 0x80) offset += 4; // a server never masks, but a mask is skipped if it did
      if (len > MAX_MESSAGE) return this.#close(new Error('WebSocket message too large'));
      if (this.#buffered < offset + len) return;
      const all = this.#peek(this.#buffered);
      const payload = all.subarray(offset, offset + len);
      this.#chunks = [all.subarray(offset + len)];
      this.#buffered -= offset + len;
      this.#frame(head[0] & 0x80, head[0] & 0x0f, payload);
      if (this.#closed) return;
    }
  }

  #peek(n) {
    if (this.#chunks.length > 1) this.#chunks = [Buffer.concat(this.#chunks)];
    return this.#chunks[0].subarray(0, n);
  }

  #frame(fin, opcode, payload) {
    if (opcode === PING) return this.#socket.write(frame(PONG, payload));
    if (opcode === CLOSE) return this.#close(null);
    if (opcode === PONG) return undefined;
    this.#parts.push(Buffer.from(payload));
    if (!fin) return undefined;
    const text = Buffer.concat(this.#parts).toString('utf8');
    this.#parts = [];
    this.emit('message', text);
    return undefined;
  }
}

/** One final, masked frame (a client masks everything it sends). */
function frame(opcode, payload) {
  const len = payload.length;
  const head = Buffer.alloc(len < 126 ? 6 : len < 65536 ? 8 : 14);
  head[0] = 0x80 | opcode;
  let at = 2;
  if (len < 126) head[1] = 0x80 | len;
  else if (len < 65536) {
    head[1] = 0x80 | 126;
    head.writeUInt16BE(len, 2);
    at = 4;
  } else {
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(len), 2);
    at = 10;
  }
  const mask = crypto.randomBytes(4);
  mask.copy(head, at);
  const body = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i++) body[i] = payload[i] ^ mask[i & 3];
  return Buffer.concat([head, body]);
}

module.exports = { WebSocket };

'use strict';
// A hostile client of the metrics endpoint at argv[2], in its own process: slowloris
// connections, garbage, then 1 000 parallel scrapes. Prints the scrapes' outcomes as JSON.

const net = require('node:net');
const { scrape } = require('./metrics-helpers');

const port = Number(process.argv[2]);
const slow = [];
for (let i = 0; i < 300; i++) {
  const s = net.connect(port, '127.0.0.1');
  s.on('error', () => {});
  s.write('GET /metrics HTTP/1.1\r\nX-Slow: ');
  slow.push(s);
}
const garbage = Array.from({ length: 50 }, (_, i) => new Promise((resolve) => {
  const s = net.connect(port, '127.0.0.1', () => s.end(i % 2 ? Buffer.alloc(20000, 0xff) : '\x16\x03\x01\x00\xa5\r\n\r\n'));
  s.resume().on('error', resolve).on('close', resolve);
}));
Promise.all(Array.from({ length: 1000 }, () => scrape(port).then((r) => r.status, (e) => e.code ?? e.message))).then(async (outcomes) => {
  await Promise.all(garbage);
  for (const s of slow) s.destroy();
  console.log(JSON.stringify(outcomes));
});

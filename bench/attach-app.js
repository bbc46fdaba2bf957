'use strict';
// The target of bench/attach.js: a plain HTTP server (no rloop in it) that parses and builds
// JSON for each request, with a timer and a promise per request as apps have. Says its port over
// IPC, and answers 'cpu' with its process.cpuUsage() (µs).

const http = require('node:http');

const body = JSON.stringify({ items: Array.from({ length: 200 }, (_, i) => ({ id: i, name: `item ${i}`, tags: ['a', 'b'] })) });

const server = http.createServer((req, res) => {
  setTimeout(async () => {
    const data = await Promise.resolve(JSON.parse(body));
    res.end(JSON.stringify(data.items.filter((x) => x.id % 2)));
  }, 1);
});

server.listen(0, '127.0.0.1', () => process.send({ port: server.address().port }));
process.on('message', (m) => {
  if (m === 'cpu') process.send({ cpu: process.cpuUsage() });
});
process.on('disconnect', () => process.exit(0));

'use strict';
// The HTTP load generator, a separate process: keep-alive connections, bounded concurrency,
// a fixed number of requests spread over the routes. Plain node, so CI needs nothing extra.
// Protocol with the server (IPC): the warm-up requests, then 'warmed'; for each 'go', one
// batch, answered with { failed }.

const http = require('node:http');

const [port, warm, perBatch, batches, concurrency, routes] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

function get(i) {
  return new Promise((resolve) => {
    http
      .get({ agent, host: '127.0.0.1', port, path: `/r${i % routes}` }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode === 200));
      })
      .on('error', () => resolve(false));
  });
}

/** `n` requests, `concurrency` at a time; returns how many failed. */
async function load(n) {
  let next = 0;
  let failed = 0;
  const worker = async () => {
    while (next < n) if (!(await get(next++))) failed++;
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return failed;
}

let warmFailed;
let left = batches;
process.on('message', async () => {
  const failed = (await load(perBatch)) + warmFailed;
  warmFailed = 0;
  process.send({ failed });
  if (--left === 0) {
    agent.destroy();
    process.disconnect();
  }
});
load(warm).then((failed) => {
  warmFailed = failed;
  process.send('warmed');
});

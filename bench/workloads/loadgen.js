'use strict';
// The HTTP load generator, a separate process: keep-alive connections, bounded concurrency,
// a fixed number of requests spread over the routes. Plain node, so CI needs nothing extra.
// Protocol with the server (IPC): warm up, send 'warmed', wait for 'go', run the timed
// requests, send { ns, failed }.

const http = require('node:http');
const { once } = require('node:events');

const [port, warm, timed, concurrency, routes] = process.argv.slice(2).map(Number);
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

(async () => {
  const warmFailed = await load(warm);
  process.send('warmed');
  await once(process, 'message');
  const t0 = process.hrtime.bigint();
  const failed = warmFailed + (await load(timed));
  process.send({ ns: Number(process.hrtime.bigint() - t0), failed });
  agent.destroy();
  process.disconnect();
})();

'use strict';
// Scraping and reading the Prometheus text format, for the metrics tests.

const http = require('node:http');

/** GET http://127.0.0.1:`port``path`: `{ status, headers, body }`. No agent: one connection each. */
function scrape(port, path = '/metrics') {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path, agent: false, timeout: 10000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d) => { body += d; }).on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
      res.on('error', reject).on('close', () => reject(new Error('closed before the end of the response')));
    });
    req.on('timeout', () => req.destroy(new Error('timeout'))).on('error', reject);
  });
}

/** Samples of an exposition: `[{ name, labels, value }]`. */
function parse(text) {
  const out = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k] = v.replace(/\\(.)/g, (_, c) => (c === 'n' ? '\n' : c));
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The value of the one sample of `name` whose labels include `labels`; throws if none or several. */
function series(samples, name, labels = {}) {
  const found = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0].value;
}

module.exports = { scrape, parse, series };

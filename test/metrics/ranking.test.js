'use strict';
// The cardinality guard's counters go up only while the top-N ranking changes between scrapes:
// a scope that enters the top goes on from what its own series had, one that leaves it stops,
// (other) never gives time back, and every busy ms is in exactly one series.

const test = require('node:test');
const assert = require('node:assert');
const promClient = require('prom-client');
const rloop = require('../..');
const { busy, sleep } = require('../fixtures/helpers');
const { scrape, parse } = require('../fixtures/metrics-helpers');

const COUNTERS = ['rloop_scope_busy_seconds_total', 'rloop_scope_calls_total', 'rloop_scopes_folded_total', 'nodejs_eventloop_time_seconds_total'];

/** Follows each counter series across reads: throws if one goes down, even after a gap. */
function follower(who) {
  const last = new Map();
  return (samples) => {
    for (const s of samples.filter((x) => COUNTERS.includes(x.name) && x.labels.thread === '0')) {
      const id = `${s.name}${JSON.stringify(s.labels)}`;
      assert.ok(!(last.get(id) > s.value), `${who}: ${id} went down from ${last.get(id)} to ${s.value}`);
      last.set(id, s.value);
    }
    return last;
  };
}

test('counters go up only while the top scopes change between scrapes; every busy ms is in one series', async () => {
  const mon = rloop.start({ windowMs: 100, metrics: { port: 0, topScopes: 2 } });
  const registry = new promClient.Registry();
  const prom = rloop.promClient(registry, { topScopes: 2 });
  try {
    const endpoint = follower('endpoint');
    const adapter = follower('prom-client');
    const shownAt = [];
    let seen;
    let m;
    // Each phase makes another scope the busiest since start.
    for (const [scope, ms] of [['a', 150], ['b', 100], ['c', 20], ['c', 400], ['b', 700], ['a', 1200]]) {
      rloop.scope(scope, () => busy(ms));
      await sleep(150); // a window closes: the last window's gauges too
      m = parse((await scrape(mon.metrics.port)).body);
      seen = endpoint(m);
      adapter(parse(await registry.metrics()));
      shownAt.push(m.filter((s) => s.name === 'rloop_scope_busy_seconds_total').map((s) => s.labels.scope));
    }
    const busiest = ['a', 'a', 'a', 'c', 'b', 'a'];
    busiest.forEach((scope, i) => assert.ok(shownAt[i].includes(scope), `scrape ${i}: ${scope} shown, got ${shownAt[i]}`));
    assert.ok(shownAt.every((s) => s.length <= 3), `top 2 + (other): ${JSON.stringify(shownAt)}`);
    assert.ok(shownAt.some((s) => s.includes('(other)')), 'some time was folded');
    // Series that left the top stay at their last value: with them, the series sum to the
    // thread's active time of the last scrape (the same totals), each ms once.
    let sum = 0;
    for (const [id, value] of seen) if (id.startsWith('rloop_scope_busy_seconds_total')) sum += value;
    const active = m.find((s) => s.name === 'nodejs_eventloop_time_seconds_total' && s.labels.nodejs_eventloop_state === 'active').value;
    assert.ok(Math.abs(sum - active) < 1e-6, `series sum ${sum} s, active ${active} s`);
    assert.ok(m.find((s) => s.name === 'rloop_scopes_folded_total').value >= 1);
  } finally {
    prom.stop();
    mon.stop();
  }
});

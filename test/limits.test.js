'use strict';
// Reads work at every allowed size: bulk data crosses N-API as JSON, which has no value limit.

const test = require('node:test');
const assert = require('node:assert');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const rloop = require('..');
const { setTimeout: sleep } = require('node:timers/promises');

const SCOPES = 50_000; // ≈ 28 JS values a keyed scope a window: 1.4 M a window

test('reads of 50 000 keyed scopes over several windows hold all of them', async () => {
  const mon = rloop.start({ windowMs: 150, maxScopes: SCOPES, history: 60 });
  try {
    const end = Date.now() + 1500;
    let n = 0;
    while (Date.now() < end) {
      for (let i = 0; i < SCOPES; i++) rloop.scope(`s${i}`, () => {}, { key: `k${n++}` });
      await sleep(20);
    }
    await sleep(200);
    const history = mon.history();
    assert.ok(history.length >= 3, `windows: ${history.length}`);
    const entries = history.reduce((n, w) => n + w.scopes.length, 0);
    assert.ok(entries >= SCOPES, `the windows hold ${entries} scope entries`); // 1.4 M values and more
    const keyed = history.flatMap((w) => w.scopes).find((s) => s.keys);
    assert.ok(keyed.keys.count >= 1 && keyed.keys.worst.length >= 1, JSON.stringify(keyed));
    const totals = mon.totals();
    assert.strictEqual(totals.scopes.length, SCOPES);
    assert.ok(totals.scopes.every((s) => s.calls >= 1));
    const since = mon.elu().seq;
    for (let i = 0; i < SCOPES; i++) rloop.scope(`s${i}`, () => {}, { key: `k${n++}` });
    // Read at once: however many windows closed while the loop ran (a loaded machine), the
    // current window and the closed ones since it began hold every scope.
    const live = mon.elu();
    assert.strictEqual(live.windowMs, 150);
    const seen = new Set(live.scopes.map((s) => s.name));
    for (const w of mon.history()) if (w.seq >= since) for (const s of w.scopes) seen.add(s.name);
    assert.strictEqual(seen.size, SCOPES, `scopes in windows ${since}…${live.seq}`);
    const [me] = rloop.threads().filter((t) => t.windowMs === 150);
    assert.ok(me.last.seq >= 3 && Array.isArray(me.current.scopes));
  } finally {
    mon.stop();
  }
});

test('an app with 50 000 keyed scopes and a window listener runs to its end', () => {
  const out = execFileSync(process.execPath, [path.join(__dirname, 'fixtures', 'many-scopes.js'), String(SCOPES), '1500'], { encoding: 'utf8', timeout: 120_000 });
  const r = JSON.parse(out);
  assert.ok(r.windows >= 3 && r.kept >= r.windows, out);
  assert.ok(r.widest >= SCOPES / 10, out);
});

'use strict';
// Bounded memory: nothing rloop keeps grows with the number of async operations.

const test = require('node:test');
const assert = require('node:assert');
const { execFileSync } = require('node:child_process');
const path = require('node:path');
const { assertValidReport } = require('../fixtures/report');

test('10 M async operations, unawaited promises among them: RSS grows < 10 MB after GC', { timeout: 600_000 }, (t) => {
  const out = execFileSync(process.execPath, ['--expose-gc', path.join(__dirname, '..', 'fixtures', 'memory-churn.js'), '10000000'], { encoding: 'utf8' });
  const r = JSON.parse(out);
  t.diagnostic(`${r.resources} async resources: RSS +${r.rssMb.toFixed(2)} MB, heap used +${r.heapUsedMb.toFixed(2)} MB`);
  assert.ok(r.resources >= 10_000_000);
  assert.strictEqual(r.scopes, 10);
  assert.ok(r.rssMb < 10, `RSS grew ${r.rssMb.toFixed(2)} MB`);
  assert.ok(r.heapUsedMb < 1, `heap used grew ${r.heapUsedMb.toFixed(2)} MB`);
});

test('an Infinity capture at windowMs 10 keeps the heap flat; its windows cover the whole span', { timeout: 120_000 }, (t) => {
  const fixture = path.join(__dirname, '..', 'fixtures', 'long-capture.js');
  const out = execFileSync(process.execPath, ['--expose-gc', fixture, '20000', 'rloop', 'report'], { encoding: 'utf8', maxBuffer: 1 << 28 });
  const r = JSON.parse(out);
  t.diagnostic(`heap +${r.heapUsedMb.toFixed(2)} MB, RSS +${r.rssMb.toFixed(2)} MB; ${r.windows} windows for ${r.merged}`);
  assertValidReport(r.report);
  assert.ok(r.heapUsedMb < 3, `heap used grew ${r.heapUsedMb.toFixed(2)} MB over 15 s`);
  assert.ok(r.rssMb < 40, `RSS grew ${r.rssMb.toFixed(2)} MB over 15 s`);
  assert.ok(r.windows <= 1000 && r.windows >= 500, `${r.windows} windows`);
  assert.ok(r.merged > 1000, `the windows stand for ${r.merged} closed windows`);
  assert.ok(r.report.elu.windows.some((w) => w.merged >= 2));
  assert.ok(Math.abs(r.gapStartMs) < 50 && Math.abs(r.gapEndMs) < 50, `uncovered: ${r.gapStartMs} ms at the start, ${r.gapEndMs} at the end`);
  const covered = r.report.elu.windows.reduce((ms, w) => ms + w.durationMs, 0);
  assert.ok(Math.abs(covered - r.durationMs) < 100, `windows cover ${covered} of ${r.durationMs} ms`);
});

test('names past maxScopes are not kept: 200 000 of them grow the heap < 4 MB', () => {
  const rloop = require('../..');
  const mon = rloop.start({ maxScopes: 100, lag: false, io: false });
  try {
    for (let i = 0; i < 1000; i++) rloop.scope(`warm-${i}`, () => {});
    global.gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < 200_000; i++) rloop.scope(`name-${i}-${'x'.repeat(100)}`, () => {});
    global.gc();
    const grew = (process.memoryUsage().heapUsed - before) / 2 ** 20;
    const totals = mon.totals();
    assert.ok(grew < 4, `heap grew ${grew.toFixed(2)} MB`);
    assert.strictEqual(totals.scopesOverflowed, 200_000 + 1000 - 100, 'every registration past the cap is counted');
    assert.ok(totals.scopes.find((s) => s.name === '(other)').calls >= 200_000);
  } finally {
    mon.stop();
  }
});

// Node 26's V8 answers a Map lookup of a fresh string by internalizing it (the string becomes a
// thin one, its copy kept in old space and the string table): a million names past the cap cost
// +34 MB that way (bench/memory.md, tenth pass). Once full, the addon looks names up.
test('past maxScopes a name is looked up without V8 keeping a copy; names seen before keep their scope', () => {
  const script = `const rloop = require(${JSON.stringify(path.join(__dirname, '..', '..'))});
    const mon = rloop.start({ maxScopes: 3, lag: false, io: false });
    for (const n of ['a', 'b', 'c', 'd']) rloop.scope(n, () => {});
    const fresh = (p) => p + '-' + (1000 + Math.floor(Math.random() * 1000));
    const name = fresh('new');
    rloop.scope(name, () => {});
    %DebugPrint(name);
    const seen = ['b', 'new'].map((p) => rloop.scope(p === 'b' ? ['b'].join('') : fresh(p), () => rloop.current().scope));
    const { scopesOverflowed } = mon.totals();
    mon.stop();
    console.log(JSON.stringify({ seen, scopesOverflowed }));`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '-e', script], { encoding: 'utf8' });
  assert.doesNotMatch(out, /THIN_/, 'the name was internalized');
  assert.deepStrictEqual(JSON.parse(out.trim().split('\n').pop()), { seen: ['b', '(other)'], scopesOverflowed: 3 });
});

test('a history of wide windows is bounded: fewer windows kept, the rest counted in historyDropped', async () => {
  const rloop = require('../..');
  const { setTimeout: sleep } = require('node:timers/promises');
  const names = Array.from({ length: 10_000 }, (_, i) => `wide-${i}`);
  const mon = rloop.start({ windowMs: 100, history: 1000, maxScopes: 10_000, lag: false, io: false });
  try {
    for (let round = 0; round < 10; round++) {
      for (const n of names) rloop.scope(n, () => {}); // every name charged in one window
      await sleep(110);
    }
    const before = mon.liveWindow();
    const kept = mon.history();
    const after = mon.liveWindow(); // windows may close between the reads
    const dropped = kept[0].seq - 1; // from the front only, each counted
    assert.ok(dropped > 0, 'windows of 10 000 scopes do not all fit');
    assert.ok(before.historyDropped <= dropped && dropped <= after.historyDropped, `${before.historyDropped} <= ${dropped} <= ${after.historyDropped}`);
    assert.ok(kept.length >= 2, `${kept.length} windows kept`);
    assert.ok(kept.at(-1).seq >= before.last.seq && kept.at(-1).seq <= after.last.seq, 'the newest windows are kept');
    assert.ok(kept.every((w, i) => i === 0 || w.seq === kept[i - 1].seq + 1));
    assert.ok(kept.some((w) => w.scopes.length >= 5_000), 'wide windows are among them');
  } finally {
    mon.stop();
  }
});

test('a live read of 10 000 keyed scopes builds no tree: liveWindow(), threads() and totals() peak near their JSON', { timeout: 120_000 }, (t) => {
  const out = execFileSync(process.execPath, ['--expose-gc', path.join(__dirname, '..', 'fixtures', 'read-peaks.js')], { encoding: 'utf8' });
  const r = JSON.parse(out);
  assert.strictEqual(r.keyed, 10_000);
  for (const read of ['liveWindow', 'threads', 'totals']) {
    const { jsonMb, readMb } = r[read];
    t.diagnostic(`${read}(): JSON ${jsonMb.toFixed(1)} MB, RSS peak of the read (not parsed) ${readMb.toFixed(1)} MB`);
    // What a read needs: the window measured, its JSON written (a buffer grown by doubling) and
    // copied into a JS string (≈ 3–4 × the JSON). A serde_json Value tree in between made it 12–25 ×.
    const allowed = 5 * jsonMb + 4;
    assert.ok(jsonMb > 0.5, `${read}() wrote ${jsonMb.toFixed(2)} MB of JSON`);
    assert.ok(readMb <= allowed, `${read}() peaked ${readMb.toFixed(1)} MB over its start, more than ${allowed.toFixed(1)}`);
  }
});

test('windows of 5 000 keyed scopes keep their key statistics in a few blocks: the history holds three', async (t) => {
  const rloop = require('../..');
  const mon = rloop.start({ windowMs: 400, lag: false, io: false });
  const keyed = (w) => w.scopes.filter((s) => s.keys?.worst.length > 0);
  // A window of the size under test: each of the 5 000 scopes charged one key. A round that a
  // window's close splits (a loaded machine descheduling it) leaves windows with two keys for
  // some scopes, larger than the size the budget is measured for.
  const clean = (w) => keyed(w).length === 5_000 && keyed(w).every((s) => s.keys.count === 1);
  let k = 0;
  const round = () => {
    for (let i = 0; i < 5_000; i++) rloop.scope(`scope-${i}`, () => {}, { key: `key-${k++ % 1e6}` });
  };
  try {
    // One round just after each close: every window charges all 5 000 scopes, one key each.
    // Done once five wide windows have closed, the last three clean. The window timer is
    // unref'd: the timeout keeps the test alive.
    await new Promise((resolve, reject) => {
      const timeout = setTimeout(() => reject(new Error('five wide windows, the last three clean, did not come within 60 s')), 60_000);
      let wide = 0;
      let cleanInRow = 0;
      mon.on('window', (w) => {
        if (keyed(w).length >= 5_000) wide++;
        cleanInRow = clean(w) ? cleanInRow + 1 : 0;
        if (wide >= 5 && cleanInRow >= 3) resolve(clearTimeout(timeout));
        else round();
      });
      round();
    });
    const kept = mon.history();
    t.diagnostic(`kept: ${kept.map((w) => `${w.seq}: ${keyed(w).length} keyed${clean(w) ? '' : ' (not clean)'}`).join(', ')}; historyDropped ${mon.liveWindow().historyDropped}`);
    // The wide windows kept are the last three clean ones. A window may close after them before
    // this read (their event comes late behind a round of 5 000 calls): no round ran in it, so
    // it holds no keyed scope, and small, it fits the budget beside them.
    const last = kept.findLastIndex((w) => keyed(w).length >= 5_000);
    const wide = kept.slice(0, last + 1);
    assert.ok(wide.length >= 3 && wide.slice(-3).every(clean), `kept ${kept.map((w) => keyed(w).length).join(', ')} keyed scopes`);
    assert.deepEqual(kept.slice(last + 1).map((w) => keyed(w).length).filter((n) => n > 0), [], 'no round after the last wide window');
    assert.ok(mon.liveWindow().historyDropped >= 1, 'older wide windows were dropped to stay in the budget');
  } finally {
    mon.stop();
  }
});

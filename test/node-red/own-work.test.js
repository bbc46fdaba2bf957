'use strict';
// A capture from the editor's button with its CPU profile, of a flow that does a flat 20 % of
// work and keeps nothing: none of rloop's own work may read as the app's. The profile's start
// holds the loop (V8 walks all code), which is rloop's and is no stall of the app's; it is left
// out of the first window's busy time; the heap grows between GCs, which is garbage and no
// leak.

const { describe, test } = require('node:test');
const assert = require('node:assert/strict');
const { RUNTIMES, spawnNodeRed } = require('../fixtures/node-red-embed');
const { nodeRedFor } = require('../fixtures/helpers');
const { assertValidReport } = require('../fixtures/report');
const { formatReport } = require('../../js/report/terminal');
const { renderHtml } = require('../../js/report/html');
const facts = require('../../js/report/facts');

const WORK_MS = 20; // a Function node's work, every 100 ms
const t = 't1';
const flows = [
  { id: t, type: 'tab', label: 'Main' },
  { id: 'in1', type: 'inject', z: t, name: 'every 100 ms', repeat: '0.1', once: true, onceDelay: 0.1, props: [{ p: 'payload' }], payload: '', payloadType: 'date', wires: [['f1']], x: 100, y: 100 },
  { id: 'f1', type: 'function', z: t, name: 'W', func: `global.get('busy')(${WORK_MS}, node.id); return msg;`, outputs: 1, wires: [[]], x: 300, y: 100 },
];

for (const rt of RUNTIMES) {
  describe(rt.name, () => {
    test("a capture with a profile of a steady flow: no stall, no heap growth and no busy time of rloop's own as the app's", { timeout: 90_000 }, async () => {
      const nr = await spawnNodeRed(rt.node, { nodeRed: nodeRedFor(rt.nodeRed), flows });
      let report;
      try {
        await new Promise((resolve) => setTimeout(resolve, 3000)); // the flow at its pace
        const res = await fetch(`http://127.0.0.1:${nr.port}/rloop/capture`, {
          method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ durationMs: 6000, format: 'json', profile: true }),
        });
        assert.equal(res.status, 200);
        report = await res.json();
      } finally {
        nr.stop();
      }
      assertValidReport(report);
      const text = formatReport(report);
      const windows = report.elu.windows.filter((w) => w.durationMs > 900);
      const elu = windows.map((w) => w.thread.elu);
      const what = `${JSON.stringify(windows.map((w) => [w.thread.elu, w.thread.rloopMs ?? 0, w.unattributed.busyMs]))}\n${text}`;
      assert.ok(windows.length >= 4, what);
      // The profile's start is rloop's: the first window reads as the others, its time apart.
      const middle = Math.max(...elu.slice(1, -1));
      assert.ok(elu[0] <= middle + 0.05 && elu[elu.length - 1] <= middle + 0.05, `first and last windows as the others: ${what}`);
      assert.ok(report.elu.thread.rloopMs > 0, what);
      // A stall that is rloop's own (the profile's start) is not counted as the app's.
      const profileStart = (e) => [...(e.stack ?? []), ...(e.stackSeen ?? [])].some((f) => /\/js\/capture\/profile\.js$/.test(f.url));
      assert.deepEqual(facts.stalls(report).events.filter(profileStart), [], what);
      assert.doesNotMatch(text, /\[warning\] Heap growth/, what);
      assert.ok(report.heap.afterGc && report.heap.afterGc.minor.count > 0, `the heap after GCs was recorded: ${JSON.stringify(report.heap.afterGc)}`);
      assert.doesNotMatch(renderHtml(report), /<li class="finding warning">(?:(?!<\/li>).)*Heap growth/s);
    });
  });
}

if (RUNTIMES.length === 0) test(`Node-RED: no version tested on Node ${process.versions.node}`, { skip: true }, () => {});

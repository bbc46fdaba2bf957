'use strict';
// `rloop attach` to a running Node-RED that has no rloop plugin (test/fixtures/node-red-embed.js
// in a child process, plugin: false), once for each Node-RED version this Node line supports:
// attaching turns per-node attribution on through Node-RED's message hooks, each Function node's
// scope in the report is within ±3 points of the work measured inside the flow
// (test/fixtures/node-red-flows.js), and leaving takes the hooks out again (asked from inside).
// Where the plugin runs, its attribution is used and its hooks stay.

const { describe, test, before } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { listening } = require('../../cli/attach/inspector');
const { nodeRedFor, sleep } = require('../fixtures/helpers');
const { attributionFlows } = require('../fixtures/node-red-flows');
const { RUNTIMES, spawnNodeRed, workPoints, lostPoints } = require('../fixtures/node-red-embed');
const { rloop, seen, tmpDir } = require('../fixtures/attach-helpers');
const { assertValidReport } = require('../fixtures/report');

const TOLERANCE = 3; // ELU points
// The Function nodes whose work runs on messages (On Start work, fst and fst2, ran before the attach).
const FUNCTIONS = ['fa', 'fb', 'fc', 'fd', 'fe', 'ff', 'fg', 'fi', 'fj', 'fh', 'sfi1-sfn', 'sfi2-sfn'];

for (const rt of RUNTIMES) {
  describe(rt.name, () => {
    let nodeRed;
    before(() => {
      nodeRed = nodeRedFor(rt.nodeRed);
    }, { timeout: 5 * 60_000 });

    test(`attach to a Node-RED without the plugin: per-node ELU within ±${TOLERANCE} points; leaving removes the hooks`, { timeout: 120_000 }, async (t) => {
      const dir = tmpDir(t, 'rloop-attach-nr-');
      const { flows } = attributionFlows();
      // --inspect-port=0: SIGUSR1 opens the inspector on a free port; --expose-internals: state.cjs counts async hooks.
      const nr = await spawnNodeRed(rt.node, { nodeRed, flows, plugin: false }, ['--inspect-port=0', '--expose-internals', '--no-warnings']);
      t.after(() => nr.stop());
      const get = async (url) => (await fetch(`http://127.0.0.1:${nr.port}${url}`)).json();
      // `http in` → H: 10 requests a second.
      const requests = setInterval(() => fetch(`http://127.0.0.1:${nr.port}/api/work`).then((r) => r.arrayBuffer(), () => {}), 100);
      t.after(() => clearInterval(requests));
      // The flows run, and have run a while (first compilations).
      for (let i = 0; i < 60 && !((await get('/fixture/spent')).fa?.length > 10); i++) await sleep(250);
      const inspectorsBefore = listening(nr.pid);
      const stateBefore = await get('/fixture/state');
      assert.deepEqual(stateBefore.hooks, []);

      const json = path.join(dir, 'r.json');
      const run = rloop(['attach', nr.pid, '-d', 4, '--json', json]);
      await seen(run.child.stderr, /capturing/);
      assert.deepEqual((await get('/fixture/state')).hooks, ['onSend', 'onReceive', 'postReceive'], 'the message hooks are on while attached');
      const r = await run;
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /Node-RED [45]\.\d+\.\d+(-git)?: per-node attribution on, through its message hooks \(start-up work is not seen\)/);

      const report = JSON.parse(fs.readFileSync(json, 'utf8'));
      assertValidReport(report);
      const spent = await get('/fixture/spent');
      const work = workPoints(spent, report.meta.start, report.meta.end, report.meta.durationMs, FUNCTIONS);
      const got = Object.fromEntries(FUNCTIONS.map((id) => [id, Number(((report.elu.scopes.find((s) => s.name === `node:${id}`)?.elu ?? 0) * 100).toFixed(2))]));
      t.diagnostic(`ELU points (the work measured → the report): ${FUNCTIONS.map((id) => `${id} ${work[id]}→${got[id]}`).join('; ')}`);
      assert.ok(FUNCTIONS.every((id) => work[id] > 0), `every node worked in the capture: ${JSON.stringify(work)}`);
      // Above the work by no more than the main thread's wait for a CPU around it.
      const waited = lostPoints(await get('/fixture/lost'), report.meta.start, report.meta.end, report.meta.durationMs);
      const off = FUNCTIONS.filter((id) => got[id] < work[id] - TOLERANCE || got[id] > work[id] + waited + TOLERANCE);
      assert.deepEqual(off, [], `ELU points, the work measured ${JSON.stringify(work)} (CPU wait around it ${waited.toFixed(2)})\nthe report ${JSON.stringify(got)}`);
      // The report names the nodes, counts their messages (10 a second), and the terminal shows them by name.
      const fa = report.nodered.nodes.fa;
      assert.deepEqual({ ...fa, messages: 0 }, { name: 'A: 5 ms, send, 5 ms', type: 'function', flow: 'Main', messages: 0 });
      const ran = spent.fa.filter(([at], i) => i % 2 === 0 && at > report.meta.start && at <= report.meta.end).length;
      assert.ok(Math.abs(fa.messages - ran) <= Math.max(2, 0.2 * ran), `fa: ${fa.messages} messages, ${ran} ran`);
      assert.match(r.stdout, /^ {2}A: 5 ms, send, 5 ms \(node:fa\) +[█·]+ +[\d.]+ %/m);

      // Leaving: no hook of rloop's in RED.hooks, nothing else left, the inspector rloop opened closed.
      for (let i = 0; i < 50 && listening(nr.pid).length > inspectorsBefore.length; i++) await sleep(100);
      assert.deepEqual(listening(nr.pid), inspectorsBefore);
      const stateAfter = await get('/fixture/state');
      assert.deepEqual(stateAfter.hooks, []);
      assert.deepEqual(stateAfter, stateBefore);
      assert.doesNotMatch(nr.stderr(), /rloop/, 'no warning from rloop in Node-RED');
    });

    test("where the plugin runs, attach uses its attribution and leaves its hooks on", { timeout: 120_000 }, async (t) => {
      const { flows } = attributionFlows();
      const nr = await spawnNodeRed(rt.node, { nodeRed, flows }, ['--inspect-port=0', '--no-warnings']);
      t.after(() => nr.stop());
      const get = async (url) => (await fetch(`http://127.0.0.1:${nr.port}${url}`)).json();
      for (let i = 0; i < 60 && !((await get('/fixture/spent')).fa?.length > 10); i++) await sleep(250);
      const dir = tmpDir(t, 'rloop-attach-plugin-');
      const json = path.join(dir, 'r.json');
      const r = await rloop(['attach', nr.pid, '-d', 1, '--no-profile', '--json', json]);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stderr, /Node-RED [45]\.\d+\.\d+(-git)?: per-node attribution on: the rloop plugin's/);
      // The plugin's capture: its scopes, the nodes named, their messages counted.
      const report = JSON.parse(fs.readFileSync(json, 'utf8'));
      assertValidReport(report);
      const fa = report.nodered.nodes.fa;
      assert.deepEqual({ ...fa, messages: 0 }, { name: 'A: 5 ms, send, 5 ms', type: 'function', flow: 'Main', messages: 0 });
      assert.ok(fa.messages > 0, `fa: ${fa.messages} messages`);
      assert.match(r.stdout, /^ {2}A: 5 ms, send, 5 ms \(node:fa\) +[█·]+/m, "the plugin's scopes in the report, by name");
      assert.deepEqual((await get('/fixture/state')).hooks, ['onSend', 'onReceive', 'postReceive'], "the plugin's hooks stay");
      assert.equal((await get('/rloop/elu')).enabled, true);
    });
  });
}

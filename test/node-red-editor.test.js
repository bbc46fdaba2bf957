'use strict';
// The editor half in headless Chromium, against a real Node-RED with adminAuth (each Node-RED
// version the running Node line supports, test/helpers.js NODE_RED_LINES, under the node running
// the tests, one child process each): after logging in, every node has
// a badge with its ELU, within tolerance of the known work; the sidebar tab lists nodes busiest
// first and reveals one on click; the switch turns attribution off and on; the capture button
// downloads a report. Without a token the admin endpoints answer 401. Screenshots go to
// artifacts/ (git-ignored).

const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { nodeRedFor, sleep } = require('./helpers');
const { editorFlows } = require('./fixtures/node-red-flows');
const { RUNTIMES, spawnNodeRed } = require('./fixtures/node-red-embed');

const ARTIFACTS = path.join(__dirname, '..', 'artifacts');
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
  '--disable-background-networking', '--disable-component-update', '--disable-sync'];
const TOLERANCE = 3; // ELU points
const USERS = { admin: { password: 'rloop-admin', permissions: '*' }, viewer: { password: 'rloop-viewer', permissions: 'read' } };

for (const rt of RUNTIMES) {
  describe(`editor, ${rt.name}`, () => {
    const { flows, expected } = editorFlows();
    const tag = `node-red-${rt.nodeRed}`;
    let nr, profile, browser, page, base;
    const offMachine = []; // requests the page made anywhere but to this Node-RED

    before(async () => {
      const nodeRed = nodeRedFor(rt.nodeRed);
      const bcrypt = require(require.resolve('bcryptjs', { paths: [nodeRed] }));
      const users = Object.entries(USERS).map(([username, u]) => ({ username, password: bcrypt.hashSync(u.password, 8), permissions: u.permissions }));
      nr = await spawnNodeRed(rt.node, { nodeRed, flows, settings: { adminAuth: { type: 'credentials', users } } });
      base = `http://127.0.0.1:${nr.port}`;
      fs.mkdirSync(ARTIFACTS, { recursive: true });
      profile = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-chromium-'));
      browser = await chromium.launchPersistentContext(profile, {
        executablePath: '/usr/bin/chromium',
        args: CHROMIUM_ARGS,
        viewport: { width: 1280, height: 720 },
        acceptDownloads: true,
      });
      page = browser.pages()[0] ?? (await browser.newPage());
      page.on('request', (r) => /^(blob|data):/.test(r.url()) || r.url().startsWith(base) || offMachine.push(r.url()));
      await page.goto(base);
      await page.fill('#node-dialog-login-username', 'admin');
      await page.fill('#node-dialog-login-password', USERS.admin.password);
      await page.click('#node-dialog-login-submit');
      await page.waitForSelector('#f12 .rloop-badge', { timeout: 30_000 });
    }, { timeout: 5 * 60_000 });

    after(async () => {
      await browser?.close();
      nr?.stop();
      if (profile) fs.rmSync(profile, { recursive: true, force: true });
    });

    test('the admin endpoints need a token with the right permission', async () => {
      const token = async (username) => {
        const res = await fetch(`${base}/auth/token`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ client_id: 'node-red-admin', grant_type: 'password', scope: USERS[username].permissions, username, password: USERS[username].password }),
        });
        return (await res.json()).access_token;
      };
      const call = (method, url, bearer) => fetch(`${base}${url}`, {
        method,
        headers: { 'content-type': 'application/json', ...(bearer && { authorization: `Bearer ${bearer}` }) },
        body: method === 'POST' ? '{"enabled":true}' : undefined,
      }).then((r) => r.status);
      for (const url of ['/rloop/elu', '/rloop/history']) assert.equal(await call('GET', url), 401, url);
      for (const url of ['/rloop/state', '/rloop/capture']) assert.equal(await call('POST', url), 401, url);
      const viewer = await token('viewer');
      assert.equal(await call('GET', '/rloop/elu', viewer), 200);
      assert.notEqual(await call('POST', '/rloop/state', viewer), 200, 'switching needs flows.write');
      assert.equal(await call('POST', '/rloop/state', await token('admin')), 200);
    });

    test(`every node has a badge, ELU within ±${TOLERANCE} points of the known work`, { timeout: 30_000 }, async (t) => {
      const read = () => page.$$eval('.red-ui-flow-node-group', (gs) => Object.fromEntries(
        gs.map((g) => [g.id, g.querySelector('.rloop-badge')]).filter(([, b]) => b).map(([id, b]) => [id, Number(b.dataset.rloopElu) * 100]),
      ));
      const reads = [];
      const from = Date.now() - 1000; // a badge shows the last complete window
      for (let i = 0; i < 4; i++) {
        reads.push(await read());
        await sleep(1000);
      }
      const to = Date.now() - 1000;
      const ids = flows.filter((n) => n.x !== undefined).map((n) => n.id);
      assert.deepEqual(Object.keys(reads[0]).sort(), ids.sort(), 'a badge on every node');
      // Against what the known work measured over about the windows shown: on a machine that
      // deschedules us, the work runs longer than asked.
      const spent = await (await fetch(`${base}/fixture/spent`)).json();
      const work = (id) => (100 * spent[id].filter(([at]) => at > from && at <= to).reduce((s, [, took]) => s + took, 0)) / (to - from);
      const got = Object.fromEntries(Object.keys(expected).map((id) => [id, reads.reduce((s, r) => s + r[id], 0) / reads.length]));
      t.diagnostic(`badge ELU points (nominal, the work measured → shown): ${Object.keys(expected).map((id) => `${id} ${expected[id]}, ${work(id).toFixed(2)}→${got[id].toFixed(2)}`).join('; ')}`);
      for (const id of Object.keys(expected)) assert.ok(Math.abs(got[id] - work(id)) <= TOLERANCE, `${id}: shown ${got[id]}, the work measured ${work(id)}`);
      assert.match(await page.textContent('#f12 .rloop-badge text'), /^\d+%$/);

      await page.hover('#f12 .rloop-badge');
      const tip = await page.waitForSelector('.red-ui-flow-port-tooltip', { timeout: 5000 });
      assert.match(await tip.textContent(), /ELU \d+% · busy \d+ ms · \d+ msgs · p99 \d+ ms\/msg/);
      await page.screenshot({ path: path.join(ARTIFACTS, `${tag}-badges.png`) });
      await page.mouse.move(5, 400);
    });

    test('the sidebar lists nodes busiest first, with sparklines; a click reveals the node', async () => {
      await page.evaluate(() => RED.sidebar.show('rloop'));
      await page.waitForSelector('.rloop-row');
      await sleep(1200); // one more window
      const rows = await page.$$eval('.rloop-row', (rs) => rs.map((r) => ({ id: r.dataset.rloopId, text: r.textContent, spark: r.querySelector('polyline').getAttribute('points').split(' ').length })));
      assert.deepEqual(rows.slice(0, 2).map((r) => r.id), ['f12', 'f4']);
      assert.match(rows[0].text, /12 ms a message/);
      assert.ok(rows[0].spark >= 3, 'a point per window so far');
      assert.match(await page.textContent('.rloop-totals'), /^Loop \d+% · no node \d+(\.\d)?% · Editor \d+%/);
      await page.screenshot({ path: path.join(ARTIFACTS, `${tag}-sidebar.png`) });
      await page.click('.rloop-row[data-rloop-id="f4"]');
      await page.waitForFunction(() => RED.nodes.node('f4').highlighted === true, null, { timeout: 5000 });
    });

    test('the switch turns attribution off and on', { timeout: 30_000 }, async () => {
      const enabled = () => page.evaluate(() => $.getJSON('rloop/elu').then((s) => s.enabled));
      await page.evaluate(() => RED.sidebar.show('rloop'));
      await page.click('.rloop-tab .red-ui-toggleButton');
      await page.waitForFunction(() => document.querySelectorAll('.rloop-badge-group:not(.hide)').length === 0, null, { timeout: 5000 });
      assert.equal(await enabled(), false);
      await page.screenshot({ path: path.join(ARTIFACTS, `${tag}-off.png`) });
      await page.click('.rloop-tab .red-ui-toggleButton');
      assert.equal(await enabled(), true);
      // Badges come back with the first window after the switch.
      const nodes = flows.filter((n) => n.x !== undefined).length;
      await page.waitForFunction((n) => document.querySelectorAll('.rloop-badge-group:not(.hide)').length === n, nodes, { timeout: 10_000 });
      assert.ok(await page.$eval('#f12 .rloop-badge', (b) => Number(b.dataset.rloopElu)) > 0.05);
    });

    test('the capture button downloads an HTML report', { timeout: 30_000 }, async () => {
      const [download] = await Promise.all([page.waitForEvent('download', { timeout: 20_000 }), page.click('.rloop-capture')]);
      assert.match(download.suggestedFilename(), /^rloop-report-.*\.html$/);
      const html = fs.readFileSync(await download.path(), 'utf8');
      assert.match(html, /^<!DOCTYPE html>/i);
      assert.match(html, /12 ms a message/, 'the report names the nodes');
      assert.deepEqual(offMachine, []);
    });
  });
}

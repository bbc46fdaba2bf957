'use strict';
// The editor half in headless Chromium, against a real Node-RED with adminAuth (each Node-RED
// version the running Node line supports, test/fixtures/helpers.js NODE_RED_LINES, under the node running
// the tests, one child process each): after logging in, every busy node has a badge with its ELU,
// within tolerance of the known work, idle ones none; the sidebar tab lists nodes busiest first
// (or by messages, p99), a subflow instance's nodes under it, and reveals one on click; the switch
// turns attribution off and on, the sidebar keeping its history; the capture button downloads a
// report of the chosen duration with a CPU profile. Without a token the admin endpoints answer
// 401. Screenshots go to artifacts/ (git-ignored).

const { describe, test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { nodeRedFor, sleep, ARTIFACTS } = require('../fixtures/helpers');
const { editorFlows } = require('../fixtures/node-red-flows');
const { RUNTIMES, spawnNodeRed, lostPoints } = require('../fixtures/node-red-embed');

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

    test(`busy nodes have a badge, ELU within ±${TOLERANCE} points of the known work, steadier than the windows; idle ones none`, { timeout: 30_000 }, async (t) => {
      // Badges shown (not hidden below rloop.badgeMin, 1 %), by node id: ELU points and the end
      // of the newest window in them.
      const read = () => page.$$eval('.red-ui-flow-node-group', (gs) => Object.fromEntries(
        gs.map((g) => [g.id, g.querySelector('.rloop-badge-group')]).filter(([, b]) => b && !b.classList.contains('hide'))
          .map(([id, b]) => [id, { elu: Number(b.querySelector('.rloop-badge').dataset.rloopElu) * 100, end: Number(b.querySelector('.rloop-badge').dataset.rloopEnd) }]),
      ));
      const reads = [];
      for (let i = 0; i < 4; i++) {
        reads.push(await read());
        await sleep(1000);
      }
      for (const id of ['f12', 'f4']) assert.ok(reads.every((r) => id in r), `${id} has a badge: ${JSON.stringify(reads)}`);
      // Hidden below rloop.badgeMin (1 %): the idle debug node, and any other node so little busy.
      assert.ok(reads.every((r) => !('d1' in r)), 'the idle debug node has no badge');
      const all = await page.$$eval('.red-ui-flow-node-group .rloop-badge-group', (bs) => bs.map((b) => [b.classList.contains('hide'), Number(b.querySelector('.rloop-badge').dataset.rloopElu)]));
      assert.ok(all.every(([hidden, elu]) => hidden === (elu < 0.01)), JSON.stringify(all));
      // A badge is the windows' moving average (the newest weighing SMOOTH): against the same
      // average of what the known work measured in each window. On a machine that deschedules
      // us, the work runs longer than asked, and a node is charged the main thread's wait for a
      // CPU in Node-RED's code around its work: above the work by no more than that wait.
      const SMOOTH = 0.4;
      const spent = await (await fetch(`${base}/fixture/spent`)).json();
      const lost = await (await fetch(`${base}/fixture/lost`)).json();
      const windows = (await page.evaluate(() => $.getJSON('rloop/history'))).windows;
      const average = (end, value) => windows.filter((w) => w.end <= end).reduce((avg, w) => (avg === null ? value(w) : avg + SMOOTH * (value(w) - avg)), null);
      const measured = (id) => (w) => (100 * (spent[id] ?? []).filter(([at]) => at > w.start && at <= w.end).reduce((s, [, took]) => s + took, 0)) / w.durationMs;
      const mean = (f) => reads.reduce((s, r) => s + f(r), 0) / reads.length;
      const ids = Object.keys(expected);
      const work = Object.fromEntries(ids.map((id) => [id, mean((r) => average(r[id].end, measured(id)))]));
      const wait = (w) => lostPoints(lost, w.start, w.end, w.durationMs);
      const waited = Object.fromEntries(ids.map((id) => [id, mean((r) => average(r[id].end, wait))]));
      const got = Object.fromEntries(ids.map((id) => [id, mean((r) => r[id].elu)]));
      t.diagnostic(`badge ELU points (nominal, the work measured (+ CPU wait) → shown): ${ids.map((id) => `${id} ${expected[id]}, ${work[id].toFixed(2)} (+${waited[id].toFixed(2)})→${got[id].toFixed(2)}`).join('; ')}`);
      for (const id of ids) {
        assert.ok(got[id] >= work[id] - TOLERANCE && got[id] <= work[id] + waited[id] + TOLERANCE, `${id}: shown ${got[id]}, the work measured ${work[id]}, the CPU wait around it ${waited[id]}`);
      }
      // Steadier: what f12's badge showed spreads no more than the windows it averages.
      const from = reads[0].f12.end;
      const raw = windows.filter((w) => w.end > from - 6000 && w.end <= reads.at(-1).f12.end).map((w) => (w.nodes.f12?.elu ?? 0) * 100);
      const spread = (xs) => Math.max(...xs) - Math.min(...xs);
      const shown = reads.map((r) => r.f12.elu);
      t.diagnostic(`f12: badge ${shown.map((v) => v.toFixed(2)).join(' ')}; windows ${raw.map((v) => v.toFixed(2)).join(' ')}`);
      assert.ok(spread(shown) <= spread(raw) + 1, `badge spread ${spread(shown)} > windows' ${spread(raw)}`);
      assert.match(await page.textContent('#f12 .rloop-badge text'), /^\d+%$/);

      await page.hover('#f12 .rloop-badge');
      const tip = await page.waitForSelector('.red-ui-flow-port-tooltip', { timeout: 5000 });
      assert.match(await tip.textContent(), /^ELU \d+% \(last 1 s: \d+%, busy \d+ ms\) · \d+ msgs · p99 \d+ ms\/msg$/);
      await page.screenshot({ path: path.join(ARTIFACTS, `${tag}-badges.png`) });
      await page.mouse.move(5, 400);
    });

    test('the sidebar: headers, subflow nodes nested under their instance, sorting, one sparkline scale; a click reveals the node', { timeout: 30_000 }, async () => {
      await page.evaluate(() => RED.sidebar.show('rloop'));
      await page.waitForSelector('.rloop-row[data-rloop-id="sfi-sfn"]', { timeout: 10_000 });
      await sleep(1200); // one more window
      // The rows, and the totals line of the same window (read at once: a window may come in between reads).
      const snapshot = () => page.evaluate(() => ({
        totals: document.querySelector('.rloop-totals').textContent,
        rows: [...document.querySelectorAll('.rloop-row')].map((r) => ({
          id: r.dataset.rloopId, depth: Number(r.dataset.rloopDepth), elu: Number(r.dataset.rloopElu), messages: Number(r.dataset.rloopMessages),
          p99: r.dataset.rloopP99 === '' ? -1 : Number(r.dataset.rloopP99), text: r.textContent, title: r.title,
          cells: [...r.children].map((c) => c.textContent),
          spark: Number(r.querySelector('svg').dataset.rloopPoints), top: r.querySelector('svg').dataset.rloopTop,
          left: r.getBoundingClientRect().left,
        })),
      }));
      let { rows: rs, totals } = await snapshot();
      const elus = rs.filter((r) => r.depth === 0).map((r) => r.elu);
      assert.deepEqual(elus, [...elus].sort((a, b) => b - a), 'busiest first');
      const f12 = rs.find((r) => r.id === 'f12');
      assert.deepEqual(f12.cells.map((c, i) => [/^12 ms a messagefunction$/, /^\d+$/, /^\d+(\.\d)? ms$/, /^$/, /^\d+(\.\d)?%$/][i].test(c)), [true, true, true, true, true], JSON.stringify(f12.cells));
      assert.equal(Number(f12.cells[1]), f12.messages);
      assert.ok(f12.spark >= 3, 'a point per window so far');
      assert.match(totals, /^Loop \d+% · no node \d+(\.\d)?% · Editor \d+%/);
      assert.match(await page.textContent('.rloop-head'), /^Node · last 1 s\s*msgs\s*p99\s*0–\d+(\.\d)?%\s*ELU$/);
      // The list starts where the tab does (Node-RED's CSS indents an ol by 25 px).
      const tabLeft = await page.$eval('.rloop-tab', (el) => el.getBoundingClientRect().left);
      assert.ok(rs.every((r) => r.left === tabLeft), `rows at ${rs[0].left}, the tab at ${tabLeft}`);
      // The instance by its subflow's name, its node indented right under it; rows at the top
      // level (an instance with what runs in it) add up to no more than the loop.
      const at = rs.findIndex((r) => r.id === 'sfi');
      assert.ok(at >= 0 && rs[at].depth === 0, JSON.stringify(rs));
      assert.deepEqual([rs[at + 1].id, rs[at + 1].depth], ['sfi-sfn', 1]);
      assert.match(rs[at].cells[0], /^Slow worksubflow · own \d+(\.\d)?%$/, 'its name, then its type and own time');
      assert.doesNotMatch(rs[at].text, /subflow:/);
      const loop = Number(/^Loop (\d+(?:\.\d)?)%/.exec(totals)[1]);
      const topLevel = rs.filter((r) => r.depth === 0).reduce((s, r) => s + r.elu * 100, 0);
      assert.ok(topLevel <= loop + 1, `top-level rows ${topLevel} %, the loop ${loop} %`);
      assert.equal(new Set(rs.map((r) => r.top)).size, 1, 'one scale for every sparkline');
      await page.screenshot({ path: path.join(ARTIFACTS, `${tag}-sidebar.png`) });
      // Sorting, each level on its own.
      for (const by of ['messages', 'p99', 'elu']) {
        await page.click(`.rloop-head [data-rloop-sort="${by}"]`);
        ({ rows: rs } = await snapshot());
        const tops = rs.filter((r) => r.depth === 0).map((r) => r[by]);
        assert.deepEqual(tops, [...tops].sort((a, b) => b - a), `by ${by}: ${JSON.stringify(rs.map((r) => [r.id, r[by]]))}`);
        assert.equal(await page.getAttribute('.rloop-head .rloop-sorted', 'data-rloop-sort'), by);
      }
      // One message a window: "1 msg".
      await page.waitForFunction(() => document.querySelector('.rloop-row[data-rloop-id="sfi-sfn"]')?.dataset.rloopMessages === '1', null, { timeout: 10_000 });
      assert.match(await page.getAttribute('.rloop-row[data-rloop-id="sfi-sfn"]', 'title'), / · 1 msg · /);
      await page.click('.rloop-row[data-rloop-id="f4"]');
      await page.waitForFunction(() => RED.nodes.node('f4').highlighted === true, null, { timeout: 5000 });
    });

    test('the switch turns attribution off and on; the sidebar keeps its history', { timeout: 30_000 }, async () => {
      const enabled = () => page.evaluate(() => $.getJSON('rloop/elu').then((s) => s.enabled));
      const points = () => page.$eval('.rloop-row[data-rloop-id="f12"] svg', (s) => Number(s.dataset.rloopPoints));
      await page.evaluate(() => RED.sidebar.show('rloop'));
      await page.click('.rloop-tab .red-ui-toggleButton');
      await page.waitForFunction(() => document.querySelectorAll('.rloop-badge-group:not(.hide)').length === 0, null, { timeout: 5000 });
      assert.equal(await enabled(), false);
      const before = await points();
      assert.ok(before >= 3, 'the sparkline stays while off');
      assert.match(await page.textContent('.rloop-totals'), /^Off; the last windows kept: Loop/);
      await sleep(1500);
      await page.screenshot({ path: path.join(ARTIFACTS, `${tag}-off.png`) });
      await page.click('.rloop-tab .red-ui-toggleButton');
      assert.equal(await enabled(), true);
      // Badges come back with the first window after the switch.
      await page.waitForFunction(() => ['f12', 'f4'].every((id) => document.querySelector(`#${id} .rloop-badge-group:not(.hide)`)), null, { timeout: 10_000 });
      assert.ok(await page.$eval('#f12 .rloop-badge', (b) => Number(b.dataset.rloopElu)) > 0.05);
      // The sparkline goes on after a gap where rloop was off.
      await page.waitForFunction((n) => Number(document.querySelector('.rloop-row[data-rloop-id="f12"] svg').dataset.rloopPoints) > Math.min(n, 59), before, { timeout: 5000 });
      assert.equal(await page.$eval('.rloop-row[data-rloop-id="f12"] path', (p) => p.getAttribute('d').split('M').length - 1), 2, 'two stretches');
    });

    test('the capture button: the chosen duration, a countdown, a CPU profile, messages per node', { timeout: 40_000 }, async () => {
      assert.equal(await page.isChecked('.rloop-profile'), true, 'a CPU profile by default (rloop.profile)');
      await page.selectOption('.rloop-duration', '5');
      const [download] = await Promise.all([
        page.waitForEvent('download', { timeout: 30_000 }),
        (async () => {
          await page.click('.rloop-capture');
          const counts = [];
          for (let i = 0; i < 3; i++) {
            counts.push(await page.textContent('.rloop-capture span'));
            await sleep(1100);
          }
          assert.match(counts[0], /^[45] s$/);
          assert.ok(counts.every((c) => /^\d s$/.test(c)) && Number.parseInt(counts[2]) < Number.parseInt(counts[0]), JSON.stringify(counts));
          assert.equal(await page.isDisabled('.rloop-capture'), true);
        })(),
      ]);
      assert.match(download.suggestedFilename(), /^rloop-report-.*\.html$/);
      const html = fs.readFileSync(await download.path(), 'utf8');
      assert.match(html, /^<!DOCTYPE html>/i);
      assert.match(html, /12 ms a message/, 'the report names the nodes');
      assert.match(html, /<section id="cpu"/, 'with a CPU profile');
      const nodered = html.slice(html.indexOf('<section id="nodered"'));
      assert.match(nodered.slice(0, nodered.indexOf('</section>')), /<th[^>]*>Messages</);
      await page.waitForFunction(() => document.querySelector('.rloop-capture span').textContent === 'capture', null, { timeout: 5000 });
      assert.deepEqual(offMachine, []);
    });
  });
}

'use strict';
// The HTML report in headless Chromium (Debian's, driven by playwright-core; no browser is
// downloaded): it loads offline with no console error and no request but its own file, tables
// sort, stacks fold, the flame graph zooms and searches, tooltips show, and a hostile report
// runs nothing. Screenshots go to artifacts/ (git-ignored) for a person to look at.

const { describe, before, after, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { renderHtml } = require('../../js/report/html');
const { appReport } = require('../fixtures/report-app');
const { scaleReport, hostileReport, emptyReport, diagnosisReport } = require('../fixtures/synthetic-reports');
const { packagesReport } = require('../fixtures/tree-profile');

const { CHROMIUM, ARTIFACTS } = require('../fixtures/helpers');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

describe('HTML report in Chromium', { skip: !fs.existsSync(CHROMIUM) && `no ${CHROMIUM} (.ci/run installs it)` }, () => {
  let browser;
  let profileDir;
  const files = {};

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const reports = {
      report: appReport(),
      'report-hostile': hostileReport(),
      'report-empty': emptyReport(),
      'report-scale': scaleReport({ samples: 100000, ioEvents: 10000 }),
      'report-diagnosis': diagnosisReport(),
    };
    for (const [name, report] of Object.entries(reports)) {
      files[name] = path.join(ARTIFACTS, `${name}.html`);
      fs.writeFileSync(files[name], renderHtml(report));
    }
    profileDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rloop-chromium-'));
    browser = await chromium.launchPersistentContext(profileDir, {
      executablePath: CHROMIUM, headless: true, args: ARGS, viewport: { width: 1400, height: 900 },
    });
  });

  after(async () => {
    await browser?.close();
    fs.rmSync(profileDir, { recursive: true, force: true });
  });

  /** `name`'s page in a new tab, with every console error, page error, dialog and request it makes. */
  async function open(name) {
    const page = await browser.newPage();
    const seen = { errors: [], requests: [], dialogs: [] };
    page.on('console', (m) => m.type() === 'error' && seen.errors.push(m.text()));
    page.on('pageerror', (e) => seen.errors.push(e.message));
    page.on('request', (r) => seen.requests.push(r.url()));
    page.on('dialog', (d) => {
      seen.dialogs.push(d.message());
      d.dismiss();
    });
    await page.emulateMedia({ colorScheme: 'dark' }); // the page's default theme
    await page.goto(`file://${files[name]}`, { waitUntil: 'load' });
    return { page, seen };
  }

  /** Nothing went wrong and nothing left the page: only its own file was requested. */
  function assertQuiet(name, seen) {
    assert.deepEqual(seen.errors, []);
    assert.deepEqual(seen.dialogs, []);
    assert.deepEqual(seen.requests.filter((url) => url !== `file://${files[name]}` && !url.startsWith('data:')), []);
  }

  test('loads with no console error and no network request; dark, light and print', async () => {
    const { page, seen } = await open('report');
    await page.waitForSelector('#flame-svg rect');
    assertQuiet('report', seen);
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), 'rgb(14, 17, 22)');
    await page.screenshot({ path: path.join(ARTIFACTS, 'report-dark.png'), fullPage: true });
    await page.emulateMedia({ colorScheme: 'light' });
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), 'rgb(245, 246, 248)');
    await page.screenshot({ path: path.join(ARTIFACTS, 'report-light.png'), fullPage: true });
    await page.emulateMedia({ media: 'print', colorScheme: 'dark' });
    assert.equal(await page.locator('nav').isVisible(), false, 'no navigation on paper');
    assert.equal(await page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor), 'rgb(255, 255, 255)');
    await page.screenshot({ path: path.join(ARTIFACTS, 'report-print.png'), fullPage: true });
    assertQuiet('report', seen);
    await page.close();
  });

  test('clicking a header sorts the table, again reverses it', async () => {
    const { page } = await open('report');
    const table = page.locator('table[aria-label="ELU by scope"]');
    const busy = () => table.locator('tbody tr td:nth-child(2)').evaluateAll((tds) => tds.map((td) => Number(td.dataset.v)));
    const names = () => table.locator('tbody tr td:nth-child(1)').evaluateAll((tds) => tds.map((td) => td.textContent.trim().toLowerCase()));
    const byNumber = (a, b) => a - b;
    const header = table.locator('th').filter({ hasText: /^Busy$/ });
    await header.click();
    assert.deepEqual(await busy(), (await busy()).sort(byNumber).reverse(), 'numbers: largest first');
    assert.equal(await header.getAttribute('aria-sort'), 'descending');
    await header.click();
    assert.deepEqual(await busy(), (await busy()).sort(byNumber), 'then smallest first');
    await table.locator('th').filter({ hasText: /^Scope$/ }).press('Enter'); // keyboard too
    const sorted = await names();
    assert.deepEqual(sorted, [...sorted].sort(), 'text: A to Z');
    assert.ok((await busy()).length >= 5);
    await page.close();
  });

  test('call stacks fold and unfold', async () => {
    const { page } = await open('report');
    const first = page.locator('details.callers').first();
    const frames = first.locator('details.stack').first();
    assert.equal(await first.evaluate((d) => d.open), false, 'closed at first');
    assert.equal(await frames.isVisible(), false);
    await first.locator('summary').first().click();
    assert.equal(await first.evaluate((d) => d.open), true);
    assert.equal(await frames.isVisible(), true);
    await frames.locator(':scope > summary').click();
    assert.ok(await frames.locator('li').first().isVisible(), 'a stack lists its frames');
    await first.locator('summary').first().click();
    assert.equal(await frames.isVisible(), false, 'closed again');
    await page.close();
  });

  test('the flame graph zooms on click and back, and search highlights', async () => {
    const { page, seen } = await open('report');
    const svg = page.locator('#flame-svg');
    await svg.locator('rect').first().waitFor();
    const width = await svg.evaluate((s) => s.clientWidth);
    assert.equal(await svg.getAttribute('viewBox'), `0 0 ${width} ${await svg.evaluate((s) => s.getAttribute('height'))}`);
    const rectWidth = (i) => svg.locator(`rect[data-i="${i}"]`).evaluate((r) => Number(r.getAttribute('width')));
    // A bar two levels down, narrower than the graph.
    const target = await svg.locator('rect').evaluateAll((rects, w) => rects
      .filter((r) => Number(r.getAttribute('y')) === 36 && Number(r.getAttribute('width')) < w / 2 && Number(r.getAttribute('width')) > 20)
      .map((r) => r.dataset.i)[0], width);
    assert.ok(target, 'a bar to zoom into');
    const before = await rectWidth(target);
    await svg.locator(`rect[data-i="${target}"]`).click();
    assert.equal(await svg.getAttribute('data-zoom'), target);
    assert.ok(await rectWidth(target) >= width - 2, `zoomed bar ${await rectWidth(target)} of ${width} px (was ${before})`);
    assert.ok(await rectWidth(0) >= width - 2, 'the root above it spans the graph');
    assert.match(await svg.locator('rect[data-i="0"]').getAttribute('class'), /ancestor/);
    await page.locator('#flame-graph').screenshot({ path: path.join(ARTIFACTS, 'report-flame-zoomed.png') });
    await page.click('#flame-reset');
    assert.equal(await svg.getAttribute('data-zoom'), '0');
    assert.ok(Math.abs(await rectWidth(target) - before) < 0.2, 'back to its width');

    await page.fill('#flame-search', 'busy');
    const hits = await svg.locator('rect.hit').count();
    assert.ok(hits > 0, 'bars of busy highlighted');
    assert.match(await page.textContent('#flame-status'), /^\d+ frames match · [\d.]+ (ms|s) \([\d.]+ % of busy time\)$/);
    await page.locator('#flame-graph').screenshot({ path: path.join(ARTIFACTS, 'report-flame-search.png') });
    await page.fill('#flame-search', '');
    assert.equal(await svg.locator('rect.hit').count(), 0);
    assertQuiet('report', seen);
    await page.close();
  });

  test('hovering a stall shows its time, lag, scope and stack', async () => {
    const { page } = await open('report');
    const tipOf = await page.locator('#lag circle.dot').evaluateAll((dots) => dots.findIndex((d) => d.dataset.tip.includes('busy')));
    assert.ok(tipOf >= 0, 'a stall with a stack');
    await page.locator('#lag circle.dot').nth(tipOf).hover({ force: true });
    const tip = page.locator('#tip');
    assert.equal(await tip.isVisible(), true);
    const text = await tip.innerText();
    assert.match(text, /^[\d.,]+ ms stall at [+−][\d.]+ s \(\d{4}-\d\d-\d\d [\d:.]+ UTC\)\nscope: /);
    assert.match(text, /busy …\/fixtures\/helpers\.js:\d+/);
    await page.locator('#lag').screenshot({ path: path.join(ARTIFACTS, 'report-lag-tooltip.png') });
    await page.close();
  });

  test('a hostile report shows its strings as text and runs nothing', async () => {
    const { page, seen } = await open('report-hostile');
    await page.waitForSelector('#flame-svg rect');
    // Everything the page script does with app data: tooltips, search, zoom.
    await page.hover('#flame-svg rect[data-i="1"]');
    await page.fill('#flame-search', '<script>');
    await page.click('#flame-svg rect[data-i="1"]');
    await page.hover('#lag circle.dot');
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.evaluate(() => document.scripts.length), 2);
    assert.equal(await page.locator('img, iframe, object, embed, link[rel=stylesheet], style').count(), 1, 'only the page\'s style');
    const body = await page.evaluate(() => document.body.textContent);
    assert.ok(body.includes('<script>window.__pwned="script"</script>'), 'shown as text');
    assert.ok(body.includes('</style><script>window.__pwned="style"</script><style>'));
    assert.match(await page.textContent('#tip'), /pwned|\\x|huge|emoji|שלום/);
    assertQuiet('report-hostile', seen);
    await page.screenshot({ path: path.join(ARTIFACTS, 'report-hostile.png') });
    await page.close();
  });

  test('an empty report and a report at scale load cleanly', async () => {
    for (const name of ['report-empty', 'report-scale']) {
      const { page, seen } = await open(name);
      if (name === 'report-scale') await page.waitForSelector('#flame-svg rect');
      assertQuiet(name, seen);
      await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: name === 'report-empty' }); // the page at scale is very tall
      await page.close();
    }
  });
});

// On the field report rebuilt: what a person reads. Screenshots: artifacts/diagnosis-*.png.
describe('HTML report in Chromium: one set of numbers', { skip: !fs.existsSync(CHROMIUM) && `no ${CHROMIUM}` }, () => {
  let browser;
  let page;
  const file = path.join(ARTIFACTS, 'report-diagnosis-issue11.html');

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(file, renderHtml(diagnosisReport()));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`file://${file}`, { waitUntil: 'load' });
    await page.waitForSelector('#flame-svg rect');
  });

  after(() => browser?.close());

  const cardText = (label) => page.locator('.card', { has: page.locator('.label', { hasText: new RegExp(`^${label}$`) }) }).innerText();

  test('cards, diagnosis and sections state the same stalls and count the two sides of slow I/O apart', async () => {
    assert.match(await cardText('Loop stalls'), /38\s+longest 529 ms/);
    assert.match(await page.locator('#lag .facts').innerText(), /stalls 38\s+longest 529 ms/);
    assert.match(await page.locator('#diagnosis').innerText(), /stalled 38 times for 50 ms or more, the longest 529 ms/);
    assert.match(await cardText('Slow I\\/O'), /3 out · 3 in/);
    const heap = page.locator('.card', { has: page.locator('.label', { hasText: 'Peak heap used' }) }).locator('.sub');
    assert.equal(await heap.evaluate((el) => el.scrollWidth <= el.clientWidth), true, 'the heap card is not cut');
    await page.locator('#summary').screenshot({ path: path.join(ARTIFACTS, 'diagnosis-summary.png') });
    await page.locator('#diagnosis').screenshot({ path: path.join(ARTIFACTS, 'diagnosis-findings.png') });
  });

  test('the charts end at the end of the capture, the partial last window drawn', async () => {
    for (const id of ['elu', 'lag', 'memory']) {
      const ticks = await page.locator(`#${id} svg.chart text.tick[text-anchor="middle"]`).allTextContents();
      assert.equal(ticks.at(-1), '10 s', `${id}: ${ticks}`);
    }
    const right = await page.locator('#elu svg.chart g.marks rect:not(.hover)').evaluateAll((rects) => Math.max(...rects.map((r) => r.x.baseVal.value + r.width.baseVal.value)));
    const end = await page.locator('#elu svg.chart line.grid').first().evaluate((l) => l.x2.baseVal.value);
    assert.ok(end - right < 2, `the last bar ends at ${right}, the axis at ${end}`);
    await page.locator('#elu svg.chart rect.hover').first().hover({ force: true });
    assert.match(await page.locator('#tip').innerText(), /^\+0 s to \+0\.97 s/);
    await page.locator('#elu svg.chart rect.hover').last().hover({ force: true });
    assert.match(await page.locator('#tip').innerText(), /to \+10\.1 s: loop busy[\s\S]*the capture ended inside this window/);
    await page.locator('#elu').screenshot({ path: path.join(ARTIFACTS, 'diagnosis-elu.png') });
  });

  test('a fetch stack reads callers first, library frames folded until opened', async () => {
    const stack = page.locator('#io details.stack').filter({ hasText: 'Timeout._onTimeout' }).first();
    await stack.locator(':scope > summary').click();
    const first = stack.locator('ol.calls > li').first();
    assert.match(await first.innerText(), /^Timeout\._onTimeout/);
    const fold = stack.locator('li.lib details');
    assert.match(await fold.locator('summary').innerText(), /^9 library frames \(undici ×8, node ×1\)$/);
    assert.equal(await fold.locator('li').first().isVisible(), false, 'folded');
    await fold.locator('summary').click();
    assert.equal(await fold.locator('li').first().isVisible(), true);
    await page.locator('#io').screenshot({ path: path.join(ARTIFACTS, 'diagnosis-io.png') });
  });

  test('shares in the heavy-functions table, the diagnosis and the flame search agree', async () => {
    const row = page.locator('table[aria-label="Heavy functions"] tbody tr', { hasText: 'JSON.parse' });
    assert.match(await row.innerText(), /25 %/);
    assert.match(await page.locator('#diagnosis').innerText(), /JSON\.parse\/stringify took 25 % of busy time/);
    await page.fill('#flame-search', 'JSON.parse');
    assert.match(await page.textContent('#flame-status'), /^1 frame matches · 1\.80 s \(25\.0 % of busy time\)$/);
    await page.locator('#cpu').screenshot({ path: path.join(ARTIFACTS, 'diagnosis-cpu.png') });
  });
});

// Busy time by package, as a person with no scopes reads it. Screenshot: artifacts/packages-cpu.png.
describe('HTML report in Chromium: CPU by package', { skip: !fs.existsSync(CHROMIUM) && `no ${CHROMIUM}` }, () => {
  let browser;
  let page;
  const file = path.join(ARTIFACTS, 'report-packages.html');

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    fs.writeFileSync(file, renderHtml(packagesReport()));
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`file://${file}`, { waitUntil: 'load' });
  });

  after(() => browser?.close());

  test('the busiest package is said, its bar part is the widest and its tip says its share; the table sorts', async () => {
    assert.match(await page.locator('#cpu').innerText(), /The busiest package, some-orm, ran 39 % of the busy time in its own code \(39 ms\)\./);
    const bar = page.locator('.catbar[aria-label="CPU time by package, share of busy time"]');
    const widths = await bar.locator('span').evaluateAll((parts) => parts.map((p) => p.getBoundingClientRect().width));
    const whole = await bar.evaluate((el) => el.getBoundingClientRect().width);
    assert.ok(Math.abs(widths.reduce((a, b) => a + b, 0) - whole) < 2, `parts ${widths} fill the bar of ${whole} px`);
    assert.ok(Math.abs(widths[0] / whole - 0.39) < 0.01, `some-orm's part: ${widths[0]} of ${whole} px`);
    await bar.locator('span').first().hover();
    assert.match(await page.locator('#tip').innerText(), /^some-orm\s+39 ms, 39 % of busy time$/);
    const table = page.locator('table[aria-label="CPU by package"]');
    const names = () => table.locator('tbody tr td:first-child').allInnerTexts();
    assert.deepEqual((await names()).slice(0, 3), ['some-orm', '(app)', '@orm/sql']);
    await table.locator('th', { hasText: /^Code$/ }).click();
    assert.deepEqual((await names()).slice(0, 2), ['(app)', '(garbage collector)'], 'by name');
    await page.locator('#cpu').screenshot({ path: path.join(ARTIFACTS, 'packages-cpu.png') });
  });
});


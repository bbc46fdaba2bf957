'use strict';
// The flame graph in headless Chromium, driven as a person would: hover for total and self time,
// click for the call chain and back, the sandwich of a function (its callers and callees over all
// its call sites, on test/fixtures/flame-reports.js whose truth is known), the left-heavy toggle,
// the keyboard, a hostile report, and the time each takes on the 100 k-sample report.
// Screenshots: artifacts/flame-*.png.

const { describe, before, after, test } = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { chromium } = require('playwright-core');
const { renderHtml } = require('../../js/report/html');
const { scaleReport, hostileReport } = require('../fixtures/synthetic-reports');
const { sandwichReport, unsortedReport } = require('../fixtures/flame-reports');

const { CHROMIUM, ARTIFACTS } = require('../fixtures/helpers');
const ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking'];
const ANONYMOUS = '(anonymous) …/src/app.js:30';

describe('the flame graph in Chromium', { skip: !fs.existsSync(CHROMIUM) && `no ${CHROMIUM} (.ci/run installs it)` }, () => {
  let browser;
  const files = {};

  before(async () => {
    fs.mkdirSync(ARTIFACTS, { recursive: true });
    const reports = { sandwich: sandwichReport(), unsorted: unsortedReport(), scale: scaleReport({ samples: 100000, ioEvents: 10000 }), hostile: hostileReport() };
    for (const [name, report] of Object.entries(reports)) {
      files[name] = path.join(ARTIFACTS, `flame-${name}.html`);
      fs.writeFileSync(files[name], renderHtml(report));
    }
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
  });

  after(() => browser?.close());

  async function open(name) {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors = [];
    page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
    page.on('pageerror', (e) => errors.push(e.message));
    await page.emulateMedia({ colorScheme: 'dark' });
    await page.goto(`file://${files[name]}`, { waitUntil: 'load' });
    await page.locator('#flame-svg rect').first().waitFor();
    return { page, errors };
  }

  /** The graph's bar of the `nth` frame named `name` (preorder), by the page's own data. */
  async function bar(page, name, nth = 0) {
    const i = await page.evaluate(([n, k]) => {
      const f = JSON.parse(document.getElementById('rloop-data').textContent).flame;
      return Array.from({ length: f.nodes.length / 6 }, (_, j) => j).filter((j) => f.strings[f.nodes[j * 6]] === n)[k];
    }, [name, nth]);
    return page.locator(`#flame-svg rect[data-i="${i}"]`);
  }

  /** The bars of `svg` on row `y` (px from the top), left to right: [label, width in px]. */
  const row = (page, svg, y) => page.locator(`${svg} rect`).evaluateAll((rects, top) => rects
    .filter((r) => Number(r.getAttribute('y')) === top)
    .sort((a, b) => Number(a.getAttribute('x')) - Number(b.getAttribute('x')))
    .map((r) => [r.nextElementSibling?.tagName === 'text' ? r.nextElementSibling.textContent : null, Math.round(Number(r.getAttribute('width')) + 1)]), y);

  const tipText = (page) => page.locator('#tip').innerText();

  test('hovering a bar shows its total and self time; an anonymous function shows its file and line', async () => {
    const { page, errors } = await open('sandwich');
    await (await bar(page, 'shared')).hover();
    assert.equal(await tipText(page), 'shared\nfile:///srv/app/src/lib.js:5:3\ntotal 5.00 ms · 31.3 % of busy time\nself 3.00 ms · 18.8 %\nuser · click to zoom');
    await (await bar(page, ANONYMOUS)).hover();
    assert.match(await tipText(page), /^\(anonymous\) …\/src\/app\.js:30\nfile:\/\/\/srv\/app\/src\/app\.js:30:3\ntotal 3\.00 ms/);
    assert.ok((await page.locator('#flame-svg text').allTextContents()).includes(ANONYMOUS), 'on the bar itself');
    const box = await page.locator('#flame-graph').boundingBox();
    await page.screenshot({ path: path.join(ARTIFACTS, 'flame-tooltip.png'), clip: { ...box, height: box.height + 110 } }); // the tooltip hangs below
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('a click zooms and shows the call chain from the root, callers named and located; Back, Escape and Backspace return', async () => {
    const { page } = await open('sandwich');
    const svg = page.locator('#flame-svg');
    assert.equal(await page.locator('#flame-chain').isVisible(), false);
    await (await bar(page, 'leaf')).click();
    const leaf = await svg.getAttribute('data-zoom');
    const chain = await page.locator('#flame-chain li button[data-chain]').allInnerTexts();
    assert.deepEqual(chain.map((t) => t.replace(/\s+/g, ' ').trim()), ['(all) 16.0 ms', 'main …/src/app.js:1:3 12.0 ms', 'a …/src/app.js:10:3 6.00 ms',
      'shared …/src/lib.js:5:3 5.00 ms', 'leaf …/src/lib.js:9:3 2.00 ms']);
    assert.equal(await page.locator('#flame-chain button[aria-current]').innerText().then((t) => t.split(/\s/)[0]), 'leaf');
    await page.locator('#flame-graph').screenshot({ path: path.join(ARTIFACTS, 'flame-chain.png') });
    await page.locator('#flame-chain button[data-chain]', { hasText: /^a\s/ }).click(); // a caller in the chain
    assert.match(await page.locator('#flame-chain button[aria-current]').innerText(), /^a\s/);
    await page.click('#flame-back');
    assert.equal(await svg.getAttribute('data-zoom'), leaf, 'Back: the leaf again');
    await svg.focus();
    await page.keyboard.press('Escape');
    assert.equal(await svg.getAttribute('data-zoom'), '0', 'Escape: the whole graph');
    assert.equal(await page.locator('#flame-chain').isVisible(), false);
    await (await bar(page, 'worker')).click();
    await (await bar(page, 'shared', 2)).click();
    await page.keyboard.press('Backspace');
    assert.equal(await svg.getAttribute('data-zoom'), await (await bar(page, 'worker')).getAttribute('data-i'), 'Backspace: one step back');
    assert.equal(await page.locator('#flame-back').isDisabled(), false);
    await page.click('#flame-back');
    assert.equal(await page.locator('#flame-back').isDisabled(), true, 'nothing more to go back to');
    await page.close();
  });

  test('the sandwich of a function merges its call sites: callers and callees with their totals', async () => {
    const { page, errors } = await open('sandwich');
    await (await bar(page, 'shared')).click();
    await page.click('#flame-sandwich-open');
    assert.equal(await page.locator('#flame-svg').isVisible(), false, 'the sandwich in place of the graph');
    assert.equal(await page.textContent('#sandwich-title'), 'shared · file:///srv/app/src/lib.js:5:3');
    assert.equal(await page.textContent('#sandwich-facts'), 'total 10.0 ms (62.5 % of busy time) · self 8.00 ms (50.0 %) · 3 call sites merged');
    const width = await page.locator('#sandwich-callers').evaluate((s) => s.clientWidth);
    const share = (bars) => bars.map(([name, w]) => [name, Math.round((10 * w) / width)]); // in ms of the 10 ms
    // Callers, the function at the bottom (row 2), its callers above it, theirs above them.
    assert.deepEqual(share(await row(page, '#sandwich-callers', 36)), [['shared', 10]]);
    assert.deepEqual(share(await row(page, '#sandwich-callers', 18)), [['a', 5], ['worker', 3], ['b', 2]]);
    assert.deepEqual(share(await row(page, '#sandwich-callers', 0)), [['main', 5], ['main', 2]]);
    assert.deepEqual(share(await row(page, '#sandwich-callees', 0)), [['shared', 10]]);
    assert.deepEqual(share(await row(page, '#sandwich-callees', 18)), [['leaf', 2], ['shared', 1]], 'its recursive call inside it');
    await page.locator('#sandwich-callers rect').nth(1).hover();
    assert.match(await tipText(page), /^a\n.*\n5\.00 ms \(31\.3 % of busy time\) of shared came through here/);
    await page.locator('#flame-graph').screenshot({ path: path.join(ARTIFACTS, 'flame-sandwich.png') });
    await page.locator('#sandwich-callers rect').nth(1).click(); // a's own sandwich
    assert.match(await page.textContent('#sandwich-facts'), /^total 6\.00 ms .* · 1 call site merged$/);
    await page.keyboard.press('Escape');
    assert.match(await page.textContent('#sandwich-title'), /^shared/, 'back to shared');
    await page.keyboard.press('Escape');
    assert.equal(await page.locator('#flame-svg').isVisible(), true, 'back to the graph');
    assert.equal(await page.locator('#flame-sandwich').isVisible(), false);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test("in a sandwich the keys work too: arrows between frames as drawn, Enter opens a frame's sandwich", async () => {
    const { page, errors } = await open('sandwich');
    await (await bar(page, 'shared')).click();
    await page.click('#flame-sandwich-open');
    const focused = async () => (await page.textContent('#flame-focus')).split('. ')[0];
    await page.focus('#sandwich-callers');
    await page.keyboard.press('ArrowUp'); // callers are drawn above the function
    assert.equal(await focused(), 'a');
    await page.keyboard.press('ArrowRight');
    assert.equal(await focused(), 'worker');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focused(), 'shared');
    await page.focus('#sandwich-callees');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focused(), 'leaf');
    assert.equal(await page.locator('#sandwich-callees rect.focus').count(), 1);
    await page.keyboard.press('Enter');
    assert.match(await page.textContent('#sandwich-title'), /^leaf · /, "the callee's own sandwich");
    await page.keyboard.press('Escape');
    assert.match(await page.textContent('#sandwich-title'), /^shared · /, 'back');
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('left heavy merges the same function under one parent and sorts callees heaviest first', async () => {
    const { page } = await open('unsorted');
    const names = async () => (await row(page, '#flame-svg', 36)).filter(([, w]) => w > 40).map(([name]) => name);
    assert.deepEqual(await names(), ['b', ANONYMOUS, 'a', 'a', 'shared'], 'as the report holds it');
    await page.locator('#flame-graph').screenshot({ path: path.join(ARTIFACTS, 'flame-recorded.png') });
    await page.check('#flame-heavy');
    assert.deepEqual(await names(), ['a', ANONYMOUS, 'b', 'shared']);
    assert.equal(await page.textContent('#flame-layout-note'), '');
    await page.locator('#flame-svg text', { hasText: /^a$/ }).evaluate((t) => t.previousElementSibling.setAttribute('id', 'merged-a'));
    await page.hover('#merged-a');
    assert.match(await tipText(page), /total 6\.00 ms · 37\.5 % of busy time\nself 1\.00 ms/, 'the two a merged');
    await page.locator('#flame-graph').screenshot({ path: path.join(ARTIFACTS, 'flame-left-heavy.png') });
    await page.uncheck('#flame-heavy');
    assert.deepEqual(await names(), ['b', ANONYMOUS, 'a', 'a', 'shared']);
    await page.close();
  });

  test('the keyboard: Tab to the graph, arrows between frames, Enter zooms, Escape goes back, S sandwiches, / searches', async () => {
    const { page } = await open('sandwich');
    const svg = page.locator('#flame-svg');
    await page.focus('#flame-search');
    for (let i = 0; i < 6 && !(await svg.evaluate((s) => s === document.activeElement)); i++) await page.keyboard.press('Tab');
    assert.equal(await svg.evaluate((s) => s === document.activeElement), true, 'Tab reaches the graph');
    const focused = async () => (await page.textContent('#flame-focus')).split('. ')[0];
    assert.equal(await focused(), '(all)');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focused(), 'main');
    await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)))); // the tooltip is placed on the next frame
    assert.match(await tipText(page), /^main\n.*\ntotal 12\.0 ms · 75\.0 % of busy time\nself 1\.00 ms/, 'its tooltip shown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    assert.equal(await focused(), ANONYMOUS);
    await page.keyboard.press('ArrowLeft');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focused(), 'shared');
    await page.keyboard.press('Enter');
    assert.equal(await svg.getAttribute('data-zoom'), await (await bar(page, 'shared')).getAttribute('data-i'));
    assert.match(await page.locator('#flame-chain').innerText(), /main[\s\S]*a[\s\S]*shared/);
    await page.keyboard.press('ArrowUp');
    assert.equal(await focused(), 'a');
    await page.keyboard.press('Escape');
    assert.equal(await svg.getAttribute('data-zoom'), '0');
    assert.equal(await focused(), 'shared', 'the keys where they were');
    await page.keyboard.press('Home');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('s');
    assert.match(await page.textContent('#sandwich-title'), /^main ·/);
    await page.keyboard.press('Backspace');
    assert.equal(await svg.evaluate((s) => s === document.activeElement), true, 'back from the sandwich, the graph has the keys again');
    assert.equal(await focused(), 'main');
    await page.keyboard.press('ArrowDown');
    assert.equal(await focused(), 'a');
    await page.keyboard.press('/');
    assert.equal(await page.evaluate(() => document.activeElement.id), 'flame-search');
    await page.keyboard.type('shared');
    assert.equal(await svg.locator('rect.hit').count(), 4);
    await page.keyboard.press('Backspace');
    assert.equal(await page.inputValue('#flame-search'), 'share', 'Backspace in the search box edits it');
    await page.locator('#flame-graph').screenshot({ path: path.join(ARTIFACTS, 'flame-keyboard.png') });
    await page.close();
  });

  test('a hostile report: chain, sandwich and keyboard show its strings as text and run nothing', async () => {
    const { page, errors } = await open('hostile');
    await page.click('#flame-svg rect[data-i="2"]');
    await page.click('#flame-sandwich-open');
    await page.locator('#sandwich-callees rect').first().hover();
    await page.keyboard.press('Escape');
    await page.locator('#flame-svg').focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => window.__pwned), undefined);
    assert.equal(await page.evaluate(() => document.scripts.length), 2);
    assert.equal(await page.locator('#flame-graph img, #flame-graph iframe, #flame-graph script').count(), 0);
    assert.match(await page.locator('#flame-chain').innerText(), /pwned|\\x|huge|emoji|שלום/);
    assert.deepEqual(errors, []);
    await page.close();
  });

  test('on the 100 k-sample report a zoom, back, the left-heavy toggle, a sandwich, keys and search each take under 100 ms', async () => {
    const { page, errors } = await open('scale');
    // Each action's handler, and until the frame after it (style, layout and paint of the page
    // included), over 5 rounds: the best handler time is the one held to 100 ms, so that a busy
    // test machine's pauses do not count; the medians are printed beside it.
    const times = await page.evaluate(async () => {
      const frame = () => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve)));
      const runs = {};
      const time = async (name, fn) => {
        const t = performance.now();
        fn();
        const handler = performance.now() - t;
        await frame();
        (runs[name] ??= []).push([handler, performance.now() - t]);
      };
      const click = (el) => el.dispatchEvent(new MouseEvent('click', { bubbles: true }));
      const key = (k) => document.getElementById('flame-svg').dispatchEvent(new KeyboardEvent('keydown', { key: k, bubbles: true }));
      const $ = (id) => document.getElementById(id);
      const search = (term) => {
        $('flame-search').value = term;
        $('flame-search').dispatchEvent(new Event('input'));
      };
      const target = () => [...document.querySelectorAll('#flame-svg rect')].find((r) => r.getAttribute('y') === '54' && Number(r.getAttribute('width')) > 100);
      const out = { bars: document.querySelectorAll('#flame-svg rect').length };
      await frame();
      for (let round = 0; round < 5; round++) {
        const bar = target(); // drawn anew each round
        await time('zoom', () => click(bar));
        await time('sandwich', () => click($('flame-sandwich-open')));
        await time('back', () => click($('flame-back')));
        await time('reset', () => click($('flame-reset')));
        await time('leftHeavy', () => $('flame-heavy').click());
        out.note = $('flame-layout-note').textContent;
        await time('leftHeavyOff', () => $('flame-heavy').click());
        $('flame-svg').focus();
        await time('arrow', () => key('ArrowDown'));
        await time('enter', () => key('Enter'));
        await time('escape', () => key('Escape'));
        await time('search', () => search('parse'));
        await time('searchClear', () => search(''));
      }
      const round = (x) => Math.round(x * 10) / 10;
      const sorted = (xs) => xs.sort((x, y) => x - y);
      for (const [name, r] of Object.entries(runs)) {
        const handler = sorted(r.map((x) => x[0]));
        out[name] = [round(handler[0]), round(handler[2]), round(sorted(r.map((x) => x[1]))[2])]; // best, median; median to the next frame
      }
      return out;
    });
    console.log(`flame graph at scale, ms [best, median handler, median to next frame]: ${JSON.stringify(times)}`);
    assert.equal(times.note, 'this tree is merged and heaviest first already', 'a captured tree: the toggle says it changes nothing');
    for (const k of ['zoom', 'sandwich', 'back', 'reset', 'leftHeavy', 'leftHeavyOff', 'arrow', 'enter', 'escape', 'search', 'searchClear']) assert.ok(times[k][0] < 100, `${k}: ${times[k]} ms`);
    await page.locator('#flame-graph').screenshot({ path: path.join(ARTIFACTS, 'flame-scale.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
});

'use strict';
// The flame graph's page script, inlined and called by js/report/client.js with the data island's
// flame (`[name, location, category, depth, x, width]` per node) and the computations of
// js/report/flame-model.js. It draws the graph as SVG; click or Enter zooms and shows the call
// chain from the root; Back, Escape or Backspace go back; arrow keys move between frames (in
// the graph and in a sandwich's halves); `/` searches; S or the chain's button opens the sandwich
// of a function (its callers and callees over all its call sites); a toggle lays the graph out
// left heavy. Text and attributes only.

function flameClient(options) {
  'use strict';
  const { data: f, model, showTip } = options;
  const ROW = 18; // row height, px
  const MIN_PX = 0.5; // narrower bars are not drawn
  const $ = (id) => document.getElementById(id);
  const [search, status, chainEl, back, heavyBox, focusNote, tipEl] = ['flame-search', 'flame-status', 'flame-chain', 'flame-back', 'flame-heavy', 'flame-focus', 'tip'].map($);
  const [panel, title, facts, layoutNote] = ['flame-sandwich', 'sandwich-title', 'sandwich-facts', 'flame-layout-note'].map($);
  const busy = f.nodes[5] || 1;
  const ns = $('flame-svg').namespaceURI;
  let heavy = null; // the left-heavy layout, made on first use
  let history = []; // states to go back to
  let mode = 'graph';
  let subject = null; // the sandwich shown: model.sandwich()
  let term = '';

  const view = (svg, nodes, kind) => ({ svg, kind, nodes, up: model.parents(nodes), self: null, zoom: 0, cursor: -1, hits: null, shown: null });
  const g = view($('flame-svg'), f.nodes, 'graph');
  const callers = view($('sandwich-callers'), [], 'callers');
  const callees = view($('sandwich-callees'), [], 'callees');
  const views = [g, callers, callees];
  const at = (v, i, k) => v.nodes[i * 6 + k];
  const selfOf = (v, i) => (v.self ??= model.selfTimes(v.nodes, v.up))[i];
  const fmt = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`);
  const pct = (ms) => `${((100 * ms) / busy).toFixed(1)} %`;
  const short = (loc) => loc.replace(/^.*\/([^/]+\/[^/]+)$/, '…/$1');

  let measured = 0; // the graphs' width, px: measured once and on resize (reading it forces a layout of the page)
  const widthNow = () => (measured ||= g.svg.clientWidth || panel.clientWidth || 960);

  function draw(v) {
    const width = widthNow();
    const count = v.nodes.length / 6;
    const zx = count > 0 ? at(v, v.zoom, 4) : 0;
    const zw = (count > 0 && at(v, v.zoom, 5)) || 1;
    const zd = count > 0 ? at(v, v.zoom, 3) : 0;
    const scale = width / zw;
    const eps = zw * 1e-9;
    const frag = document.createDocumentFragment();
    const rows = []; // [element, depth, dy] to place once the depth is known
    v.shown = new Uint8Array(count);
    let depth = 0;
    for (let i = 0; i < count; i++) {
      const d = at(v, i, 3);
      const x = at(v, i, 4);
      const w = at(v, i, 5);
      let px;
      let pw;
      if (d < zd) {
        if (x > zx + eps || x + w < zx + zw - eps) continue; // not an ancestor of the zoomed bar
        px = 0;
        pw = width;
      } else {
        if (x + w <= zx + eps || x >= zx + zw - eps) continue; // outside the zoomed bar
        px = (x - zx) * scale;
        pw = w * scale;
        if (pw < MIN_PX) continue;
      }
      v.shown[i] = 1;
      depth = Math.max(depth, d);
      const rect = document.createElementNS(ns, 'rect');
      rect.setAttribute('x', px.toFixed(1));
      rect.setAttribute('width', Math.max(MIN_PX, pw - 1).toFixed(1));
      rect.setAttribute('height', String(ROW - 1));
      rect.setAttribute('class', `cat-${f.categories[at(v, i, 2)]}${d < zd ? ' ancestor' : ''}${v.hits?.has(i) ? ' hit' : ''}${i === v.cursor ? ' focus' : ''}`);
      rect.dataset.i = String(i);
      frag.append(rect);
      rows.push([rect, d, 0]);
      const chars = Math.floor((pw - 8) / 6.8);
      if (chars >= 3) {
        const name = f.strings[at(v, i, 0)];
        const label = document.createElementNS(ns, 'text');
        label.setAttribute('x', (px + 4).toFixed(1));
        label.textContent = name.length > chars ? `${name.slice(0, chars - 1)}…` : name;
        frag.append(label);
        rows.push([label, d, 12.5]);
      }
    }
    for (const [el, d, dy] of rows) el.setAttribute('y', String((v.kind === 'callers' ? depth - d : d) * ROW + dy)); // callers: the function at the bottom
    const height = (depth + 1) * ROW;
    v.svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    v.svg.setAttribute('height', String(height));
    v.svg.dataset.zoom = String(v.zoom);
    v.svg.classList.toggle('searching', v.hits !== null);
    v.svg.replaceChildren(frag);
  }

  /** The tooltip of bar `i` of view `v`: name, location, total and self time, what a click does. */
  function lines(v, i) {
    const w = at(v, i, 5);
    const head = v.kind === 'graph' && at(v, i, 3) === 0 ? [f.strings[at(v, i, 0)], 'the whole profile, idle left out'] : [f.strings[at(v, i, 0)], f.strings[at(v, i, 1)]];
    if (v.kind === 'callers' && i > 0) return [...head, `${fmt(w)} (${pct(w)} of busy time) of ${f.strings[subject.name]} came through here`, 'click for its callers and callees'];
    return [...head, `total ${fmt(w)} · ${pct(w)} of busy time`, `self ${fmt(selfOf(v, i))} · ${pct(selfOf(v, i))}`,
      `${f.categories[at(v, i, 2)]}${v.kind !== 'graph' ? ' · click for its callers and callees' : i === v.zoom ? '' : ' · click to zoom'}`];
  }

  const viewOf = (el) => views.find((v) => v.svg === el.closest('svg'));

  function tip(el) {
    const v = viewOf(el);
    const i = Number(el.dataset.i);
    return v && i < v.nodes.length / 6 ? lines(v, i) : null;
  }

  function searchIn(v) {
    if (term === '') return (v.hits = null);
    v.hits = new Set();
    const count = v.nodes.length / 6;
    for (let i = 0; i < count; i++) {
      if (f.strings[at(v, i, 0)].toLowerCase().includes(term) || f.strings[at(v, i, 1)].toLowerCase().includes(term)) v.hits.add(i);
    }
    return v.hits;
  }

  function find() {
    term = search.value.trim().toLowerCase();
    for (const v of views) searchIn(v);
    if (g.hits === null) status.textContent = '';
    else {
      let ms = 0;
      let end = -Infinity; // where the last counted match ends: matches inside it (preorder) count once
      for (const i of g.hits) {
        if (at(g, i, 4) >= end - busy * 1e-9) {
          ms += at(g, i, 5);
          end = at(g, i, 4) + at(g, i, 5);
        }
      }
      const n = g.hits.size;
      status.textContent = `${n} ${n === 1 ? 'frame matches' : 'frames match'} · ${fmt(ms)} (${pct(ms)} of busy time)`;
    }
    redraw();
  }

  function redraw() {
    if (mode === 'graph') draw(g);
    else for (const v of [callers, callees]) draw(v);
  }

  /** The chain from the root to the zoomed frame: each caller's name, location and total; a click goes there. */
  function showChain() {
    chainEl.hidden = g.zoom === 0 || mode !== 'graph';
    if (chainEl.hidden) return chainEl.replaceChildren();
    const items = model.chain(g.up, g.zoom).map((j) => {
      const li = document.createElement('li');
      const b = document.createElement('button');
      b.type = 'button';
      b.dataset.chain = String(j);
      const loc = f.strings[at(g, j, 1)];
      for (const [cls, text] of [['fn', f.strings[at(g, j, 0)]], ['loc', j === 0 ? '' : short(loc)], ['muted', fmt(at(g, j, 5))]]) {
        if (text === '') continue;
        const span = document.createElement('span');
        span.className = cls;
        span.textContent = text;
        b.append(span, ' ');
      }
      b.title = loc;
      if (j === g.zoom) b.setAttribute('aria-current', 'true');
      li.append(b);
      return li;
    });
    const open = document.createElement('button');
    open.type = 'button';
    open.id = 'flame-sandwich-open';
    open.textContent = `Callers and callees of ${f.strings[at(g, g.zoom, 0)]}`;
    const li = document.createElement('li');
    li.className = 'open';
    li.append(open);
    chainEl.replaceChildren(...items, li);
  }

  function state() {
    return { mode, zoom: g.zoom, subject, cursor: g.cursor };
  }

  function apply(s) {
    mode = s.mode;
    g.zoom = s.zoom;
    g.cursor = s.cursor >= 0 ? s.cursor : s.zoom; // back: where the keys were
    subject = s.subject;
    panel.hidden = mode !== 'sandwich';
    g.svg.toggleAttribute('hidden', mode !== 'graph');
    if (mode === 'sandwich') {
      title.textContent = `${f.strings[subject.name]} · ${f.strings[subject.loc]}`;
      facts.textContent = `total ${fmt(subject.total)} (${pct(subject.total)} of busy time) · self ${fmt(subject.self)} (${pct(subject.self)}) · ${subject.sites} call ${subject.sites === 1 ? 'site' : 'sites'} merged`;
      for (const [v, nodes] of [[callers, subject.callers], [callees, subject.callees]]) Object.assign(v, view(v.svg, nodes, v.kind));
      for (const v of [callers, callees]) searchIn(v);
    }
    back.disabled = history.length === 0;
    showChain();
    redraw();
  }

  function go(next) {
    history.push(state());
    apply({ ...state(), ...next });
  }

  const zoomTo = (i) => (i === g.zoom && mode === 'graph' ? showChain() : go({ mode: 'graph', zoom: i, cursor: i }));
  const sandwichOf = (v, i) => go({ mode: 'sandwich', subject: model.sandwich(v.nodes, i, v.up, v.self ??= model.selfTimes(v.nodes, v.up)) });
  function goBack() {
    if (history.length > 0) apply(history.pop());
  }

  /** The sandwich of the function of bar `i` in a sandwich view: found at its first frame in the graph. */
  function sandwichFrom(v, i) {
    const [name, loc] = [at(v, i, 0), at(v, i, 1)];
    for (let j = 0; j < g.nodes.length / 6; j++) if (at(g, j, 0) === name && at(g, j, 1) === loc) return sandwichOf(g, j);
    return undefined;
  }

  function focusOn(i, v = g) {
    v.cursor = i;
    for (const r of v.svg.querySelectorAll('rect.focus')) r.classList.remove('focus');
    const rect = v.svg.querySelector(`rect[data-i="${i}"]`);
    if (!rect) return;
    rect.classList.add('focus');
    const text = lines(v, i);
    focusNote.textContent = text.join('. ');
    requestAnimationFrame(() => { // where the bar is, once the page is laid out anyway
      if (document.activeElement !== v.svg || v.cursor !== i) return;
      const box = rect.getBoundingClientRect();
      showTip(text, { clientX: box.left + Math.min(box.width / 2, 60), clientY: box.bottom });
    });
  }

  g.svg.addEventListener('click', (e) => {
    const rect = e.target.closest('rect[data-i]');
    if (!rect) return;
    zoomTo(Number(rect.dataset.i));
  });
  for (const v of [callers, callees]) {
    v.svg.addEventListener('click', (e) => {
      const rect = e.target.closest('rect[data-i]');
      if (rect) sandwichFrom(v, Number(rect.dataset.i));
    });
  }
  chainEl.addEventListener('click', (e) => {
    const b = e.target.closest('button');
    if (!b) return;
    if (b.id === 'flame-sandwich-open') sandwichOf(g, g.zoom);
    else zoomTo(Number(b.dataset.chain));
  });
  const KEYS = { ArrowUp: 'up', ArrowDown: 'down', ArrowLeft: 'left', ArrowRight: 'right' };
  g.svg.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey) return;
    const i = g.cursor >= 0 && g.shown[g.cursor] ? g.cursor : g.zoom;
    if (KEYS[e.key]) focusOn(model.step(g.nodes, g.up, i, KEYS[e.key], (j) => g.shown[j] === 1));
    else if (e.key === 'Enter' || e.key === ' ') {
      zoomTo(i);
      focusOn(i);
    } else if (e.key === 'Home') focusOn(g.zoom);
    else if (e.key === 's' || e.key === 'S') sandwichOf(g, i);
    else return;
    e.preventDefault();
  });
  g.svg.addEventListener('focus', () => g.svg.matches(':focus-visible') && focusOn(g.cursor >= 0 && g.shown[g.cursor] ? g.cursor : g.zoom));
  // A sandwich's halves: arrows as drawn (callers upside down), Enter opens the sandwich of the frame.
  const DRAWN_UP = { up: 'down', down: 'up', left: 'left', right: 'right' };
  for (const v of [callers, callees]) {
    v.svg.addEventListener('keydown', (e) => {
      if (e.altKey || e.ctrlKey || e.metaKey) return;
      const i = v.cursor >= 0 && v.shown[v.cursor] ? v.cursor : 0;
      const direction = v.kind === 'callers' ? DRAWN_UP[KEYS[e.key]] : KEYS[e.key];
      if (direction) focusOn(model.step(v.nodes, v.up, i, direction, (j) => v.shown[j] === 1), v);
      else if (e.key === 'Enter' || e.key === ' ') sandwichFrom(v, i);
      else return;
      e.preventDefault();
    });
    v.svg.addEventListener('focus', () => v.svg.matches(':focus-visible') && focusOn(v.cursor >= 0 && v.shown[v.cursor] ? v.cursor : 0, v));
  }
  for (const v of views) v.svg.addEventListener('blur', () => (tipEl.hidden = true));
  document.addEventListener('keydown', (e) => {
    const typing = e.target instanceof Element && e.target.closest('input, textarea, select, [contenteditable]');
    if (typing || e.altKey || e.ctrlKey || e.metaKey) return;
    if (e.key === '/') {
      e.preventDefault();
      search.focus();
      search.select();
    } else if ((e.key === 'Escape' || e.key === 'Backspace') && history.length > 0 && (mode === 'sandwich' || e.target === g.svg || e.target.closest?.('#flame-graph'))) {
      e.preventDefault();
      goBack();
      if (mode === 'graph' && (e.target === g.svg || document.activeElement === document.body)) g.svg.focus(); // back from a sandwich: to the graph
      if (mode === 'graph' && document.activeElement === g.svg) focusOn(g.shown[g.cursor] ? g.cursor : g.zoom);
    }
  });
  back.addEventListener('click', goBack);
  $('flame-reset').addEventListener('click', () => {
    history = [];
    apply({ mode: 'graph', zoom: 0, subject: null, cursor: -1 });
  });
  heavyBox.addEventListener('change', () => {
    const nodes = heavyBox.checked ? (heavy ??= model.leftHeavy(f.nodes)) : f.nodes;
    const same = heavy.length === f.nodes.length && heavy.every((x, k) => x === f.nodes[k]);
    layoutNote.textContent = heavyBox.checked && same ? 'this tree is merged and heaviest first already' : '';
    Object.assign(g, view(g.svg, nodes, 'graph'));
    history = [];
    searchIn(g); // the matches in the new layout
    apply({ mode: 'graph', zoom: 0, subject: null, cursor: -1 });
  });
  search.addEventListener('input', find);
  let pending = false;
  window.addEventListener('resize', () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      measured = 0;
      redraw();
    });
  });
  draw(g);
  return { tip };
}

module.exports = { flameClient };

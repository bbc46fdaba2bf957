'use strict';
// The page's script, inlined as `(client)()`: sortable tables, tooltips, the flame graph (drawn
// from the data island, zoomed by click, searched by name or file), and details opened for
// print. It runs in the browser only; it never writes HTML, only text and attributes.

function client() {
  'use strict';
  const ROW = 18; // flame graph row height, px
  const MIN_PX = 0.5; // narrower flame bars are not drawn
  const data = JSON.parse(document.getElementById('rloop-data').textContent);
  const tip = document.getElementById('tip');

  for (const th of document.querySelectorAll('table.sortable th')) {
    th.addEventListener('click', () => sort(th));
    th.addEventListener('keydown', (e) => {
      if (e.key === 'Enter' || e.key === ' ') {
        e.preventDefault();
        sort(th);
      }
    });
  }

  /** Sorts by `th`'s column: numbers largest first on the first click, text A to Z; again to reverse. */
  function sort(th) {
    const table = th.closest('table');
    const numeric = th.dataset.type === 'num';
    const first = numeric ? 'descending' : 'ascending';
    const order = th.getAttribute('aria-sort') === first ? (numeric ? 'ascending' : 'descending') : first;
    for (const other of table.querySelectorAll('th')) other.removeAttribute('aria-sort');
    th.setAttribute('aria-sort', order);
    const sign = order === 'ascending' ? 1 : -1;
    const key = (row) => {
      const cell = row.cells[th.cellIndex];
      const raw = cell.dataset.v ?? cell.textContent.trim();
      if (!numeric) return raw.toLowerCase();
      const n = Number(raw);
      return Number.isFinite(n) ? n : -Infinity;
    };
    const body = table.tBodies[0];
    const rows = [...body.rows].map((row) => [key(row), row]);
    rows.sort((a, b) => (a[0] < b[0] ? -sign : a[0] > b[0] ? sign : 0));
    body.append(...rows.map(([, row]) => row));
  }

  function showTip(lines, e) {
    tip.replaceChildren(...lines.map((line) => {
      const div = document.createElement('div');
      div.textContent = line;
      return div;
    }));
    tip.hidden = false;
    const { innerWidth: w, innerHeight: h } = window;
    const box = tip.getBoundingClientRect();
    tip.style.left = `${Math.max(4, Math.min(e.clientX + 14, w - box.width - 4))}px`;
    tip.style.top = `${e.clientY + 16 + box.height > h ? Math.max(4, e.clientY - box.height - 10) : e.clientY + 16}px`;
  }

  document.addEventListener('mousemove', (e) => {
    const target = e.target instanceof Element ? e.target.closest('[data-tip], [data-i]') : null;
    if (!target) {
      tip.hidden = true;
      return;
    }
    showTip(target.dataset.tip !== undefined ? target.dataset.tip.split('\n') : flameTip(Number(target.dataset.i)), e);
  });

  // Details closed on screen are opened for print, and closed again after.
  let opened = [];
  window.addEventListener('beforeprint', () => {
    opened = [...document.querySelectorAll('details:not([open])')];
    for (const d of opened) d.open = true;
  });
  window.addEventListener('afterprint', () => {
    for (const d of opened) d.open = false;
  });

  // The flame graph: nodes as [name, location, category, depth, x, width] (x, width in ms).
  const f = data.flame;
  const svg = document.getElementById('flame-svg');
  if (!f || !svg) return;
  const count = f.nodes.length / 6;
  const at = (i, k) => f.nodes[i * 6 + k];
  const total = at(0, 5) || 1;
  const search = document.getElementById('flame-search');
  const status = document.getElementById('flame-status');
  const ns = svg.namespaceURI;
  let zoom = 0;
  let hits = null; // indexes of the nodes that match the search

  function fmt(ms) {
    return ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
  }

  function flameTip(i) {
    return [
      f.strings[at(i, 0)],
      f.strings[at(i, 1)],
      `${fmt(at(i, 5))}, ${((100 * at(i, 5)) / total).toFixed(1)} % of the profile's busy time`,
      `${f.categories[at(i, 2)]}${i === zoom ? '' : ' · click to zoom'}`,
    ];
  }

  function draw() {
    const width = svg.clientWidth || 960;
    const zx = at(zoom, 4);
    const zw = at(zoom, 5) || total;
    const zd = at(zoom, 3);
    const scale = width / zw;
    const eps = zw * 1e-9;
    const frag = document.createDocumentFragment();
    let depth = 0;
    for (let i = 0; i < count; i++) {
      const d = at(i, 3);
      const x = at(i, 4);
      const w = at(i, 5);
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
      depth = Math.max(depth, d);
      const rect = document.createElementNS(ns, 'rect');
      rect.setAttribute('x', px.toFixed(1));
      rect.setAttribute('y', String(d * ROW));
      rect.setAttribute('width', Math.max(MIN_PX, pw - 1).toFixed(1));
      rect.setAttribute('height', String(ROW - 1));
      rect.setAttribute('class', `cat-${f.categories[at(i, 2)]}${d < zd ? ' ancestor' : ''}${hits && hits.has(i) ? ' hit' : ''}`);
      rect.dataset.i = String(i);
      frag.append(rect);
      const chars = Math.floor((pw - 8) / 6.8);
      if (chars >= 3) {
        const name = f.strings[at(i, 0)];
        const label = document.createElementNS(ns, 'text');
        label.setAttribute('x', (px + 4).toFixed(1));
        label.setAttribute('y', String(d * ROW + 12.5));
        label.textContent = name.length > chars ? `${name.slice(0, chars - 1)}…` : name;
        frag.append(label);
      }
    }
    const height = (depth + 1) * ROW;
    svg.setAttribute('viewBox', `0 0 ${width} ${height}`);
    svg.setAttribute('height', String(height));
    svg.dataset.zoom = String(zoom);
    svg.classList.toggle('searching', hits !== null);
    svg.replaceChildren(frag);
  }

  function find() {
    const term = search.value.trim().toLowerCase();
    if (term === '') {
      hits = null;
      status.textContent = '';
      return draw();
    }
    hits = new Set();
    let ms = 0;
    let end = -Infinity; // where the last counted match ends: matches inside it (preorder) count once
    for (let i = 0; i < count; i++) {
      const name = f.strings[at(i, 0)].toLowerCase();
      const loc = f.strings[at(i, 1)].toLowerCase();
      if (!name.includes(term) && !loc.includes(term)) continue;
      hits.add(i);
      if (at(i, 4) >= end - total * 1e-9) {
        ms += at(i, 5);
        end = at(i, 4) + at(i, 5);
      }
    }
    status.textContent = `${hits.size} ${hits.size === 1 ? 'frame matches' : 'frames match'} · ${fmt(ms)} (${((100 * ms) / total).toFixed(1)} % of busy time)`;
    draw();
  }

  svg.addEventListener('click', (e) => {
    const rect = e.target.closest('rect[data-i]');
    if (!rect) return;
    zoom = Number(rect.dataset.i);
    draw();
  });
  document.getElementById('flame-reset').addEventListener('click', () => {
    zoom = 0;
    draw();
  });
  search.addEventListener('input', find);
  let pending = false;
  window.addEventListener('resize', () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => {
      pending = false;
      draw();
    });
  });
  draw();
}

module.exports = { client };

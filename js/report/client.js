'use strict';
// The page's script, inlined as `(client)(model, flameClient)`: sortable tables, tooltips and
// details opened for print; the flame graph is js/report/client-flame.js, its computations
// js/report/flame-model.js. It runs in the browser only; it never writes HTML, only text and
// attributes.

function client(model, flameClient) {
  'use strict';
  const data = JSON.parse(document.getElementById('rloop-data').textContent);
  const tip = document.getElementById('tip');
  const f = data.flame;
  let flame = null; // the flame graph's script (js/report/client-flame.js), once drawn

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
    const lines = target.dataset.tip !== undefined ? target.dataset.tip.split('\n') : flame?.tip(target);
    if (!lines) {
      tip.hidden = true;
      return;
    }
    showTip(lines, e);
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

  flame = f && document.getElementById('flame-svg') ? flameClient({ data: f, model, showTip }) : null;
}

module.exports = { client };

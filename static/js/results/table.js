/* Table figures (designer/figures/base.py `table_figure`): the server builds the figure dict
 * (caption, headings, rows, row tones, how many rows to show); this draws it as a real HTML
 * <table> — selectable, copyable, read by screen readers, scrollable and sortable from the
 * keyboard — instead of a Plotly `table` trace (which is none of these and needs the full
 * plotly.js bundle). Colours are CSS classes (static/css/results.css), so dark mode follows.
 */

let tableSeq = 0;
const SHORT_CHARS = 24;

function cellText(v) {
  if (v === null || v === undefined) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

/** A sort key: numbers as numbers ("1,234 flows", "97.5%", 12), everything else as text. */
function sortKey(v) {
  if (typeof v === 'number') return v;
  const m = /^\s*(-?[\d,]*\.?\d+)/.exec(cellText(v));
  return m ? Number(m[1].replace(/,/g, '')) : cellText(v).toLowerCase();
}

function compare(a, b) {
  const ka = sortKey(a), kb = sortKey(b);
  if (typeof ka === typeof kb) return ka < kb ? -1 : ka > kb ? 1 : 0;
  return typeof ka === 'number' ? -1 : 1; // numbers before text
}

function el(tag, attrs, text) {
  const node = document.createElement(tag);
  Object.entries(attrs || {}).forEach(([k, v]) => node.setAttribute(k, v));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** A number, or a percentage the server formatted ("97.5%"): right-aligned so digits line up. */
const isNumeric = (v) => typeof v === 'number' || /^[-+]?\d[\d,.]*\s?%$/.test(cellText(v));

/**
 * A short value ("400 Gb/s / 400 Gb/s", "NVLink · nvlink4x5") breaks only after its separators, never
 * inside "400 Gb/s"; long text (a what-if detail) wraps as usual.
 */
function keepTogether(td, text) {
  if (text.length > SHORT_CHARS) { td.textContent = text; return td; }
  // Spans that do not wrap, joined by plain spaces: a copied cell reads as it did.
  text.split(/(?<=\s[·/→])\s/).forEach((part, i) => {
    if (i) td.appendChild(document.createTextNode(' '));
    td.appendChild(el('span', { class: 'fs-nobr' }, part));
  });
  return td;
}

function fillBody(tbody, order, meta) {
  const rows = meta.table.rows, tones = meta.tones || [];
  const shown = order.slice(0, meta.shown === undefined ? rows.length : meta.shown);
  tbody.replaceChildren(...shown.map((i) => {
    const tr = el('tr', tones[i] ? { class: `fs-tone-${tones[i]}` } : {});
    rows[i].forEach((v) => {
      const num = isNumeric(v);
      tr.appendChild(num ? el('td', { class: 'fs-num' }, cellText(v)) : keepTogether(el('td'), cellText(v)));
    });
    return tr;
  }));
}

function sortBy(table, meta, col) {
  const th = table.tHead.rows[0].cells[col];
  const dir = th.getAttribute('aria-sort') === 'ascending' ? 'descending' : 'ascending';
  Array.from(table.tHead.rows[0].cells).forEach((c) => c.setAttribute('aria-sort', 'none'));
  th.setAttribute('aria-sort', dir);
  const rows = meta.table.rows, sign = dir === 'ascending' ? 1 : -1;
  // Stable: equal keys keep the server's order (e.g. disconnected before rerouted).
  const order = rows.map((_, i) => i).sort((a, b) => sign * compare(rows[a][col], rows[b][col]) || a - b);
  fillBody(table.tBodies[0], order, meta);
}

/** Draw ``fig`` (a table figure) into ``target``, replacing what it held; returns the <table>. */
export function renderTable(target, fig) {
  const meta = fig.fabricscope || {}, rows = meta.table.rows, id = `fs-table-${++tableSeq}`;
  const table = el('table', { class: 'fs-dtable', id });
  const caption = el('caption');
  caption.appendChild(el('span', { class: 'fs-dtable-title', id: `${id}-title` }, meta.title || ''));
  const notes = [meta.subtitle];
  if (meta.shown !== undefined && meta.shown < rows.length) {
    notes.push(`first ${meta.shown.toLocaleString()} of ${rows.length.toLocaleString()} rows shown (CSV has all)`);
  }
  if (notes.some(Boolean)) caption.appendChild(el('span', { class: 'fs-dtable-sub' }, notes.filter(Boolean).join(' · ')));
  table.appendChild(caption);
  const head = el('tr');
  (meta.headers || meta.table.columns).forEach((h, col) => {
    const numeric = rows.length > 0 && rows.every((r) => isNumeric(r[col]) || r[col] === null);
    const th = el('th', { scope: 'col', 'aria-sort': 'none', ...(numeric ? { class: 'fs-num' } : {}) });
    const btn = el('button', { type: 'button', class: 'fs-sort', title: `Sort by ${h}` }, h);
    btn.addEventListener('click', () => sortBy(table, meta, col));
    th.appendChild(btn);
    head.appendChild(th);
  });
  table.appendChild(el('thead')).appendChild(head);
  fillBody(table.appendChild(el('tbody')), rows.map((_, i) => i), meta);
  // A focusable, labelled scroll box: arrow keys scroll a long table without a mouse.
  const wrap = el('div', { class: 'fs-dtable-wrap', tabindex: '0', role: 'region', 'aria-labelledby': `${id}-title` });
  wrap.appendChild(table);
  target.removeAttribute('role'); // the slot said role="img" for a drawing; a table speaks for itself
  target.removeAttribute('aria-label');
  target.replaceChildren(wrap);
  return table;
}

/** The table's data (every row, not only those shown) as tab-separated text for a spreadsheet. */
export function tableTsv(meta) {
  const clean = (v) => cellText(v).replace(/[\t\n]+/g, ' ');
  return [meta.table.columns, ...meta.table.rows].map((r) => r.map(clean).join('\t')).join('\n');
}

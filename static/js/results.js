/* Fabricscope result views (an ES module): draws the figures designer/figures built (embedded as
 * JSON in #fs-figures), themes them from the page's CSS variables (light / dark), and handles
 * what needs the browser: flow picker (path view), host drill-down, topology expanded/collapsed
 * toggle, sweep ranking click-through, and per-figure downloads (PNG, standalone HTML, CSV,
 * JSON). No framework, no network access except the vendored plotly.js and this page's server.
 * Table figures (fabricscope.view === 'table') are drawn as HTML tables (results/table.js).
 *
 * Every figure is built in Python. A picked flow or a clicked host is drawn from the figure the
 * server builds out of the slice of embedded data the page posts (results/slices.js); colours and
 * labels the page paints itself (the hop list) come from designer/figures/style.py (#fs-style).
 */
/* global Plotly */
import { flowLabel, hostSlice, pathSlice, pct, scaleColor } from './results/slices.js';
import { fitText, labelFits } from './results/labelfit.js';
import { renderTable, tableTsv } from './results/table.js';

const state = { rendered: {}, t0: performance.now(), currentTopology: 'topology' };
const ROOT = document.querySelector('.fs-results');

function readJson(id, fallback) {
  const el = document.getElementById(id);
  return el ? JSON.parse(el.textContent) : fallback;
}

function esc(s) {
  return String(s === null || s === undefined ? '' : s).replace(/[&<>"']/g, (c) => (
    { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c]));
}

// ------------------------------------------------------------------ server-built figures on demand
/** POST a data slice to /figures/<kind>/ and resolve to the figure dict the server builds. */
async function fetchFigure(kind, body) {
  const url = ROOT && ROOT.getAttribute(`data-figure-${kind}-url`);
  if (!url) throw new Error(`no figure URL for ${kind}`);
  const response = await fetch(url, {
    method: 'POST', credentials: 'same-origin', body: JSON.stringify(body),
    headers: { 'Content-Type': 'application/json', 'X-CSRFToken': ROOT.getAttribute('data-csrf') || '' },
  });
  if (!response.ok) throw new Error(`${kind} figure: HTTP ${response.status}`);
  return response.json();
}

// ------------------------------------------------------------------ theme from CSS variables
function cssVar(name, fallback) {
  const v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  return v || fallback;
}

function theme() {
  return { fg: cssVar('--fg', '#1b2230'), muted: cssVar('--muted', '#5a6477'), line: cssVar('--line', '#dce1e8'),
    surface: cssVar('--surface', '#ffffff') };
}

function themed(fig) {
  const t = theme(), layout = JSON.parse(JSON.stringify(fig.layout || {}));
  const grid = { gridcolor: t.line, linecolor: t.line, zerolinecolor: t.line };
  layout.paper_bgcolor = 'rgba(0,0,0,0)';
  layout.plot_bgcolor = 'rgba(0,0,0,0)';
  layout.font = { family: 'system-ui, -apple-system, "Segoe UI", sans-serif', size: 12, ...layout.font, color: t.fg };
  layout.hoverlabel = { ...layout.hoverlabel, bgcolor: t.surface, bordercolor: t.line, font: { color: t.fg, size: 12 } };
  Object.keys(layout).forEach((k) => {
    if (/^[xy]axis\d*$/.test(k)) layout[k] = { ...grid, ...layout[k] };
  });
  ['xaxis', 'yaxis'].forEach((k) => { if (!layout[k]) layout[k] = { ...grid }; });
  return { data: fig.data || [], layout };
}

// ------------------------------------------------------------------ rendering and downloads
function plotEl(key) { return document.querySelector(`[data-plot="${key}"]`); }

const isTable = (fig) => ((fig || {}).fabricscope || {}).view === 'table';

function drawn(key, el) {
  state.rendered[key] = performance.now() - state.t0;
  if (state.firstMs === undefined) {
    state.firstMs = performance.now(); state.firstKey = key;
    document.documentElement.setAttribute('data-first-figure', key);
  }
  addTools(el.closest('.fs-figure'), el);
}

function draw(key, fig, target) {
  const el = target || plotEl(key);
  if (!el || !fig) return Promise.resolve();
  el._fsFigure = fig;
  if (isTable(fig)) {
    renderTable(el, fig);
    drawn(key, el);
    return Promise.resolve();
  }
  const th = themed(fig);
  // Clear the "Drawing…" placeholder once; never under a live plot (Plotly.react diffs its DOM).
  if (!el.classList.contains('js-plotly-plot')) el.innerHTML = '';
  return Plotly.react(el, th.data, th.layout, fig.config || {}).then(() => {
    // Plotly.react resolves after plotly_afterplot; performance.now() counts from navigation start.
    drawn(key, el);
    if ((fig.fabricscope || {}).label_boxes || (fig.data || []).some((tr) => tr.meta && tr.meta.labels)) bindLabelFit(el);
  });
}

// ------------------------------------------------------------------ host labels that fit the zoom
// The rule (results/labelfit.js) and its numbers (#fs-style label_fit) are the figures' own
// (designer/figures/style.py LABEL_FIT): host-box labels via fit_label, node labels via
// label_fits (trace meta {labels, gaps}).

/** Node labels that fit between their row neighbours at `ppu` px per data unit (restyled in place). */
function fitNodeLabels(el, ppu) {
  const text = [], idx = [];
  (el.data || []).forEach((tr, i) => {
    const m = tr.meta;
    if (!m || !m.labels) return;
    const want = m.labels.map((t, j) => (labelFits(state.labelFit.node, t, m.gaps[j], ppu) ? t : ''));
    if (want.join('\u0001') !== (tr.text || []).join('\u0001')) { text.push(want); idx.push(i); }
  });
  if (idx.length) Plotly.restyle(el, { text }, idx);
}

/** Re-choose every host-box label (full, host name only, none) and node label for the current zoom. */
function fitLabels(el) {
  const boxes = ((el._fsFigure || {}).fabricscope || {}).label_boxes || [], xa = el._fullLayout && el._fullLayout.xaxis;
  if (!xa || !xa.range || !state.labelFit) return;
  const ppu = xa._length / Math.abs(xa.range[1] - xa.range[0]), update = {};
  fitNodeLabels(el, ppu);
  const notes = el.layout.annotations || [];
  boxes.forEach(([i, x0, x1, full, short, host]) => {
    const t = fitText(state.labelFit.box, (x1 - x0) * ppu, full, short);
    const html = t ? t.replace(host, `<b>${host}</b>`) : '';
    if (notes[i] && notes[i].text !== html) update[`annotations[${i}].text`] = html;
  });
  if (Object.keys(update).length) Plotly.relayout(el, update);
}

function bindLabelFit(el) {
  fitLabels(el);
  if (el._fsLabelFit) return;
  el._fsLabelFit = true;
  el.on('plotly_relayout', (ev) => {
    // Only a zoom or pan changes the fit; our own label edits must not loop.
    if (Object.keys(ev || {}).some((k) => /axis\.range|autorange/.test(k))) fitLabels(el);
  });
}

const TOOLS = [
  ['PNG', 'Download the figure as a PNG image', downloadPng],
  ['HTML', 'Download an interactive HTML file (works offline)', downloadHtml],
  ['CSV', "Download the figure's data as CSV", downloadCsv],
  ['JSON', "Download the figure's data as JSON", downloadJson],
];
// A table is already text: copy it (pastes into a spreadsheet) instead of picturing it.
const TABLE_TOOLS = [
  ['Copy', 'Copy the table (every row) as tab-separated text', copyTable],
  TOOLS[2], TOOLS[3],
];

function addTools(figureEl, el) {
  const bar = figureEl && figureEl.querySelector('.fs-figure-tools');
  if (!bar || bar.childElementCount) return;
  (isTable(el._fsFigure) ? TABLE_TOOLS : TOOLS).forEach(([label, title, action]) => {
    const btn = document.createElement('button');
    btn.type = 'button'; btn.className = 'fs-dl'; btn.textContent = label; btn.title = title;
    btn.setAttribute('data-download', label.toLowerCase());
    btn.addEventListener('click', () => action(el));
    bar.appendChild(btn);
  });
}

function fileName(el, ext) {
  const meta = (el._fsFigure || {}).fabricscope || {};
  const extra = meta.flow || meta.host || '';
  return `fabricscope-${meta.kind || 'figure'}${extra ? `-${extra}` : ''}`.replace(/[^A-Za-z0-9_.-]+/g, '_') + `.${ext}`;
}

function save(name, text, type) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(new Blob([text], { type }));
  a.download = name;
  document.body.appendChild(a);
  a.click();
  setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
}

function downloadPng(el) {
  Plotly.downloadImage(el, { format: 'png', scale: 2, filename: fileName(el, 'png').replace(/\.png$/, '') });
}

function csvCell(v) {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

function downloadCsv(el) {
  const t = ((el._fsFigure || {}).fabricscope || {}).table || { columns: [], rows: [] };
  const lines = [t.columns.map(csvCell).join(',')].concat(t.rows.map((r) => r.map(csvCell).join(',')));
  save(fileName(el, 'csv'), `${lines.join('\n')}\n`, 'text/csv');
}

function copyTable(el) {
  const text = tableTsv(el._fsFigure.fabricscope), btn = el.closest('.fs-figure').querySelector('[data-download=copy]');
  const done = (msg) => { btn.textContent = msg; setTimeout(() => { btn.textContent = 'Copy'; }, 1500); };
  if (!navigator.clipboard) { selectTable(el); done('Selected: Ctrl+C'); return; }
  navigator.clipboard.writeText(text).then(() => done('Copied'), () => { selectTable(el); done('Selected: Ctrl+C'); });
}

function selectTable(el) {
  const range = document.createRange();
  range.selectNodeContents(el.querySelector('table'));
  const sel = window.getSelection();
  sel.removeAllRanges(); sel.addRange(range);
}

function downloadJson(el) {
  const meta = (el._fsFigure || {}).fabricscope || {};
  save(fileName(el, 'json'), JSON.stringify({ kind: meta.kind, title: meta.title, table: meta.table }, null, 1),
    'application/json');
}

let plotlySource = null;
function downloadHtml(el) {
  const fig = el._fsFigure, script = document.querySelector('script[src*="plotly"]');
  const get = plotlySource ? Promise.resolve(plotlySource)
    : fetch(script.src).then((r) => r.text()).then((t) => { plotlySource = t; return t; });
  get.then((src) => {
    const payload = JSON.stringify({ data: fig.data, layout: fig.layout, config: fig.config }).replace(/</g, '\\u003c');
    const html = `<!doctype html><html><head><meta charset="utf-8"><title>${esc((fig.fabricscope || {}).kind || 'figure')}`
      + `</title><script>${src.replace(/<\/script/gi, '<\\/script')}</script></head><body><div id="f"></div><script>`
      + `var F=${payload};Plotly.newPlot("f",F.data,F.layout,F.config);</script></body></html>`;
    save(fileName(el, 'html'), html, 'text/html');
  });
}

// ------------------------------------------------------------------ path picker and hop list
/** The flow index of the picker: sent apart (#fs-path-index) and parsed only when first needed. */
function pathIndex(FIGS) {
  const meta = (FIGS.path || {}).fabricscope;
  if (meta && !meta.path_index) meta.path_index = readJson('fs-path-index', null);
  return meta ? meta.path_index : null;
}

function setupPicker(FIGS, STYLE) {
  const fig = FIGS.path, input = document.getElementById('fs-flow-search'), select = document.getElementById('fs-flow-select');
  if (!fig || !input || !select) return;
  const ix = pathIndex(FIGS);
  const note = document.querySelector('[data-picker-note]');
  if (!ix || !ix.flows.length) {
    input.disabled = true; select.hidden = true;
    if (note) note.textContent = 'This result lists no flows.';
    return;
  }
  const labels = ix.flows.map((r) => flowLabel(ix, r));
  const hay = labels.map((s) => s.toLowerCase());
  const LIMIT = 300;
  function fill() {
    const tokens = input.value.toLowerCase().split(/[\s,→>]+/).filter(Boolean);
    const hit = (i) => tokens.every((t) => hay[i].indexOf(t) >= 0);
    const matches = [];
    for (let i = 0; i < hay.length && matches.length < LIMIT; i++) if (hit(i)) matches.push(i);
    let total = matches.length;
    if (total === LIMIT) for (let j = matches[LIMIT - 1] + 1; j < hay.length; j++) if (hit(j)) total++;
    select.innerHTML = matches.map((i) => `<option value="${i}">${esc(labels[i])}</option>`).join('');
    if (note) {
      note.textContent = `${total ? `${total.toLocaleString()} matching${total > LIMIT ? ` (first ${LIMIT} shown)` : ''}`
        : 'No listed flow matches'} · ${ix.listed.toLocaleString()} flows listed${ix.total > ix.listed
        ? ` of ${ix.total.toLocaleString()} (unroutable, slowest and a sample)` : ''}`;
    }
  }
  function choose(i) {
    fetchFigure('path', pathSlice(ix, ix.flows[i]))
      .then((f2) => draw('path', f2).then(() => hopList(f2, STYLE)))
      .catch((err) => { if (note) note.textContent = `Could not draw this flow's path (${err.message}).`; });
  }
  input.addEventListener('input', fill);
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter' && select.options.length) { e.preventDefault(); select.selectedIndex = 0; choose(+select.value); }
  });
  select.addEventListener('change', () => { if (select.value !== '') choose(+select.value); });
  fill();
  const current = (fig.fabricscope || {}).flow;
  ix.flows.forEach((r, i) => { if (r[0] === current) select.value = String(i); });
}

function hopList(fig, STYLE) {
  const ol = document.querySelector('[data-hop-list]');
  if (!ol) return;
  const hops = (fig.fabricscope || {}).hops || [];
  if (!hops.length) { ol.innerHTML = '<li class="muted">No hops: the flow is unroutable or has no path.</li>'; return; }
  const labels = STYLE.tier_labels || {}, scale = STYLE.util_scale || [[0, '#3b7dd8'], [1, '#d7263d']];
  ol.innerHTML = hops.map((h) => {
    const u = h.utilization, w = Math.max(0, Math.min(1, u || 0)) * 100;
    return `<li class="${h.bottleneck ? 'fs-hop-bottleneck' : ''}"><span class="fs-hop-nodes">${esc(h.from)} → ${esc(h.to)}`
      + `</span><span class="fs-hop-tech">${esc(h.tech || '?')} · ${esc(labels[h.tier] || h.tier || '—')}</span>`
      + `<span class="fs-ubar" title="${pct(u)}"><span style="width:${w.toFixed(1)}%;background:${scaleColor(scale, u)}"></span></span>`
      + `<span class="fs-hop-u">${pct(u)}</span>${h.bottleneck ? '<strong class="fs-bad">bottleneck</strong>' : ''}</li>`;
  }).join('');
}

// ------------------------------------------------------------------ topology toggle and drill-down
function setupTopology(FIGS) {
  const toggle = document.querySelector('[data-topology-toggle]');
  if (toggle && FIGS.topology_collapsed) {
    toggle.hidden = false;
    toggle.querySelectorAll('[data-topology]').forEach((btn) => {
      btn.setAttribute('aria-pressed', btn.getAttribute('data-topology') === 'topology');
      btn.addEventListener('click', () => {
        const key = btn.getAttribute('data-topology');
        toggle.querySelectorAll('[data-topology]').forEach((b) => b.setAttribute('aria-pressed', b === btn));
        state.currentTopology = key;
        draw('topology', FIGS[key]).then(bindHostClick);
      });
    });
  }
  const close = document.querySelector('[data-host-close]');
  if (close) close.addEventListener('click', () => { document.getElementById('fs-host-detail').hidden = true; });
  bindHostClick();
}

function bindHostClick() {
  const el = plotEl('topology');
  if (!el || !el.on || el._fsBound) return;
  el._fsBound = true;
  el.on('plotly_click', (ev) => {
    const fig = el._fsFigure, details = fig && fig.fabricscope && fig.fabricscope.hosts;
    const pt = ev.points && ev.points[0];
    if (!details || !pt || !pt.customdata || !details.hosts[pt.customdata]) return;
    openHost(details, pt.customdata);
  });
}

function openHost(details, host) {
  const box = document.getElementById('fs-host-detail');
  box.hidden = false;
  box.querySelector('[data-host-title]').textContent = `Host ${host}`;
  return fetchFigure('host', hostSlice(details, host))
    .then((fig) => draw('host', fig))
    .then(() => box.scrollIntoView({ block: 'nearest' }))
    .catch((err) => { box.querySelector('[data-host-title]').textContent = `Host ${host}: could not draw (${err.message})`; });
}

// ------------------------------------------------------------------ sweep ranking click-through
function setupRanking(FIGS) {
  const el = plotEl('ranking');
  if (!el || !el.on) return;
  el.on('plotly_click', (ev) => {
    const pt = ev.points && ev.points[0], link = ((FIGS.ranking || {}).fabricscope || {}).link;
    if (!pt || pt.customdata === undefined || !link) return;
    window.location.href = `${link.replace('{index}', encodeURIComponent(pt.customdata))}#sec-whatif`;
  });
}

// ------------------------------------------------------------------ boot
function retheme() {
  document.querySelectorAll('[data-plot]').forEach((el) => {
    if (el._fsFigure && !isTable(el._fsFigure)) { const th = themed(el._fsFigure); Plotly.react(el, th.data, th.layout, el._fsFigure.config || {}); }
  });
}

const nextFrame = () => new Promise((r) => requestAnimationFrame(r));
const idle = () => new Promise((r) => (window.requestIdleCallback ? requestIdleCallback(r, { timeout: 300 }) : setTimeout(r, 50)));

function inView(el) {
  const r = el.getBoundingClientRect();
  return r.bottom > 0 && r.top < window.innerHeight;
}

/**
 * Draw the figures in view first (page order), then the one scrolled to, then the rest in idle
 * time: the first figure shows without waiting for the seven below the fold, and every view is
 * ready by the time one scrolls to it. Resolves when every figure is drawn.
 */
function drawVisibleFirst(keys, FIGS, STYLE) {
  const pending = new Set(keys);
  let chain = Promise.resolve();
  const drawOne = (k) => {
    if (!pending.has(k)) return;
    pending.delete(k);
    chain = chain.then(nextFrame).then(() => draw(k, FIGS[k]))
      .then(() => { if (k === 'path') hopList(FIGS.path, STYLE); });
  };
  keys.filter((k) => inView(plotEl(k))).forEach(drawOne);
  const io = window.IntersectionObserver ? new IntersectionObserver((entries) => {
    entries.forEach((e) => { if (e.isIntersecting) drawOne(e.target.getAttribute('data-plot')); });
  }, { rootMargin: '200px' }) : null;
  if (io) keys.forEach((k) => io.observe(plotEl(k)));
  return chain.then(idle).then(() => { keys.forEach(drawOne); return chain; })
    .then(() => { if (io) io.disconnect(); });
}

function boot(FIGS, STYLE) {
  state.labelFit = STYLE.label_fit || null; // no rule sent: labels stay as the figure chose them
  document.querySelectorAll('[data-figure]').forEach((fig) => {
    const key = fig.getAttribute('data-figure');
    if (!FIGS[key] && key !== 'host') fig.hidden = true;
  });
  const keys = Object.keys(FIGS).filter((k) => k !== 'topology_collapsed' && plotEl(k));
  const ready = drawVisibleFirst(keys, FIGS, STYLE).then(() => {
    setupTopology(FIGS); setupPicker(FIGS, STYLE); setupRanking(FIGS);
    state.totalMs = performance.now() - state.t0;
    document.documentElement.setAttribute('data-figures-ready', '1');
    return state;
  });
  // A handle for tests and the console; nothing on the page reads it.
  window.fabricscopeResults = {
    figures: FIGS, state, ready, draw,
    openHost: (h) => { const d = FIGS.topology && FIGS.topology.fabricscope.hosts; return d ? openHost(d, h) : null; },
  };
  if (window.matchMedia) {
    const mq = window.matchMedia('(prefers-color-scheme: dark)');
    if (mq.addEventListener) mq.addEventListener('change', retheme);
  }
}

const FIGURES = readJson('fs-figures', null);
if (FIGURES && typeof Plotly !== 'undefined') boot(FIGURES, readJson('fs-style', {}));

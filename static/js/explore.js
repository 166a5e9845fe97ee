/* The Explore pages (an ES module).
 * Form: counts the combinations the checked boxes make (the server refuses more than 256).
 * Result: a click on a chart marker picks its table row; ticking two rows and "Compare" shows the
 * two designs side by side (every figure of both point records, the differing ones marked). The
 * records are the page's own JSON (#explore-data): nothing is computed here but the layout.
 */

const LIMIT = 256;
const AXES = ['templates', 'fabrics', 'tiers', 'oversubscriptions', 'switches', 'nic_link_techs', 'planes'];

function countCombinations(form) {
  let n = 1;
  for (const name of AXES) {
    const k = form.querySelectorAll(`input[name="${name}"]:checked`).length;
    if (k) n *= k;
  }
  return n;
}

function wireForm(form) {
  const out = document.getElementById('explore-count');
  const update = () => {
    const n = countCombinations(form);
    out.textContent = `${n} design${n === 1 ? '' : 's'} to build and simulate` + (n > LIMIT ? ` — more than ${LIMIT}: uncheck some` : '');
    out.classList.toggle('fs-bad', n > LIMIT);
  };
  form.addEventListener('change', update);
  update();
}

const FIELDS = [
  ['label', 'design'], ['frontier', 'on the frontier'], ['usd_per_gpu', 'US$ per GPU'],
  ['network_usd_per_gpu', 'network US$ per GPU'], ['w_per_gpu', 'W per GPU'], ['network_w_per_gpu', 'network W per GPU'],
  ['step_s', 'slowest job step (s)'], ['step_score', 'step score'], ['gpus', 'GPUs'], ['hosts', 'hosts'],
  ['switches', 'switches'], ['tiers', 'switch tiers'], ['bisection_gbps_per_gpu', 'bisection (Gb/s per GPU)'],
  ['blast', 'blast radius'], ['plan_flags', 'floor-plan flags'], ['error', 'why infeasible'],
];

function show(v) {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'number') return Math.abs(v) >= 1000 ? v.toLocaleString('en-US', { maximumFractionDigits: 0 }) : String(Number(v.toPrecision(5)));
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  return String(v);
}

function valueOf(p, key) {
  if (key === 'blast') return p.blast_radius ? `${(100 * p.blast_radius.fraction).toFixed(1)} % (${p.blast_radius.switch})` : null;
  return p[key];
}

function sideBySide(a, b) {
  const table = document.createElement('table');
  table.className = 'data';
  table.id = 'explore-side-table';
  const head = table.createTHead().insertRow();
  for (const text of ['', `#${a.index}`, `#${b.index}`]) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = text;
    head.appendChild(th);
  }
  const body = table.createTBody();
  const rows = FIELDS.map(([k, name]) => [name, show(valueOf(a, k)), show(valueOf(b, k))]);
  const jobs = new Set([...(a.jobs || []), ...(b.jobs || [])].map((j) => j.id));
  for (const id of jobs) {
    const step = (p) => ((p.jobs || []).find((j) => j.id === id) || {}).step_time_s;
    rows.push([`job ${id}: step (s)`, show(step(a)), show(step(b))]);
  }
  for (const [name, x, y] of rows) {
    const tr = body.insertRow();
    if (x !== y) tr.className = 'fs-differs';
    for (const [i, text] of [name, x, y].entries()) {
      const cell = i ? tr.insertCell() : document.createElement('th');
      if (!i) { cell.scope = 'row'; tr.appendChild(cell); }
      cell.textContent = text;
    }
  }
  return table;
}

function wireResult(table) {
  const points = JSON.parse(document.getElementById('explore-data').textContent);
  const byIndex = new Map(points.map((p) => [p.index, p]));
  const button = document.getElementById('explore-compare');
  const side = document.getElementById('explore-side');
  const picked = () => [...table.querySelectorAll('.fs-pick:checked')].map((c) => Number(c.value));
  table.addEventListener('change', (ev) => {
    if (!ev.target.classList.contains('fs-pick')) return;
    let now = picked();
    if (now.length > 2) {  // keep the last two ticked
      ev.target.checked = true;
      for (const c of table.querySelectorAll('.fs-pick:checked')) if (c !== ev.target && now.length > 2) { c.checked = false; now = picked(); }
    }
    button.disabled = picked().length !== 2;
  });
  const compare = (a, b) => {
    side.replaceChildren(sideBySide(byIndex.get(a), byIndex.get(b)));
    side.hidden = false;
    side.scrollIntoView({ block: 'nearest' });
  };
  button.addEventListener('click', () => { const [a, b] = picked(); compare(a, b); });
  const pick = (index) => {
    table.querySelectorAll('tr[data-point]').forEach((tr) => tr.classList.toggle('fs-picked', Number(tr.dataset.point) === index));
    const row = table.querySelector(`tr[data-point="${index}"]`);
    if (row) row.scrollIntoView({ block: 'nearest' });
  };
  // The chart is drawn by results.js; hook its clicks once Plotly has given the element `.on`.
  let tries = 0;
  const hook = setInterval(() => {
    const el = document.querySelector('[data-plot="pareto"]');
    if (el && typeof el.on === 'function') {
      clearInterval(hook);
      el.on('plotly_click', (ev) => {
        const pt = ev.points && ev.points[0];
        const order = (((el._fsFigure || {}).fabricscope) || {}).points || [];
        if (pt && pt.curveNumber === 0) pick(order[pt.pointNumber]);
      });
    } else if (++tries > 100) clearInterval(hook);
  }, 100);
  window.fabricscopeExplore = { compare, pick };
}

const form = document.getElementById('explore-form');
if (form) wireForm(form);
const table = document.getElementById('explore-points');
if (table) wireResult(table);

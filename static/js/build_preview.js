/* Live preview on the New-topology page: posts the cluster fields to the build-preview API
   (nothing is saved) and shows counts and the bill of materials. An ES module; exports nothing. */

const form = document.getElementById('topology-new-form');
const box = document.getElementById('build-preview');
const FIELDS = ['template', 'hosts', 'fabric', 'rails', 'spines', 'storage', 'switch', 'oversubscription',
  'nic_link_tech', 'leaves_per_rail', 'planes'];
const INTS = new Set(['hosts', 'rails', 'spines', 'storage', 'leaves_per_rail', 'planes']);
let timer = null;
let generation = 0;

function spec() {
  const body = {};
  for (const name of FIELDS) {
    const el = form.elements[name];
    if (!el || el.value === '') continue;
    body[name] = INTS.has(name) ? Number.parseInt(el.value, 10) : name === 'oversubscription' ? Number(el.value) : el.value;
  }
  return body;
}

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text;
  return td;
}

function fillRows(table, rows, columns) {
  const tbody = table.querySelector('tbody');
  tbody.replaceChildren(...rows.map((r) => {
    const tr = document.createElement('tr');
    tr.append(...columns.map((c) => cell(c(r))));
    return tr;
  }));
  table.hidden = rows.length === 0;
}

function show(result) {
  const { summary, bom } = result;
  const count = bom.switches.reduce((n, r) => n + r.count, 0);
  const set = (k, v) => { box.querySelector(`[data-k="${k}"]`).textContent = v; };
  set('gpus', summary.gpus.toLocaleString());
  set('switches', count.toLocaleString());
  set('bisection', (bom.bisection_gbps / 1000).toFixed(1));
  set('power', bom.power.per_gpu_w == null ? '–' : bom.power.per_gpu_w.toFixed(1));
  box.querySelector('[data-preview-stats]').hidden = false;
  fillRows(box.querySelector('[data-preview-switches]'), bom.switches, [
    (r) => r.tier, (r) => r.model, (r) => r.count, (r) => (r.radix ? `${r.radix} × ${r.port_gbps}G` : '–'),
    (r) => r.ports_used, (r) => (r.ports_free == null ? '–' : r.ports_free)]);
  fillRows(box.querySelector('[data-preview-links]'), bom.links, [
    (r) => `${r.kind} (${r.tech})`, (r) => r.reach, (r) => r.ports, (r) => r.cables, (r) => r.transceivers]);
  const notes = box.querySelector('[data-preview-notes]');
  notes.replaceChildren(...bom.notes.map((n) => { const li = document.createElement('li'); li.textContent = n; return li; }));
  status(`${summary.hosts} hosts, ${summary.nodes.toLocaleString()} nodes, ${summary.links.toLocaleString()} links`);
}

function status(text, isError = false) {
  const el = box.querySelector('[data-preview-status]');
  el.textContent = text;
  el.classList.toggle('error', isError);
}

function problemsText(body) {
  const error = body && body.error;
  if (!error) return 'preview failed';
  const details = Array.isArray(error.details) ? error.details : [];
  return details.map((p) => `${p.path}: ${p.message}`).join(' · ') || error.message || 'preview failed';
}

async function preview() {
  const mine = ++generation;
  status('building…');
  const token = form.elements.csrfmiddlewaretoken ? form.elements.csrfmiddlewaretoken.value : '';
  try {
    const response = await fetch(box.dataset.url, {
      method: 'POST', credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-CSRFToken': token, Accept: 'application/json' },
      body: JSON.stringify(spec()),
    });
    const body = await response.json();
    if (mine !== generation) return; // a newer request is on its way
    if (!response.ok) {
      status(problemsText(body), true);
      return;
    }
    show(body);
  } catch (err) {
    if (mine === generation) status(`preview failed: ${err.message}`, true);
  }
}

if (form && box) {
  form.addEventListener('input', () => {
    const source = form.querySelector('input[name=source]:checked');
    if (source && source.value !== 'cluster') return;
    clearTimeout(timer);
    timer = setTimeout(preview, 400);
  });
  if (form.elements.hosts && form.elements.hosts.value) preview();
}

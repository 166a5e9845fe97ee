/* The cluster generator's form, shared by the New-topology page and the editor's Generate dialog
 * (both render templates/designer/_build_form.html): reads the fields marked data-build-param,
 * posts them to the build-preview API (nothing is saved) and shows counts, the bill of materials,
 * the generator's notes, and each problem next to the field it names. The preview asks for no
 * document ("document": false): the server counts the BOM from the spec, so a 100,000-GPU design
 * previews in well under a second. From the first keystroke until the answer, the shown numbers
 * are marked stale (box data-state="stale"/"busy", aria-busy) so an old answer is never read as new.
 *
 * An ES module. On the New page it attaches itself to #topology-new-form; the editor imports
 * attachBuildPreview / buildSpec (js/editor/generate.js).
 */

const DELAY_MS = 350; // typing pause before a preview request

/** The generator parameters of `root` as typed JSON: {template, hosts, ...}; blank fields left out. */
export function buildSpec(root) {
  const body = {};
  for (const el of root.querySelectorAll('[data-build-param]')) {
    if (el.dataset.type === 'bool') {  // a checkbox: sent only when ticked
      if (el.checked) body[el.dataset.buildParam] = true;
      continue;
    }
    const value = el.value.trim();
    if (value === '') continue;
    const type = el.dataset.type;
    body[el.dataset.buildParam] = type === 'int' ? Number.parseInt(value, 10) : type === 'float' ? Number(value) : value;
  }
  return body;
}

/** "path: message" of every problem of an API error body (or its message). */
export function problemsText(body) {
  const error = body && body.error;
  if (!error) return 'the preview failed';
  const details = Array.isArray(error.details) ? error.details : [];
  return details.map((p) => (p.path ? `${p.path}: ${p.message}` : p.message)).join(' · ') || error.message || 'the preview failed';
}

function cell(text) {
  const td = document.createElement('td');
  td.textContent = text == null ? '–' : String(text);
  return td;
}

function fillRows(table, rows, columns) {
  table.querySelector('tbody').replaceChildren(...rows.map((r) => {
    const tr = document.createElement('tr');
    tr.append(...columns.map((c) => cell(c(r))));
    return tr;
  }));
  table.hidden = rows.length === 0;
}

const fmt = (x, digits = 0) => (x == null || !Number.isFinite(x) ? '–' : x.toLocaleString(undefined, { maximumFractionDigits: digits }));

function oversubText(over) {
  const parts = Object.entries(over || {}).map(([tier, r]) => `${tier} ${fmt(r, 2)}:1`);
  return parts.length ? parts.join(', ') : '–';
}

/** Fill `box` (_build_preview.html) from a build-preview answer {summary, bom}. */
export function showPreview(box, result) {
  const { summary, bom } = result;
  if (!summary || !bom) throw new Error('the answer has no summary or bill of materials');
  const count = bom.switches.reduce((n, r) => n + r.count, 0);
  const set = (k, v) => { box.querySelector(`[data-k="${k}"]`).textContent = v; };
  set('gpus', fmt(summary.gpus));
  set('switches', fmt(count));
  set('bisection', fmt(bom.bisection_gbps / 1000, 1));
  set('power', fmt(bom.power && bom.power.per_gpu_w, 1));
  set('oversub', oversubText(bom.oversubscription));
  box.querySelector('[data-preview-stats]').hidden = false;
  fillRows(box.querySelector('[data-preview-switches]'), bom.switches, [
    (r) => (r.network === 'storage' ? `${r.tier} (storage)` : r.tier), (r) => r.model, (r) => fmt(r.count), (r) => (r.radix ? `${r.radix} × ${r.port_gbps}G` : '–'),
    (r) => fmt(r.ports_used), (r) => (r.ports_free == null ? '–' : fmt(r.ports_free)), (r) => fmt(r.power_w)]);
  fillRows(box.querySelector('[data-preview-links]'), bom.links, [
    (r) => `${r.kind} (${r.tech})`, (r) => r.reach, (r) => fmt(r.ports), (r) => fmt(r.cables), (r) => fmt(r.transceivers)]);
  const counted = box.querySelector('[data-preview-counted]');
  if (counted) counted.hidden = bom.links.length === 0;
  box.querySelector('[data-preview-notes]').replaceChildren(...(bom.notes || []).map((n) => {
    const li = document.createElement('li');
    li.textContent = n;
    return li;
  }));
}

/** Mark each located problem on its field (data-field="<name>"); clear the previous marks. */
function markFields(root, details) {
  for (const el of root.querySelectorAll('[data-preview-error]')) el.remove();
  // The server's errors on generator fields (after a refused submit) are the preview's now: the
  // preview re-judges those fields on every change, so one message per field, never two.
  for (const input of root.querySelectorAll('[data-build-param]')) {
    const field = input.closest('.field');
    if (!field) continue;
    for (const el of field.querySelectorAll('.errorlist:not([data-preview-error])')) el.remove();
    field.classList.remove('has-error');
  }
  for (const el of root.querySelectorAll('.field.has-preview-error')) el.classList.remove('has-preview-error', 'has-error');
  let first = null;
  for (const p of details) {
    const name = String(p.path || '').split(/[.[]/)[0];
    const field = name && root.querySelector(`.field[data-field="${CSS.escape(name)}"]`);
    if (!field) continue;
    field.classList.add('has-error', 'has-preview-error');
    const msg = document.createElement('span');
    msg.className = 'errorlist field-error';
    msg.dataset.previewError = '';
    msg.textContent = p.message;
    field.append(msg);
    first = first || field;
  }
  return first;
}

/**
 * Preview the build of `root`'s fields in `box` whenever one changes.
 * @param {HTMLElement} root element holding the [data-build-param] fields
 * @param {HTMLElement} box the preview section (#build-preview)
 * @param {{csrf?: string, active?: () => boolean, extra?: () => object}} [opts]
 * @returns {{refresh: () => Promise<boolean>, spec: () => object, ok: () => boolean}}
 */
export function attachBuildPreview(root, box, { csrf = '', active = () => true, extra = () => ({}), onResult = () => {} } = {}) {
  let timer = null;
  let generation = 0;
  let good = false;
  let pending = false; // a field changed after the request in flight was sent
  const status = (text, isError = false) => {
    const el = box.querySelector('[data-preview-status]');
    el.textContent = text;
    el.classList.toggle('error', isError);
    box.dataset.state = isError ? 'error' : 'ok';
    // A refused request shows no counts: the last good ones would describe another design.
    if (isError) for (const el of box.querySelectorAll('[data-preview-stats], [data-preview-counted], table, [data-preview-notes] li')) el.hidden = true;
    onResult(!isError);
  };
  const refresh = async () => {
    const mine = ++generation;
    clearTimeout(timer);
    box.querySelector('[data-preview-status]').textContent = 'Updating… the numbers below are for the previous values.';
    box.dataset.state = 'busy';
    box.setAttribute('aria-busy', 'true');
    pending = false;
    let response; let body;
    try {
      response = await fetch(box.dataset.url, {
        method: 'POST', credentials: 'same-origin',
        headers: { 'Content-Type': 'application/json', 'X-CSRFToken': csrf, Accept: 'application/json' },
        body: JSON.stringify({ ...buildSpec(root), ...extra(), document: false }),
      });
      body = await response.json();
    } catch (err) {
      if (mine === generation) { box.removeAttribute('aria-busy'); good = false; status(`preview failed: ${err.message}`, true); }
      return false;
    }
    if (mine !== generation) return false; // a newer request is on its way
    box.removeAttribute('aria-busy');
    const details = (body && body.error && Array.isArray(body.error.details)) ? body.error.details : [];
    markFields(root, response.ok ? [] : details);
    good = response.ok;
    if (!response.ok) { status(`Cannot build: ${problemsText(body)}`, true); return false; }
    try { showPreview(box, body); } catch (err) { good = false; status(`preview failed: ${err.message}`, true); return false; }
    const s = body.summary;
    status(`${fmt(s.hosts)} hosts · ${fmt(s.nodes)} devices · ${fmt(s.links)} links`);
    if (pending) box.dataset.state = 'stale'; // answered, but for values changed since
    return true;
  };
  const schedule = () => {
    if (!active()) return;
    clearTimeout(timer);
    pending = true;
    // Stale from the first keystroke, not only once the request leaves (350 ms later).
    if (box.dataset.state !== 'busy') {
      box.dataset.state = 'stale';
      box.querySelector('[data-preview-status]').textContent = 'Changed: updating the preview…';
    }
    timer = setTimeout(refresh, DELAY_MS);
  };
  root.addEventListener('input', schedule);
  root.addEventListener('change', schedule);
  return { refresh, spec: () => buildSpec(root), ok: () => good };
}

function attachNewPage() {
  const form = document.getElementById('topology-new-form');
  const box = form && form.querySelector('#build-preview');
  if (!box) return;
  const token = form.elements.csrfmiddlewaretoken ? form.elements.csrfmiddlewaretoken.value : '';
  const source = () => { const el = form.querySelector('input[name=source]:checked'); return el ? el.value : 'cluster'; };
  const preview = attachBuildPreview(form, box, { csrf: token, active: () => source() === 'cluster' });
  if (form.elements.hosts && form.elements.hosts.value && source() === 'cluster') preview.refresh();
}

if (typeof document !== 'undefined') attachNewPage();

/* Scenario builder, "Jobs sharing the cluster" mode: one row per job — id, its traffic (a
 * collective's kind and size over the job's own GPUs) and its placement (a policy and a GPU
 * count, or hosts picked from the design) — written as the `jobs` JSON the form posts
 * (docs/FORMATS.md, Jobs with placements). The JSON stays editable under "As JSON": a job the
 * rows cannot show (a DAG `job`, several patterns, explicit GPU ids, a period) is kept as it is
 * and shown as "edited as JSON". Plain form controls, so the keyboard works as everywhere.
 *
 * An ES module: the pure helpers are exported for unit tests.
 */

const UNITS = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 };
const ROW_KEYS = new Set(['id', 'patterns', 'placement']);

/* ================================================================ pure */
/** The one pattern of a job the row controls can show, or null (a DAG, several patterns…). */
function plainPattern(job) {
  const pats = job.patterns;
  const p = Array.isArray(pats) && pats.length === 1 ? pats[0] : null;
  if (!p || !Object.keys(job).every((k) => ROW_KEYS.has(k))) return null;
  return Object.keys(p).every((k) => ['id', 'kind', 'bytes', 'algorithm'].includes(k)) ? p : null;
}

/** A job object → a row the controls show, or {custom: job} when they cannot show it. */
export function rowOf(job) {
  const p = plainPattern(job);
  const place = job.placement || {};
  const hosts = Array.isArray(place.hosts);
  const policy = typeof place.policy === 'string' && Number.isInteger(place.gpus) && !place.free;
  if (!p || !(hosts || policy)) return { custom: job, id: job.id };
  const [value, unit] = sizeUnit(p.bytes || 0);
  return { id: job.id, kind: p.kind, value, unit, mode: hosts ? 'hosts' : 'policy',
           policy: place.policy || 'packed', gpus: place.gpus || 8, seed: place.seed ?? 0,
           hosts: hosts ? place.hosts.slice() : [] };
}

/** A row → the job object posted. */
export function jobOf(row) {
  if (row.custom) return { ...row.custom, id: row.id };
  const placement = row.mode === 'hosts' ? { hosts: row.hosts.slice() }
    : { policy: row.policy, gpus: Number(row.gpus), ...(row.policy === 'random' ? { seed: Number(row.seed) || 0 } : {}) };
  const bytes = Number(row.value) * (UNITS[row.unit] || 1);
  return { id: row.id, patterns: [{ id: row.kind, kind: row.kind, bytes }], placement };
}

/** 4e9 → [4, 'GB']. */
export function sizeUnit(bytes) {
  for (const u of ['TB', 'GB', 'MB', 'KB']) {
    if (bytes >= UNITS[u]) return [Math.round((bytes / UNITS[u]) * 1e6) / 1e6, u];
  }
  return [bytes, 'B'];
}

/** The first job id "job1", "job2", … not in `used`. */
export function nextJobId(used) {
  for (let i = 1; ; i += 1) if (!used.has(`job${i}`)) return `job${i}`;
}

/* ================================================================ DOM */
function el(tag, attrs = {}, children = []) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') node.textContent = v;
    else if (v !== false && v != null) node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children) node.append(c);
  return node;
}

function labelled(text, control) {
  return el('label', { class: 'field cj-field' }, [el('span', { class: 'label', text }), control]);
}

function options(select, choices, value) {
  for (const [v, label] of choices) select.append(el('option', { value: v, text: label, selected: v === value }));
  return select;
}

class JobRows {
  constructor(panel) {
    this.panel = panel;
    this.text = panel.querySelector('textarea[name="jobs"]');
    this.list = panel.querySelector('[data-job-rows]');
    this.config = JSON.parse(document.getElementById('cluster-picker').textContent);
    this.kinds = this.config.kinds.filter(([k]) => !['p2p', 'kv_transfer', 'storage_read', 'storage_write', 'host_offload'].includes(k));
    this.rows = [];
    panel.querySelector('[data-add-job]').addEventListener('click', () => this.add());
    this.text.addEventListener('change', () => this.load());
    this.load();
  }

  load() {
    let jobs = [];
    try { jobs = JSON.parse(this.text.value || '[]'); } catch { return; } // bad JSON: the server says where
    if (jobs && !Array.isArray(jobs) && Array.isArray(jobs.jobs)) jobs = jobs.jobs;
    if (!Array.isArray(jobs)) return;
    this.rows = jobs.filter((j) => j && typeof j === 'object').map(rowOf);
    this.draw();
  }

  save() { this.text.value = JSON.stringify(this.rows.map(jobOf), null, 1); }

  add() {
    const id = nextJobId(new Set(this.rows.map((r) => r.id)));
    this.rows.push({ id, kind: 'allreduce', value: 1, unit: 'GB', mode: 'policy', policy: 'packed', gpus: 8, seed: 0, hosts: [] });
    this.save();
    this.draw();
    this.list.lastElementChild.querySelector('input').focus();
  }

  draw() {
    this.list.replaceChildren(...this.rows.map((row, i) => this.rowElement(row, i)));
    this.panel.querySelector('[data-jobs-empty]').hidden = this.rows.length > 0;
  }

  rowElement(row, i) {
    const box = el('fieldset', { class: 'cj-row', 'data-job-row': i });
    box.append(el('legend', { text: `Job ${i + 1}` }));
    const id = el('input', { type: 'text', value: row.id, required: true, 'aria-label': `Job ${i + 1} id`, 'data-job-id': '' });
    id.addEventListener('input', () => { row.id = id.value; this.save(); });
    const remove = el('button', { type: 'button', class: 'btn btn-small', 'aria-label': `Remove job ${i + 1}`, text: 'Remove' });
    remove.addEventListener('click', () => { this.rows.splice(i, 1); this.save(); this.draw(); });
    box.append(el('div', { class: 'cj-line' }, [labelled('Id', id), remove]));
    if (row.custom) {
      box.append(el('p', { class: 'help', text: 'Edited as JSON (a step DAG, several patterns, explicit GPUs or a period): change it under "As JSON".' }));
      return box;
    }
    box.append(this.trafficLine(row, i), this.placementLine(row, i));
    return box;
  }

  trafficLine(row, i) {
    const kind = options(el('select', { 'aria-label': `Job ${i + 1} traffic`, 'data-job-kind': '' }), this.kinds, row.kind);
    const value = el('input', { type: 'number', min: '0', step: 'any', value: row.value, 'aria-label': `Job ${i + 1} message size`, 'data-job-bytes': '' });
    const unit = options(el('select', { 'aria-label': `Job ${i + 1} size unit` }), Object.keys(UNITS).map((u) => [u, u]), row.unit);
    kind.addEventListener('change', () => { row.kind = kind.value; this.save(); });
    value.addEventListener('input', () => { row.value = value.value; this.save(); });
    unit.addEventListener('change', () => { row.unit = unit.value; this.save(); });
    return el('div', { class: 'cj-line' }, [labelled('Traffic', kind), labelled('Size', value), labelled('Unit', unit)]);
  }

  placementLine(row, i) {
    const mode = options(el('select', { 'aria-label': `Job ${i + 1} placement`, 'data-job-mode': '' }),
      [['policy', 'by policy'], ['hosts', 'on hosts I pick']], row.mode);
    const line = el('div', { class: 'cj-line' }, [labelled('Placement', mode)]);
    const detail = row.mode === 'hosts' ? this.hostPicker(row, i) : this.policyFields(row, i);
    mode.addEventListener('change', () => { row.mode = mode.value; this.save(); this.draw(); this.focusRow(i, '[data-job-mode]'); });
    line.append(...detail);
    return line;
  }

  policyFields(row, i) {
    const policy = options(el('select', { 'aria-label': `Job ${i + 1} policy`, 'data-job-policy': '' }), this.config.policies, row.policy);
    const gpus = el('input', { type: 'number', min: '1', step: '1', value: row.gpus, 'aria-label': `Job ${i + 1} GPUs`, 'data-job-gpus': '' });
    const seed = el('input', { type: 'number', min: '0', step: '1', value: row.seed, 'aria-label': `Job ${i + 1} seed` });
    policy.addEventListener('change', () => { row.policy = policy.value; this.save(); this.draw(); this.focusRow(i, '[data-job-policy]'); });
    gpus.addEventListener('input', () => { row.gpus = gpus.value; this.save(); });
    seed.addEventListener('input', () => { row.seed = seed.value; this.save(); });
    const out = [labelled('Policy', policy), labelled('GPUs', gpus)];
    if (row.policy === 'random') out.push(labelled('Seed', seed));
    return out;
  }

  hostPicker(row, i) {
    const hosts = this.config.hosts;
    if (!hosts.length) { // a big design: hosts typed in (the picker would list thousands)
      const typed = el('input', { type: 'text', value: row.hosts.join(', '), placeholder: 'h0, h1, …', 'aria-label': `Job ${i + 1} hosts`, 'data-job-hosts': '' });
      typed.addEventListener('input', () => { row.hosts = typed.value.split(/[\s,]+/).filter(Boolean); this.save(); });
      return [labelled(`Hosts (of ${this.config.total})`, typed)];
    }
    const select = el('select', { multiple: true, size: String(Math.min(8, hosts.length)), 'aria-label': `Job ${i + 1} hosts`, 'data-job-hosts': '' });
    const taken = new Set(this.rows.filter((r, k) => k !== i && r.mode === 'hosts').flatMap((r) => r.hosts));
    for (const h of hosts) {
      select.append(el('option', { value: h, selected: row.hosts.includes(h), text: taken.has(h) ? `${h} (taken)` : h }));
    }
    select.addEventListener('change', () => { row.hosts = [...select.selectedOptions].map((o) => o.value); this.save(); });
    return [labelled('Hosts (Ctrl/⌘-click, Shift for a range)', select)];
  }

  focusRow(i, selector) {
    const node = this.list.children[i] && this.list.children[i].querySelector(selector);
    if (node) node.focus();
  }
}

export function initClusterJobs() {
  const panel = document.querySelector('[data-workload-panel="jobs"]');
  if (!panel || !document.getElementById('cluster-picker')) return null;
  const details = panel.querySelector('#jobs-json');
  if (details && !panel.querySelector('.errorlist')) details.open = false; // the rows show it
  return new JobRows(panel);
}

if (typeof document !== 'undefined') initClusterJobs();

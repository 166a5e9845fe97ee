/* Fabricscope editor — input/output: import files, export JSON/PNG, and the server calls (save a
 * revision, validate, host templates, server import, cluster generation) with their problem list.
 */
import { clone, Model, normalizeDocument } from './model.js';
import { applyPatch, saveBody } from './diff.js';
import { hostBlock } from './layout.js';
import { download, h } from './dom.js';
import { attachBuildPreview, buildSpec, problemsText } from '../build_preview.js';

/** fetch() JSON with the CSRF header; never throws: {status, ok, body} (status 0 on a network error). */
export async function requestJSON(url, { method = 'GET', body, csrf } = {}) {
  const headers = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (csrf) headers['X-CSRFToken'] = csrf;
  let resp;
  try {
    resp = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'same-origin' });
  } catch (err) {
    return { status: 0, ok: false, body: { error: { code: 'network', message: `Network error: ${err.message}` } } };
  }
  let data = null;
  const text = await resp.text();
  try { data = text ? JSON.parse(text) : null; } catch { data = { error: { code: 'bad_response', message: text.slice(0, 300) } }; }
  return { status: resp.status, ok: resp.ok, body: data };
}

// The comparison dialog's own style, added on first use (the editor's stylesheet is shared
// with pages that never show it).
const MATRIX_CSS = `
.fs-matrix-dialog { max-width: min(96vw, 1500px); width: auto; }
.fs-matrix-tables { display: flex; gap: 16px; flex-wrap: wrap; overflow: auto; max-height: 70vh; }
.fs-matrix { margin: 0; }
.fs-matrix table { border-collapse: collapse; font: 11px ui-monospace, SFMono-Regular, Menlo, monospace; }
.fs-matrix th, .fs-matrix td { border: 1px solid var(--fs-border, #ccc); padding: 1px 4px; text-align: center; }
.fs-matrix figcaption { font-weight: 600; margin-bottom: 4px; }
.fs-matrix td.fs-diff { outline: 3px solid var(--fs-danger, #c00); outline-offset: -2px; font-weight: 700; }`;

function ensureMatrixStyle() {
  if (document.getElementById('fs-matrix-style')) return;
  document.head.append(h('style', { id: 'fs-matrix-style' }, MATRIX_CSS));
}

/** The human message of an API error response. */
export function errorMessage(res) {
  const e = res.body && res.body.error;
  if (e && e.message) return e.message;
  if (res.body && res.body.detail) return res.body.detail;
  return `HTTP ${res.status}`;
}

/** The document of the revision `editor` edits, in getDocument()'s form: what a save's patch is
 * computed against (the revision as the server stored it, parsed again from the page when the
 * editor was opened from it; the last save replaces it). */
function savedBase(editor) {
  if (editor.savedDocument !== undefined) return editor.savedDocument;
  if (editor.revision == null) { editor.savedDocument = null; return null; }
  const fresh = typeof editor.config.readDocument === 'function';
  const stored = fresh ? editor.config.readDocument() : editor.config.document;
  editor.savedDocument = new Model(stored || {}, { own: fresh }).toJSON();
  return editor.savedDocument;
}

export const ioMethods = {
  /* ---------------------------------------------------------------- import / export */
  async importFile(file) {
    if (!file || this.readonly) return;
    const text = await file.text();
    this.els.file.value = '';
    // A topology document replaces the canvas; anything else is a server description
    // (NCCL XML, nvidia-smi topo -m, hwloc) that the server parses into one new host.
    if (!/^\s*[{[]/.test(text)) { await this.importServer(file.name, text); return; }
    let doc;
    try { doc = JSON.parse(text); } catch (err) { this.toast(`${file.name}: not valid JSON (${err.message})`, 'error'); return; }
    if (doc && doc.format === 'fabricscope.scenario/1' && doc.topology && typeof doc.topology === 'object') doc = doc.topology;
    if (!doc || !Array.isArray(doc.nodes)) { this.toast(`${file.name}: not a fabricscope.topology/1 document (no "nodes" list)`, 'error'); return; }
    this.replaceDocument(doc, `import ${file.name}`);
    this.toast(`Imported ${file.name}: ${doc.nodes.length} devices, ${(doc.links || []).length} links (Ctrl+Z to undo)`);
  },

  replaceDocument(doc, label) {
    const m = this.model;
    const next = normalizeDocument(doc);
    // Which groups open collapsed is view state: Editor.onModel sets it for the new document.
    m.apply([{ t: 'doc', id: '', before: clone(m.doc), after: next }], label);
    this.fit();
  },

  exportJSON(suffix = '') {
    const doc = this.getDocument();
    const name = `${(doc.name || 'topology').replace(/[^\w.-]+/g, '_')}${suffix}.json`;
    download(name, new Blob([JSON.stringify(doc, null, 2) + '\n'], { type: 'application/json' }));
    return name;
  },

  exportPNG() {
    const bg = getComputedStyle(this.canvas).getPropertyValue('--fs-bg').trim() || '#ffffff';
    const blob = this.cy.png({ output: 'blob', full: true, scale: 2, maxWidth: 8000, maxHeight: 8000, bg });
    download(`${(this.model.doc.name || 'topology').replace(/[^\w.-]+/g, '_')}.png`, blob);
  },

  /* ---------------------------------------------------------------- server: save, validate */
  openSave() {
    if (this.readonly) return;
    if (!this.urls.save) { this.toast('Saving is not available here.', 'error'); return; }
    const d = this.dialogs.save;
    d.returnValue = '';
    d.onclose = () => { if (d.returnValue === 'ok') this.save(d.querySelector('input[name=message]').value); };
    d.showModal();
  },

  async save(message) {
    const doc = this.getDocument();
    this.els.save.disabled = true;
    this.els.status.textContent = 'saving…';
    // The API's base_revision is 0 for a topology without any revision yet (a blank one), never null.
    const base = this.revision == null ? 0 : this.revision;
    // Issue 18: post only what changed since that revision (a 40 MB design saves in a few
    // hundred bytes), the whole document when that is smaller or there is no base.
    const out = saveBody(savedBase(this), doc, base, message || '');
    this.lastSave = { kind: out.kind, bytes: out.bytes };
    const res = await requestJSON(this.urls.save, { method: 'POST', csrf: this.config.csrf_token, body: out.body });
    this.els.save.disabled = false;
    if (res.status === 201 || res.status === 200) {
      const b = res.body || {};
      const rev = b.revision != null ? (typeof b.revision === 'object' ? b.revision.number : b.revision) : b.number;
      if (rev != null) this.revision = rev;
      this.savedDocument = doc;
      this.model.markSaved();
      this.clearProblems();
      this.toast(`Saved revision ${this.revision}`, 'ok');
    } else if (res.status === 409) {
      const cur = res.body && res.body.error && res.body.error.details && res.body.error.details.current_revision;
      const d = this.dialogs.conflict;
      d.querySelector('.fs-conflict-text').textContent = `You started from revision ${this.revision == null ? '(none)' : this.revision}; the latest is revision ${cur == null ? '?' : cur}.`;
      d.showModal();
    } else if (res.status === 400) {
      // a patch save's problems are located in the patched document, built the server's way
      this.showProblems(res.body, out.kind === 'patch' ? applyPatch(savedBase(this), out.body.patch) : doc);
      this.toast(`Not saved: ${errorMessage(res)}`, 'error');
    } else {
      this.toast(`Not saved: ${errorMessage(res)}`, 'error');
    }
    this.refreshChrome();
  },

  reloadLatest() {
    this.bypassUnload = true;
    window.location.reload();
  },

  async validate() {
    if (!this.urls.validate) return;
    const doc = this.getDocument();
    const res = await requestJSON(this.urls.validate, { method: 'POST', csrf: this.config.csrf_token, body: { document: doc } });
    const b = res.body || {};
    const problems = res.status === 400 ? b : b.problems && b.problems.length ? { error: { message: 'The document has problems', details: b.problems } } : null;
    if (res.ok && !problems) { this.clearProblems(); this.toast('Valid topology ✓', 'ok'); return; }
    if (problems) { this.showProblems(problems, doc); this.toast(errorMessage({ body: problems, status: res.status }), 'error'); return; }
    this.toast(`Validation failed: ${errorMessage(res)}`, 'error');
  },

  /** Map "nodes[3].id" / "links[12].b" / "groups[1]" paths of the sent document to elements. */
  resolvePath(path, doc) {
    // the revisions API locates problems under its `document` field (`document.links[12].b`)
    const mm = /^(?:document\.)?(nodes|links|groups)\[(\d+)\]/.exec(path || '');
    if (!mm) return null;
    const item = (doc[mm[1]] || [])[Number(mm[2])];
    if (!item) return null;
    return { kind: mm[1] === 'nodes' ? 'node' : mm[1] === 'links' ? 'link' : 'group', id: item.id };
  },

  showProblems(body, doc) {
    const err = (body && body.error) || {};
    const details = Array.isArray(err.details) ? err.details : [];
    this.problems = details.map((p) => ({ ...p, target: this.resolvePath(p.path, doc) }));
    this.view.setProblems(this.problems.filter((p) => p.target).map((p) => p.target));
    const S = this.els.problems;
    S.innerHTML = '';
    S.hidden = false;
    S.append(h('h3', {}, `${this.problems.length || 'Some'} problem${this.problems.length === 1 ? '' : 's'}`),
      h('p', { class: 'fs-hint' }, err.message || 'The server rejected the document.'),
      h('ol', { class: 'fs-problem-list' }, this.problems.map((p, i) => h('li', {},
        h('button', { type: 'button', class: 'fs-problem', 'data-problem': String(i), disabled: !p.target, title: p.target ? 'Show it on the canvas' : '',
          onclick: () => p.target && this.focusElement(p.target.kind, p.target.id) },
        h('code', {}, p.path || '(document)'), ' ', p.message || '')))),
      h('button', { type: 'button', class: 'fs-btn', onclick: () => this.clearProblems() }, 'Dismiss'));
  },

  clearProblems() {
    this.problems = [];
    if (this.view) this.view.setProblems([]);
    this.els.problems.hidden = true;
    this.els.problems.innerHTML = '';
  },

  /* ---------------------------------------------------------------- server: templates, server import, generate */
  templateUrl(name, hostId) {
    const raw = this.urls.template_host || '';
    const enc = encodeURIComponent(name);
    let u = raw.replace(/<name>|\{name\}|__name__|%3Cname%3E/g, enc);
    const url = new URL(u, window.location.href);
    url.searchParams.set('host_id', hostId);
    return url.toString();
  },

  openInsertHost() {
    if (this.readonly) return;
    if (!this.templates.length || !this.urls.template_host) { this.toast('No host templates are available.', 'error'); return; }
    const d = this.dialogs.host;
    const f = d.querySelector('form');
    const m = this.model;
    f.host_id.value = m.uniqueId(m.doc.groups.some((g) => /^h\d+$/.test(g.id)) ? 'h0' : 'h0');
    const parent = f.parent;
    parent.innerHTML = '';
    parent.append(h('option', { value: '' }, '— top level —'), ...m.doc.groups.filter((g) => g.kind !== 'host').map((g) => h('option', { value: g.id }, `${g.id} (${g.kind})`)));
    const err = d.querySelector('.fs-dialog-error');
    err.hidden = true;
    d.returnValue = '';
    d.onclose = async () => {
      if (d.returnValue !== 'ok') return;
      const hostId = f.host_id.value.trim();
      if (m.idTaken(hostId)) { this.toast(`“${hostId}” is already used.`, 'error'); return; }
      await this.insertHost(f.template.value, hostId, f.parent.value || null);
    };
    d.showModal();
  },

  async importServer(name, text) {
    if (!this.urls.import_host) { this.toast(`${name}: only topology JSON can be imported here.`, 'error'); return null; }
    const hostId = this.model.uniqueId('h0');
    const res = await requestJSON(this.urls.import_host, { method: 'POST', csrf: this.config.csrf_token, body: { text, host_id: hostId } });
    if (!res.ok) { this.toast(`${name}: ${errorMessage(res)}`, 'error'); return null; }
    const warnings = (res.body && res.body.warnings) || [];
    const done = this.insertFragment(res.body.document, hostId, null, `import ${name}`);
    // The imported path matrix (and the file's, for nvidia-smi) stays available from the host's
    // properties ("Compare path matrix") for this session; it is not part of the document.
    if (done && res.body.matrix) (this.importMatrices || (this.importMatrices = {}))[hostId] = { name, format: res.body.format, matrix: res.body.matrix };
    if (done) this.toast(`Imported ${name} (${res.body.format}) as host ${hostId}` + (warnings.length ? ` · ${warnings.length} default${warnings.length > 1 ? 's' : ''} assumed: ${warnings[0]}${warnings.length > 1 ? ' …' : ''}` : ''), 'ok');
    return done;
  },

  /** The import dialog's comparison: the file's topo -m matrix (nvidia-smi) next to the
   * engine's for the imported host, differing cells marked in both. */
  showImportMatrix(hostId) {
    const entry = (this.importMatrices || {})[hostId];
    if (!entry) return false;
    ensureMatrixStyle();
    const mx = entry.matrix;
    const d = this.dialogs.matrix;
    const differ = new Set((mx.differ || []).map(([r, c]) => `${r}|${c}`));
    const table = (title, grid) => h('figure', { class: 'fs-matrix' }, h('figcaption', {}, title),
      h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, ''), mx.labels.map((c) => h('th', { title: mx.names[c] || c }, c)))),
        h('tbody', {}, mx.rows.map((r, i) => h('tr', {}, h('th', { title: mx.names[r] || r }, r),
          mx.labels.map((c, j) => {
            const code = grid[i][j] == null ? '' : grid[i][j];
            const cls = `pc pc-${code.toLowerCase().replace(/^nv\d+$/, 'nv')}${differ.has(`${r}|${c}`) ? ' fs-diff' : ''}`;
            return h('td', { class: cls, 'data-cell': `${r}|${c}` }, code);
          }))))));
    const tables = d.querySelector('.fs-matrix-tables');
    tables.innerHTML = '';
    const cells = mx.rows.length * mx.labels.length;
    let summary;
    if (mx.input) {
      tables.append(table(`In ${entry.name} (nvidia-smi topo -m)`, mx.input), table(`Imported as ${hostId} (engine)`, mx.engine));
      summary = differ.size ? `${differ.size} of ${cells} cells differ (marked): the file's matrix is not a PCIe tree the engine can reproduce exactly.`
        : `All ${cells} cells agree: the imported host routes as the server does.`;
    } else {
      tables.append(table(`Imported as ${hostId} (engine)`, mx.engine));
      summary = `${entry.name} (${entry.format}) holds no matrix: compare with \`nvidia-smi topo -m\` on the server.`;
    }
    d.querySelector('.fs-matrix-summary').textContent = summary;
    d.showModal();
    return true;
  },

  async insertHost(template, hostId, parent) {
    const res = await requestJSON(this.templateUrl(template, hostId));
    if (!res.ok) { this.toast(`Template ${template}: ${errorMessage(res)}`, 'error'); return null; }
    const done = this.insertFragment(res.body && res.body.document ? res.body.document : res.body, hostId, parent, `insert host ${hostId}`);
    if (done) this.toast(`Inserted ${hostId} from ${template}: ${this.model.doc.nodes.filter((n) => n.id.startsWith(hostId + '/')).length} devices`, 'ok');
    return done;
  },

  /** Add a one-host document's groups, nodes and links, laid out to the right of the canvas. */
  insertFragment(fragment, hostId, parent, label) {
    const m = this.model;
    const frag = normalizeDocument(fragment);
    const clash = [...frag.groups, ...frag.nodes].find((x) => m.idTaken(x.id)) || frag.links.find((l) => m.link(l.id));
    if (clash) { this.toast(`Cannot insert: “${clash.id}” already exists.`, 'error'); return null; }
    // Lay the host out as a block, to the right of everything that is already there.
    const tmp = new Model(frag);
    const block = hostBlock(tmp, frag.nodes.map((n) => n.id));
    let maxX = -Infinity; let minY = Infinity;
    for (const n of m.doc.nodes) { const p = this.view.posOf(n.id); maxX = Math.max(maxX, p[0]); minY = Math.min(minY, p[1]); }
    if (!isFinite(maxX)) { maxX = -block.width / 2 - 120; minY = 0; }
    const ox = maxX + 120 + block.width / 2;
    const ops = [];
    for (const g of frag.groups) {
      const ng = clone(g);
      if (parent && !frag.groups.some((x) => x.id === g.parent)) ng.parent = parent;
      ops.push(m.opAdd('group', ng));
    }
    for (const n of frag.nodes) {
      ops.push(m.opAdd('node', n));
      const p = block.pos.get(n.id) || [0, 0];
      ops.push(m.opPos(n.id, [ox + p[0], minY + p[1]]));
    }
    for (const l of frag.links) ops.push(m.opAdd('link', l));
    m.apply(ops, label);
    // On an empty canvas show the whole host; otherwise bring the new one into view.
    if (m.doc.nodes.length === frag.nodes.length) this.fit(); else this.focusElement('group', hostId);
    return hostId;
  },

  /** The Generate dialog: the New page's cluster form (build_preview.js) with its live preview;
   * Enter generates, Esc cancels; a request that cannot be built keeps the dialog open and says why. */
  openGenerate() {
    if (this.readonly) return;
    const d = this.dialogs.generate;
    const f = d.querySelector('form');
    const fields = f.querySelector('[data-build-form]');
    const box = f.querySelector('#build-preview');
    if (!this.urls.build || !fields || !box) { this.toast('Cluster generation is not available here.', 'error'); return; }
    if (!this.buildPreview) {
      box.dataset.url = this.urls.build;
      this.buildPreview = attachBuildPreview(fields, box, { csrf: this.config.csrf_token, active: () => d.open,
        onResult: (ok) => { if (ok) d.querySelector('.fs-dialog-error').hidden = true; } });
      f.addEventListener('submit', (ev) => this.onGenerateSubmit(ev, d, f, fields));
      f.addEventListener('keydown', (ev) => {
        // Implicit submission would press the first button (Cancel): Enter generates instead.
        if (ev.key !== 'Enter' || !(ev.target instanceof HTMLInputElement) || ev.target.type === 'radio') return;
        ev.preventDefault();
        f.requestSubmit(f.querySelector('button[value=ok]'));
      });
    }
    const err = d.querySelector('.fs-dialog-error');
    err.hidden = true;
    d.returnValue = '';
    d.showModal();
    const hosts = f.querySelector('[data-build-param=hosts]');
    if (hosts) { hosts.focus(); hosts.select(); }
    this.buildPreview.refresh();
  },

  async onGenerateSubmit(ev, d, f, fields) {
    if (!ev.submitter || ev.submitter.value !== 'ok') return; // Cancel closes the dialog
    ev.preventDefault();
    const err = d.querySelector('.fs-dialog-error');
    const button = ev.submitter;
    button.disabled = true;
    err.hidden = true;
    const res = await this.generate({ ...buildSpec(fields), name: this.model.doc.name }, f.merge.value, { inDialog: true });
    button.disabled = false;
    if (res === true) { d.close('ok'); return; }
    err.textContent = `Cannot build: ${res}`;
    err.hidden = false;
    this.buildPreview.refresh(); // marks the fields the problems name
  },

  /** Generate `params` (build-preview API) into the document: `mode` 'replace' or 'merge'.
   * @returns {Promise<true|string|false>} true, or (inDialog) the problems text, else false */
  async generate(params, mode, { inDialog = false } = {}) {
    this.toast(`Generating ${params.hosts} × ${params.template} (${params.fabric || 'rail-optimized'})…`);
    const res = await requestJSON(this.urls.build, { method: 'POST', csrf: this.config.csrf_token, body: params });
    if (!res.ok) {
      if (inDialog) { this.els.toast.hidden = true; return problemsText(res.body); }
      if (res.status === 400) this.showProblems(res.body, {});
      this.toast(`Generate failed: ${errorMessage(res)}`, 'error');
      return false;
    }
    const doc = res.body && res.body.document ? res.body.document : res.body;
    if (mode !== 'merge') { this.replaceDocument(doc, `generate ${params.hosts} × ${params.template}`); return true; }
    const m = this.model;
    const frag = normalizeDocument(doc);
    const ops = [];
    let skipped = 0;
    for (const g of frag.groups) { if (m.group(g.id)) skipped += 1; else ops.push(m.opAdd('group', g)); }
    for (const n of frag.nodes) { if (m.idTaken(n.id)) skipped += 1; else ops.push(m.opAdd('node', n)); }
    for (const l of frag.links) { if (m.link(l.id)) skipped += 1; else ops.push(m.opAdd('link', l)); }
    m.apply(ops, `merge ${params.hosts} × ${params.template}`);
    this.view.relayout(); this.view.render(); this.fit();
    this.toast(`Merged: ${ops.length} items added${skipped ? `, ${skipped} already present (kept yours)` : ''}`, skipped ? 'error' : 'ok');
    return true;
  }
};

/* Fabricscope editor — adding a host: from a template, or from a server description the server
 * parses (NCCL topology XML, nvidia-smi topo -m, hwloc XML), laid out to the right of the
 * canvas; and the imported host's path matrix beside the engine's.
 *
 * Pure helpers (templateUrl, fragmentClash, fragmentOps, importedText, matrixSummary) are
 * unit-tested under Node with io.js's.
 */
import { toast } from './chrome.js';
import { h } from './dom.js';
import { errorMessage, requestJSON } from './http.js';
import { hostBlock } from './layout.js';
import { clone, Model, normalizeDocument } from './model.js';
import { fit, focusElement } from './viewport.js';

const HOST_GAP = 120; // px between the canvas's right edge and an inserted host

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

/* ================================================================ pure */
/** The host template endpoint for template `name` (the URL pattern names it `{name}` or a
 * variant), with `host_id`, resolved against `base`. */
export function templateUrl(pattern, name, hostId, base) {
  const u = (pattern || '').replace(/<name>|\{name\}|__name__|%3Cname%3E/g, encodeURIComponent(name));
  const url = new URL(u, base);
  url.searchParams.set('host_id', hostId);
  return url.toString();
}

/** The first item of `frag` whose id the document already has, or undefined. */
export function fragmentClash(model, frag) {
  return [...frag.groups, ...frag.nodes].find((x) => model.idTaken(x.id)) || frag.links.find((l) => model.link(l.id));
}

/** Where a block of `width` px goes: to the right of every device, top-aligned with them. */
function blockOrigin(model, posOf, width) {
  let maxX = -Infinity; let minY = Infinity;
  for (const n of model.doc.nodes) { const p = posOf(n.id); maxX = Math.max(maxX, p[0]); minY = Math.min(minY, p[1]); }
  if (!isFinite(maxX)) { maxX = -width / 2 - HOST_GAP; minY = 0; }
  return [maxX + HOST_GAP + width / 2, minY];
}

/**
 * Ops adding a one-host document `frag` (normalized) laid out as a block to the right of the
 * canvas; its top groups go inside `parent` when given.
 */
export function fragmentOps(model, posOf, frag, parent) {
  const block = hostBlock(new Model(frag), frag.nodes.map((n) => n.id));
  const [ox, oy] = blockOrigin(model, posOf, block.width);
  const ops = [];
  for (const g of frag.groups) {
    const ng = clone(g);
    if (parent && !frag.groups.some((x) => x.id === g.parent)) ng.parent = parent;
    ops.push(model.opAdd('group', ng));
  }
  for (const n of frag.nodes) {
    const p = block.pos.get(n.id) || [0, 0];
    ops.push(model.opAdd('node', n), model.opPos(n.id, [ox + p[0], oy + p[1]]));
  }
  for (const l of frag.links) ops.push(model.opAdd('link', l));
  return ops;
}

/** The toast of a server import: format, host, and the defaults the parser assumed. */
export function importedText(name, format, hostId, warnings) {
  const n = warnings.length;
  const assumed = n ? ` · ${n} default${n > 1 ? 's' : ''} assumed: ${warnings[0]}${n > 1 ? ' …' : ''}` : '';
  return `Imported ${name} (${format}) as host ${hostId}${assumed}`;
}

/** The matrix dialog's summary line. */
export function matrixSummary(entry, differCount) {
  const mx = entry.matrix;
  const cells = mx.rows.length * mx.labels.length;
  if (!mx.input) return `${entry.name} (${entry.format}) holds no matrix: compare with \`nvidia-smi topo -m\` on the server.`;
  return differCount ? `${differCount} of ${cells} cells differ (marked): the file's matrix is not a PCIe tree the engine can reproduce exactly.`
    : `All ${cells} cells agree: the imported host routes as the server does.`;
}

/* ================================================================ commands */
/** Add a one-host document's groups, nodes and links, laid out to the right of the canvas. */
export function insertFragment(ed, fragment, hostId, parent, label) {
  const m = ed.model;
  const frag = normalizeDocument(fragment);
  const clash = fragmentClash(m, frag);
  if (clash) { toast(ed, `Cannot insert: “${clash.id}” already exists.`, 'error'); return null; }
  m.apply(fragmentOps(m, (id) => ed.view.posOf(id), frag, parent), label);
  // On an empty canvas show the whole host; otherwise bring the new one into view.
  if (m.doc.nodes.length === frag.nodes.length) fit(ed); else focusElement(ed, 'group', hostId);
  return hostId;
}

export async function insertHost(ed, template, hostId, parent) {
  const res = await requestJSON(templateUrl(ed.urls.template_host, template, hostId, window.location.href));
  if (!res.ok) { toast(ed, `Template ${template}: ${errorMessage(res)}`, 'error'); return null; }
  const done = insertFragment(ed, res.body && res.body.document ? res.body.document : res.body, hostId, parent, `insert host ${hostId}`);
  if (done) toast(ed, `Inserted ${hostId} from ${template}: ${ed.model.doc.nodes.filter((n) => n.id.startsWith(hostId + '/')).length} devices`, 'ok');
  return done;
}

/** The insert-host dialog: template, host id, parent group. */
export function openInsertHost(ed) {
  if (ed.readonly) return;
  if (!ed.templates.length || !ed.urls.template_host) { toast(ed, 'No host templates are available.', 'error'); return; }
  const d = ed.dialogs.host;
  const f = d.querySelector('form');
  const m = ed.model;
  f.host_id.value = m.uniqueId('h0');
  f.parent.innerHTML = '';
  f.parent.append(h('option', { value: '' }, '— top level —'), ...m.doc.groups.filter((g) => g.kind !== 'host').map((g) => h('option', { value: g.id }, `${g.id} (${g.kind})`)));
  d.querySelector('.fs-dialog-error').hidden = true;
  d.returnValue = '';
  d.onclose = async () => {
    if (d.returnValue !== 'ok') return;
    const hostId = f.host_id.value.trim();
    if (m.idTaken(hostId)) { toast(ed, `“${hostId}” is already used.`, 'error'); return; }
    await insertHost(ed, f.template.value, hostId, f.parent.value || null);
  };
  d.showModal();
}

/** A server description becomes one new host, parsed by the server. */
export async function importServer(ed, name, text) {
  if (!ed.urls.import_host) { toast(ed, `${name}: only topology JSON can be imported here.`, 'error'); return null; }
  const hostId = ed.model.uniqueId('h0');
  const res = await requestJSON(ed.urls.import_host, { method: 'POST', csrf: ed.config.csrf_token, body: { text, host_id: hostId } });
  if (!res.ok) { toast(ed, `${name}: ${errorMessage(res)}`, 'error'); return null; }
  const done = insertFragment(ed, res.body.document, hostId, null, `import ${name}`);
  if (!done) return done;
  // The imported path matrix (and the file's, for nvidia-smi) stays available from the host's
  // properties ("Compare path matrix") for this session; it is not part of the document.
  if (res.body.matrix) ed.server.importMatrices.set(hostId, { name, format: res.body.format, matrix: res.body.matrix });
  toast(ed, importedText(name, res.body.format, hostId, res.body.warnings || []), 'ok');
  return done;
}

function ensureMatrixStyle() {
  if (document.getElementById('fs-matrix-style')) return;
  document.head.append(h('style', { id: 'fs-matrix-style' }, MATRIX_CSS));
}

/** One matrix as a table; cells in `differ` ("row|col") marked. */
function matrixTable(mx, differ, title, grid) {
  const cell = (r, c, code) => {
    const cls = `pc pc-${code.toLowerCase().replace(/^nv\d+$/, 'nv')}${differ.has(`${r}|${c}`) ? ' fs-diff' : ''}`;
    return h('td', { class: cls, 'data-cell': `${r}|${c}` }, code);
  };
  return h('figure', { class: 'fs-matrix' }, h('figcaption', {}, title),
    h('table', {}, h('thead', {}, h('tr', {}, h('th', {}, ''), mx.labels.map((c) => h('th', { title: mx.names[c] || c }, c)))),
      h('tbody', {}, mx.rows.map((r, i) => h('tr', {}, h('th', { title: mx.names[r] || r }, r),
        mx.labels.map((c, j) => cell(r, c, grid[i][j] == null ? '' : grid[i][j])))))));
}

/** The import dialog's comparison: the file's topo -m matrix (nvidia-smi) next to the
 * engine's for the imported host, differing cells marked in both. */
export function showImportMatrix(ed, hostId) {
  const entry = ed.server.importMatrices.get(hostId);
  if (!entry) return false;
  ensureMatrixStyle();
  const mx = entry.matrix;
  const d = ed.dialogs.matrix;
  const differ = new Set((mx.differ || []).map(([r, c]) => `${r}|${c}`));
  const tables = d.querySelector('.fs-matrix-tables');
  tables.innerHTML = '';
  if (mx.input) tables.append(matrixTable(mx, differ, `In ${entry.name} (nvidia-smi topo -m)`, mx.input));
  tables.append(matrixTable(mx, differ, `Imported as ${hostId} (engine)`, mx.engine));
  d.querySelector('.fs-matrix-summary').textContent = matrixSummary(entry, differ.size);
  d.showModal();
  return true;
}

/* Fabricscope editor — input/output: import files, export JSON/PNG, save a revision, validate,
 * and the problem list the server's answers fill. Host templates and server imports are
 * hosts.js; cluster generation is generate.js.
 *
 * The exported pure functions (readImport, fileStem, savedRevision, conflictText,
 * validationProblems, resolvePath, locateProblems, savedBase) hold the decisions and are
 * unit-tested under Node; the commands take the editor state `ed` (state.js).
 */
import { toast } from './chrome.js';
import { applyPatch, saveBody } from './diff.js';
import { download, h } from './dom.js';
import { importServer } from './hosts.js';
import { errorMessage, requestJSON } from './http.js';
import { clone, Model, normalizeDocument } from './model.js';
import { fit, focusElement } from './viewport.js';

/* ================================================================ pure */
/**
 * What an imported file holds. A topology document replaces the canvas; a SimAI topology file
 * (its first line: nodes, GPUs per server, NVSwitches, switches, links[, GPU type]) is a whole
 * design the server converts (format simai-topo) and that replaces the canvas too; anything else
 * not JSON is a server description (NCCL XML, nvidia-smi topo -m, hwloc, rocm-smi) that the
 * server parses into one new host; a scenario brings its topology.
 * @returns {{server: true, format?: string}|{doc: object}|{error: string}}
 */
export function readImport(name, text) {
  if (SIMAI_TOPO_HEAD.test(text.slice(0, 400))) return { server: true, format: 'simai-topo' };
  if (!/^\s*[{[]/.test(text)) return { server: true };
  let doc;
  try { doc = JSON.parse(text); } catch (err) { return { error: `${name}: not valid JSON (${err.message})` }; }
  if (doc && doc.format === 'fabricscope.scenario/1' && doc.topology && typeof doc.topology === 'object') doc = doc.topology;
  if (!doc || !Array.isArray(doc.nodes)) return { error: `${name}: not a fabricscope.topology/1 document (no "nodes" list)` };
  return { doc };
}

/** SimAI's topology text starts with five counts and an optional GPU type (docs/FORMATS.md, "SimAI topology"). */
const SIMAI_TOPO_HEAD = /^\s*\d+[ \t]+\d+[ \t]+\d+[ \t]+\d+[ \t]+\d+(?:[ \t]+[\w.-]+)?[ \t]*\r?\n/;

/** A file name stem from the document's name ("My design" -> "My_design"). */
export function fileStem(doc) { return (doc.name || 'topology').replace(/[^\w.-]+/g, '_'); }

/** The revision number a save's answer names ({revision: n}, {revision: {number}}, {number}). */
export function savedRevision(body) {
  const b = body || {};
  if (b.revision == null) return b.number;
  return typeof b.revision === 'object' ? b.revision.number : b.revision;
}

/** The conflict dialog's text for a save based on `revision` that a newer one beat. */
export function conflictText(revision, body) {
  const err = (body && body.error) || {};
  const cur = err.details && err.details.current_revision;
  return `You started from revision ${revision == null ? '(none)' : revision}; the latest is revision ${cur == null ? '?' : cur}.`;
}

/** The problems of a validation answer as an API error body, or null when there are none: a
 * 400 is one already; a 200 may list `problems`. */
export function validationProblems(res) {
  const b = res.body || {};
  if (res.status === 400) return b;
  return b.problems && b.problems.length ? { error: { message: 'The document has problems', details: b.problems } } : null;
}

const PATH_KIND = { nodes: 'node', links: 'link', groups: 'group' };

/** Map "nodes[3].id" / "links[12].b" / "groups[1]" paths of the sent document to elements
 * ({kind, id}), null when the path names none. */
export function resolvePath(path, doc) {
  // the revisions API locates problems under its `document` field (`document.links[12].b`)
  const mm = /^(?:document\.)?(nodes|links|groups)\[(\d+)\]/.exec(path || '');
  if (!mm) return null;
  const item = (doc[mm[1]] || [])[Number(mm[2])];
  return item ? { kind: PATH_KIND[mm[1]], id: item.id } : null;
}

/** An API error body's message and its problems, each with its `target` element (or null). */
export function locateProblems(body, doc) {
  const err = (body && body.error) || {};
  const details = Array.isArray(err.details) ? err.details : [];
  return { message: err.message, problems: details.map((p) => ({ ...p, target: resolvePath(p.path, doc) })) };
}

/** The document of the revision the editor edits, in getDocument()'s form: what a save's patch
 * is computed against (the revision as the server stored it, parsed again from the page when
 * the editor was opened from it; the last save replaces it). Null before a first revision. */
export function savedBase(ed) {
  const s = ed.server;
  if (s.savedDocument !== undefined) return s.savedDocument;
  if (s.revision == null) { s.savedDocument = null; return null; }
  const fresh = typeof ed.config.readDocument === 'function';
  const stored = fresh ? ed.config.readDocument() : ed.config.document;
  s.savedDocument = new Model(stored || {}, { own: fresh }).toJSON();
  return s.savedDocument;
}

/* ================================================================ import / export */
export async function importFile(ed, file) {
  if (!file || ed.readonly) return;
  const text = await file.text();
  ed.els.file.value = '';
  const got = readImport(file.name, text);
  if (got.format === 'simai-topo') { await importDesign(ed, file.name, text, got.format); return; }
  if (got.server) { await importServer(ed, file.name, text); return; }
  if (got.error) { toast(ed, got.error, 'error'); return; }
  replaceDocument(ed, got.doc, `import ${file.name}`);
  toast(ed, `Imported ${file.name}: ${got.doc.nodes.length} devices, ${(got.doc.links || []).length} links (Ctrl+Z to undo)`);
}

/** A whole design in another tool's format (SimAI topology), converted by the server's import
 * preview (nothing saved), replaces the canvas as one undoable step. */
async function importDesign(ed, name, text, format) {
  if (!ed.urls.import_host) { toast(ed, `${name}: only topology JSON can be imported here.`, 'error'); return; }
  const res = await requestJSON(ed.urls.import_host, { method: 'POST', csrf: ed.config.csrf_token, body: { text, format, name: name.replace(/\.[^.]*$/, '').slice(0, 200) || 'imported' } });
  if (!res.ok) { toast(ed, `${name}: ${errorMessage(res)}`, 'error'); return; }
  const doc = res.body.document;
  replaceDocument(ed, doc, `import ${name}`);
  const warned = (res.body.warnings || []).length ? ` (${res.body.warnings.length} warnings)` : '';
  toast(ed, `Imported SimAI topology ${name}: ${doc.nodes.length} devices, ${(doc.links || []).length} links${warned} (Ctrl+Z to undo)`, 'ok');
}

/** Replace the whole document (one undoable step). Which groups open collapsed is view state:
 * the editor's model listener (app.js) sets it for the new document. */
export function replaceDocument(ed, doc, label) {
  const m = ed.model;
  m.apply([{ t: 'doc', id: '', before: clone(m.doc), after: normalizeDocument(doc) }], label);
  fit(ed);
}

export function exportJSON(ed, suffix = '') {
  const doc = ed.model.toJSON();
  const name = `${fileStem(doc)}${suffix}.json`;
  download(name, new Blob([JSON.stringify(doc, null, 2) + '\n'], { type: 'application/json' }));
  return name;
}

export function exportPNG(ed) {
  const bg = getComputedStyle(ed.canvas).getPropertyValue('--fs-bg').trim() || '#ffffff';
  const blob = ed.cy.png({ output: 'blob', full: true, scale: 2, maxWidth: 8000, maxHeight: 8000, bg });
  download(`${fileStem(ed.model.doc)}.png`, blob);
}

/* ================================================================ save, validate */
/** The save dialog; OK calls `onSave(message)`. */
export function openSave(ed, onSave) {
  if (ed.readonly) return;
  if (!ed.urls.save) { toast(ed, 'Saving is not available here.', 'error'); return; }
  const d = ed.dialogs.save;
  d.returnValue = '';
  d.onclose = () => { if (d.returnValue === 'ok') onSave(d.querySelector('input[name=message]').value); };
  d.showModal();
}

function onSaved(ed, res, doc, top) {
  const rev = savedRevision(res.body);
  if (rev != null) ed.server.revision = rev;
  ed.server.savedDocument = doc;
  ed.model.markSaved(top);
  clearProblems(ed);
  toast(ed, `Saved revision ${ed.server.revision}`, 'ok');
}

function onConflict(ed, res) {
  const d = ed.dialogs.conflict;
  d.querySelector('.fs-conflict-text').textContent = conflictText(ed.server.revision, res.body);
  d.showModal();
}

/** Save a revision: only what changed since the base revision (a 40 MB design saves in a few
 * hundred bytes), the whole document when that is smaller or there is no base. The caller
 * refreshes the status line after. */
export async function save(ed, message) {
  const doc = ed.model.snapshot();
  const top = ed.model.top();   // what this save holds: later edits stay unsaved (dirty)
  ed.els.save.disabled = true;
  ed.els.status.textContent = 'saving…';
  // The API's base_revision is 0 for a topology without any revision yet (a blank one), never null.
  const base = ed.server.revision == null ? 0 : ed.server.revision;
  const out = saveBody(savedBase(ed), doc, base, message || '');
  ed.server.lastSave = { kind: out.kind, bytes: out.bytes };
  const res = await requestJSON(ed.urls.save, { method: 'POST', csrf: ed.config.csrf_token, body: out.body, prefer: 'return=minimal' });
  ed.els.save.disabled = false;
  if (res.status === 201 || res.status === 200) { onSaved(ed, res, doc, top); return; }
  if (res.status === 409) { onConflict(ed, res); return; }
  // a patch save's problems are located in the patched document, built the server's way
  if (res.status === 400) showProblems(ed, res.body, out.kind === 'patch' ? applyPatch(savedBase(ed), out.body.patch) : doc);
  toast(ed, `Not saved: ${errorMessage(res)}`, 'error');
}

export function reloadLatest(ed) {
  ed.server.bypassUnload = true;
  window.location.reload();
}

export async function validate(ed) {
  if (!ed.urls.validate) return;
  const doc = ed.model.toJSON();
  const res = await requestJSON(ed.urls.validate, { method: 'POST', csrf: ed.config.csrf_token, body: { document: doc } });
  const problems = validationProblems(res);
  if (res.ok && !problems) { clearProblems(ed); toast(ed, 'Valid topology ✓', 'ok'); return; }
  if (problems) { showProblems(ed, problems, doc); toast(ed, errorMessage({ body: problems, status: res.status }), 'error'); return; }
  toast(ed, `Validation failed: ${errorMessage(res)}`, 'error');
}

/* ================================================================ problem list */
/** List the problems of an API error `body` about `doc` beside the canvas and mark them on it. */
export function showProblems(ed, body, doc) {
  const { message, problems } = locateProblems(body, doc);
  ed.server.problems = problems;
  ed.view.setProblems(problems.filter((p) => p.target).map((p) => p.target));
  const S = ed.els.problems;
  S.innerHTML = '';
  S.hidden = false;
  S.append(h('h3', {}, `${problems.length || 'Some'} problem${problems.length === 1 ? '' : 's'}`),
    h('p', { class: 'fs-hint' }, message || 'The server rejected the document.'),
    h('ol', { class: 'fs-problem-list' }, problems.map((p, i) => h('li', {},
      h('button', { type: 'button', class: 'fs-problem', 'data-problem': String(i), disabled: !p.target, title: p.target ? 'Show it on the canvas' : '',
        onclick: () => p.target && focusElement(ed, p.target.kind, p.target.id) },
      h('code', {}, p.path || '(document)'), ' ', p.message || '')))),
    h('button', { type: 'button', class: 'fs-btn', onclick: () => clearProblems(ed) }, 'Dismiss'));
}

export function clearProblems(ed) {
  ed.server.problems = [];
  if (ed.view) ed.view.setProblems([]);
  ed.els.problems.hidden = true;
  ed.els.problems.innerHTML = '';
}

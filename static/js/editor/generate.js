/* Fabricscope editor — the Generate dialog: the New page's cluster form (build_preview.js) with
 * its live preview; the generated cluster replaces the document or merges into it. */
import { attachBuildPreview, buildSpec, problemsText } from '../build_preview.js';
import { toast } from './chrome.js';
import { errorMessage, requestJSON } from './http.js';
import { showProblems, replaceDocument } from './io.js';
import { normalizeDocument } from './model.js';
import { fit } from './viewport.js';

/** Ops merging generated document `frag` (normalized) into the model: items whose id the
 * document already has are kept as they are and counted as `skipped`. */
export function mergeOps(model, frag) {
  const ops = [];
  let skipped = 0;
  const add = (t, item, present) => { if (present) skipped += 1; else ops.push(model.opAdd(t, item)); };
  for (const g of frag.groups) add('group', g, model.group(g.id));
  for (const n of frag.nodes) add('node', n, model.idTaken(n.id));
  for (const l of frag.links) add('link', l, model.link(l.id));
  return { ops, skipped };
}

function merge(ed, doc, params) {
  const { ops, skipped } = mergeOps(ed.model, normalizeDocument(doc));
  ed.model.apply(ops, `merge ${params.hosts} × ${params.template}`);
  ed.view.relayout(); ed.view.render(); fit(ed);
  toast(ed, `Merged: ${ops.length} items added${skipped ? `, ${skipped} already present (kept yours)` : ''}`, skipped ? 'error' : 'ok');
}

/** Generate `params` (build-preview API) into the document: `mode` 'replace' or 'merge'.
 * @returns {Promise<true|string|false>} true, or (inDialog) the problems text, else false */
export async function generate(ed, params, mode, { inDialog = false } = {}) {
  toast(ed, `Generating ${params.hosts} × ${params.template} (${params.fabric || 'rail-optimized'})…`);
  const res = await requestJSON(ed.urls.build, { method: 'POST', csrf: ed.config.csrf_token, body: params });
  if (!res.ok) {
    if (inDialog) { ed.els.toast.hidden = true; return problemsText(res.body); }
    if (res.status === 400) showProblems(ed, res.body, {});
    toast(ed, `Generate failed: ${errorMessage(res)}`, 'error');
    return false;
  }
  const doc = res.body && res.body.document ? res.body.document : res.body;
  if (mode === 'merge') merge(ed, doc, params);
  else replaceDocument(ed, doc, `generate ${params.hosts} × ${params.template}`);
  return true;
}

async function onGenerateSubmit(ed, ev, d, f, fields) {
  if (!ev.submitter || ev.submitter.value !== 'ok') return; // Cancel closes the dialog
  ev.preventDefault();
  const err = d.querySelector('.fs-dialog-error');
  const button = ev.submitter;
  button.disabled = true;
  err.hidden = true;
  const res = await generate(ed, { ...buildSpec(fields), name: ed.model.doc.name }, f.merge.value, { inDialog: true });
  button.disabled = false;
  if (res === true) { d.close('ok'); return; }
  err.textContent = `Cannot build: ${res}`;
  err.hidden = false;
  ed.server.buildPreview.refresh(); // marks the fields the problems name
}

/** Attach the live preview to the dialog's form, once. */
function attachPreview(ed, d, f, fields, box) {
  box.dataset.url = ed.urls.build;
  ed.server.buildPreview = attachBuildPreview(fields, box, { csrf: ed.config.csrf_token, active: () => d.open,
    onResult: (ok) => { if (ok) d.querySelector('.fs-dialog-error').hidden = true; } });
  f.addEventListener('submit', (ev) => onGenerateSubmit(ed, ev, d, f, fields));
  f.addEventListener('keydown', (ev) => {
    // Implicit submission would press the first button (Cancel): Enter generates instead.
    if (ev.key !== 'Enter' || !(ev.target instanceof HTMLInputElement) || ev.target.type === 'radio') return;
    ev.preventDefault();
    f.requestSubmit(f.querySelector('button[value=ok]'));
  });
}

/** The Generate dialog. Enter generates, Esc cancels; a request that cannot be built keeps the
 * dialog open and says why. */
export function openGenerate(ed) {
  if (ed.readonly) return;
  const d = ed.dialogs.generate;
  const f = d.querySelector('form');
  const fields = f.querySelector('[data-build-form]');
  const box = f.querySelector('#build-preview');
  if (!ed.urls.build || !fields || !box) { toast(ed, 'Cluster generation is not available here.', 'error'); return; }
  if (!ed.server.buildPreview) attachPreview(ed, d, f, fields, box);
  d.querySelector('.fs-dialog-error').hidden = true;
  d.returnValue = '';
  d.showModal();
  const hosts = f.querySelector('[data-build-param=hosts]');
  if (hosts) { hosts.focus(); hosts.select(); }
  ed.server.buildPreview.refresh();
}

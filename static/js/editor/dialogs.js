/* Fabricscope editor — the dialogs: new link, save, conflict, insert host, generate, imported
 * path matrix, keyboard help. Built once; the commands fill and open them. */
import { h } from './dom.js';
import { helpRows } from './keyboard.js';
import { fmtGbps } from './visible.js';

const menu = (...buttons) => h('menu', {}, ...buttons);
const cancel = () => h('button', { value: 'cancel', formnovalidate: true, class: 'fs-btn' }, 'Cancel');
const ok = (label, extra = {}) => h('button', { value: 'ok', class: 'fs-btn fs-primary', ...extra }, label);

/** A technology picker, grouped by family. */
export function techSelect(catalog) {
  const sel = h('select', { name: 'tech', required: true });
  for (const [fam, techs] of catalog.grouped()) {
    sel.append(h('optgroup', { label: fam }, techs.map((t) => h('option', { value: t.name }, `${t.name} — ${fmtGbps(t.effective)} eff / ${fmtGbps(t.raw)} raw`))));
  }
  return sel;
}

/** The link form's capacity and latency from its technology and basis. */
export function fillTech(f, catalog) {
  const t = catalog.tech(f.tech.value);
  if (!t) return;
  f.capacity.value = f.basis.value === 'raw' ? t.raw : t.effective;
  f.latency.value = t.latency;
}

function linkDialog(catalog) {
  const d = h('dialog', { class: 'fs-dialog', 'data-dialog': 'link' },
    h('form', { method: 'dialog' },
      h('h2', {}, 'New link'),
      h('p', { class: 'fs-ends' }),
      h('label', {}, 'Technology', techSelect(catalog)),
      h('fieldset', { class: 'fs-basis' }, h('legend', {}, 'Capacity basis'),
        h('label', {}, h('input', { type: 'radio', name: 'basis', value: 'effective', checked: true }), ' effective'),
        h('label', {}, h('input', { type: 'radio', name: 'basis', value: 'raw' }), ' raw line rate')),
      h('label', {}, 'Capacity (Gb/s per direction)', h('input', { type: 'number', name: 'capacity', min: '0', step: 'any' })),
      h('label', {}, 'Latency (ns)', h('input', { type: 'number', name: 'latency', min: '0', step: 'any' })),
      h('p', { class: 'fs-hint' }, 'Filled from the catalog; edit to override.'),
      menu(cancel(), ok('Add link'))));
  const f = d.querySelector('form');
  const fill = () => fillTech(f, catalog);
  f.tech.addEventListener('change', fill);
  for (const r of f.querySelectorAll('input[name=basis]')) r.addEventListener('change', fill);
  return d;
}

function saveDialog() {
  return h('dialog', { class: 'fs-dialog', 'data-dialog': 'save' },
    h('form', { method: 'dialog' }, h('h2', {}, 'Save revision'),
      h('label', {}, 'Message (optional)', h('input', { type: 'text', name: 'message', placeholder: 'What changed?', maxlength: '200' })),
      menu(cancel(), ok('Save'))));
}

function conflictDialog(cmd) {
  return h('dialog', { class: 'fs-dialog fs-danger-dialog', 'data-dialog': 'conflict', role: 'alertdialog' },
    h('form', { method: 'dialog' }, h('h2', {}, 'Someone saved a newer revision'),
      h('p', { class: 'fs-conflict-text' }),
      h('p', {}, 'Your changes were not saved and nothing was overwritten. Download your version first if you want to keep it, then reload the latest revision and re-apply your changes.'),
      menu(
        h('button', { type: 'button', class: 'fs-btn', 'data-action': 'conflict-export', onclick: () => cmd.exportJSON('-mine') }, 'Download my version'),
        h('button', { value: 'keep', class: 'fs-btn' }, 'Keep editing'),
        h('button', { type: 'button', class: 'fs-btn fs-primary', 'data-action': 'reload-latest', onclick: () => cmd.reloadLatest() }, 'Reload latest'))));
}

function hostDialog(templates) {
  return h('dialog', { class: 'fs-dialog', 'data-dialog': 'host' },
    h('form', { method: 'dialog' }, h('h2', {}, 'Insert host from template'),
      h('label', {}, 'Template', h('select', { name: 'template', required: true }, templates.map((t) => h('option', { value: t.name }, t.label)))),
      h('label', {}, 'Host id', h('input', { type: 'text', name: 'host_id', required: true, pattern: '[^\\s/]+' })),
      h('label', {}, 'Inside group (optional)', h('select', { name: 'parent' })),
      h('p', { class: 'fs-hint fs-dialog-error', hidden: true }),
      menu(cancel(), ok('Insert'))));
}

/** The Generate dialog is the New page's cluster form (templates/designer/_build_form.html,
 * printed by editor.html as <template id="fs-build-form">), with its live preview. */
function generateDialog() {
  const buildForm = document.getElementById('fs-build-form');
  return h('dialog', { class: 'fs-dialog fs-generate-dialog', 'data-dialog': 'generate', 'aria-labelledby': 'fs-generate-title' },
    h('form', { method: 'dialog', novalidate: true }, h('h2', { id: 'fs-generate-title' }, 'Generate cluster'),
      buildForm ? buildForm.content.cloneNode(true) : h('p', { class: 'fs-hint' }, 'Cluster generation is not available on this page.'),
      h('fieldset', {}, h('legend', {}, 'Into this document'),
        h('label', {}, h('input', { type: 'radio', name: 'merge', value: 'replace', checked: true }), ' replace everything'),
        h('label', {}, h('input', { type: 'radio', name: 'merge', value: 'merge' }), ' merge (keep what is there)')),
      h('p', { class: 'fs-hint fs-dialog-error', role: 'alert', hidden: true }),
      menu(cancel(), ok('Generate', { disabled: !buildForm }))));
}

function matrixDialog() {
  return h('dialog', { class: 'fs-dialog fs-matrix-dialog', 'data-dialog': 'matrix' },
    h('form', { method: 'dialog' }, h('h2', {}, 'Imported host: path matrix'),
      h('p', { class: 'fs-hint fs-matrix-summary' }),
      h('div', { class: 'fs-matrix-tables' }),
      menu(h('button', { value: 'close', class: 'fs-btn' }, 'Close'))));
}

function helpDialog(readonly) {
  return h('dialog', { class: 'fs-dialog fs-help', 'data-dialog': 'help' },
    h('form', { method: 'dialog' }, h('h2', {}, 'Keyboard shortcuts'),
      h('table', {}, h('tbody', {}, helpRows(readonly).map(([k, d]) => h('tr', {}, h('th', {}, h('kbd', {}, k)), h('td', {}, d))))),
      menu(h('button', { value: 'close', class: 'fs-btn' }, 'Close'))));
}

/** Every dialog by name (ed.dialogs). */
export function buildDialogs(ed, cmd) {
  return {
    link: linkDialog(ed.catalog), save: saveDialog(), conflict: conflictDialog(cmd), host: hostDialog(ed.templates),
    generate: generateDialog(), matrix: matrixDialog(), help: helpDialog(ed.readonly),
  };
}

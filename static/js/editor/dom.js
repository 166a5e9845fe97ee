/* Fabricscope editor — DOM helpers (h, appendAll, download) and the page the editor builds:
 * toolbar, palette, canvas, side panel and dialogs. The element handles land in `editor.els`.
 */
import { fmtGbps, KIND_STYLE, SPEED_BUCKETS } from './view.js';
import { SHORTCUTS } from './keyboard.js';

export const KIND_LABEL = {
  gpu: 'GPU', cpu: 'CPU socket', memory: 'Memory', pcie_switch: 'PCIe switch', nvswitch: 'NVSwitch',
  nic: 'NIC', nvme: 'NVMe', switch: 'Switch', storage: 'Storage',
};

/** Create an element: h("button", {class, onclick, ...}, ...children). */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) if (c != null && c !== false) el.append(c.nodeType ? c : document.createTextNode(String(c)));
  return el;
}

/** Element.append() would print "null" for the optional parts we leave out. */
export function appendAll(parent, ...children) {
  for (const c of children.flat()) if (c != null && c !== false) parent.append(c);
}

/** Save a Blob as a file through a temporary link. */
export function download(name, blob) {
  const a = h('a', { href: URL.createObjectURL(blob), download: name });
  document.body.append(a); a.click(); a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 5000);
}

export const domMethods = {
  /* ---------------------------------------------------------------- page structure */
  buildDom() {
    const r = this.root;
    r.classList.add('fs-editor');
    if (this.readonly) r.classList.add('fs-readonly');
    r.innerHTML = '';
    const btn = (label, title, onclick, extra = {}) => h('button', { type: 'button', class: 'fs-btn', title, onclick, ...extra }, label);
    this.els = {};
    const E = this.els;
    E.name = h('span', { class: 'fs-docname', title: 'Topology name' }, this.model.doc.name);
    E.status = h('span', { class: 'fs-status', role: 'status', 'aria-live': 'polite' });
    E.undo = btn('↶', 'Undo (Ctrl+Z)', () => this.undo(), { class: 'fs-btn fs-edit', 'data-action': 'undo', 'aria-label': 'Undo' });
    E.redo = btn('↷', 'Redo (Ctrl+Shift+Z / Ctrl+Y)', () => this.redo(), { class: 'fs-btn fs-edit', 'data-action': 'redo', 'aria-label': 'Redo' });
    E.connect = btn('⟷ Connect', 'Connect mode: click source then target (C)', () => this.toggleConnect(), { class: 'fs-btn fs-edit', 'data-action': 'connect', 'aria-pressed': 'false' });
    E.insertHost = btn('+ Host', 'Insert a host from a template', () => this.openInsertHost(), { class: 'fs-btn fs-edit', 'data-action': 'insert-host' });
    E.generate = btn('Generate…', 'Generate a cluster (template × hosts + fabric)', () => this.openGenerate(), { class: 'fs-btn fs-edit', 'data-action': 'generate' });
    E.importBtn = btn('Import', 'Import a topology JSON file, or a server as a new host: NCCL topology XML, nvidia-smi topo -m text, hwloc XML (or drop it on the canvas)', () => E.file.click(), { class: 'fs-btn fs-edit', 'data-action': 'import' });
    E.file = h('input', { type: 'file', accept: '.json,.xml,.txt,application/json,text/xml,application/xml,text/plain', hidden: true, onchange: (e) => this.importFile(e.target.files[0]) });
    E.exportJson = btn('⇩ JSON', 'Export the document as JSON', () => this.exportJSON(), { 'data-action': 'export-json' });
    E.exportPng = btn('⇩ PNG', 'Export the canvas as PNG', () => this.exportPNG(), { 'data-action': 'export-png' });
    E.validate = btn('Validate', 'Check the document on the server', () => this.validate(), { class: 'fs-btn fs-edit', 'data-action': 'validate' });
    E.save = btn('Save', 'Save a new revision (Ctrl+S)', () => this.openSave(), { class: 'fs-btn fs-primary fs-edit', 'data-action': 'save' });
    E.search = h('input', { type: 'search', class: 'fs-search', placeholder: 'Search…  ( / )', 'aria-label': 'Search devices and groups', autocomplete: 'off' });
    E.results = h('ul', { class: 'fs-results', role: 'listbox', hidden: true });
    E.labels = h('label', { class: 'fs-check', title: 'Link labels (L)' }, h('input', { type: 'checkbox', onchange: (e) => this.setEdgeLabels(e.target.checked) }), ' Link labels (L)');
    E.help = btn('?', 'Keyboard shortcuts (?)', () => this.toggleHelp(), { 'data-action': 'help', 'aria-label': 'Keyboard shortcuts' });
    const toolbar = h('div', { class: 'fs-toolbar', role: 'toolbar' },
      h('div', { class: 'fs-tb-group' }, E.name, E.status),
      h('div', { class: 'fs-tb-group fs-edit' }, E.undo, E.redo),
      h('div', { class: 'fs-tb-group fs-edit' }, E.connect, E.insertHost, E.generate),
      h('div', { class: 'fs-tb-group' }, h('span', { class: 'fs-edit' }, E.importBtn), E.file, E.exportJson, E.exportPng),
      h('div', { class: 'fs-tb-group fs-search-wrap' }, E.search, E.results),
      h('div', { class: 'fs-tb-group' }, E.help),
      h('div', { class: 'fs-tb-group fs-tb-end' }, E.validate, E.save));
    this.bindSearch();

    // Palette: kinds (click or drag), groups controls, legend.
    const kinds = this.catalog.nodeKinds.filter((k) => KIND_STYLE[k]);
    this.paletteKinds = kinds;
    const palette = h('aside', { class: 'fs-palette', 'aria-label': 'Palette' },
      h('h3', { class: 'fs-edit' }, 'Add device'),
      h('div', { class: 'fs-kinds fs-edit' }, kinds.map((k, i) => h('button', {
        type: 'button', class: 'fs-kind', draggable: 'true', 'data-kind': k,
        title: `${KIND_LABEL[k] || k} — click to place, or drag onto the canvas (key ${i + 1})`,
        onclick: () => this.placeNode(k, null),
        ondragstart: (e) => { e.dataTransfer.setData('application/x-fabricscope-kind', k); e.dataTransfer.effectAllowed = 'copy'; },
      }, h('span', { class: `fs-swatch fs-k-${k}` }), h('span', {}, KIND_LABEL[k] || k), h('kbd', {}, String(i + 1))))),
      h('h3', {}, 'Groups'),
      h('div', { class: 'fs-row' },
        btn('Collapse all', 'Collapse every host ( [ )', () => this.collapseAll(true), { 'data-action': 'collapse-all' }),
        btn('Expand all', 'Expand every host ( ] )', () => this.collapseAll(false), { 'data-action': 'expand-all' })),
      h('div', { class: 'fs-row fs-edit' }, btn('Re-layout', 'Forget hand-placed positions and lay out automatically', () => this.relayoutAll(), { 'data-action': 'relayout' })),
      h('h3', {}, 'Link speed'),
      h('div', { class: 'fs-row' }, E.labels),
      h('ul', { class: 'fs-legend' }, SPEED_BUCKETS.map(([, v, text]) => h('li', {}, h('span', { class: 'fs-line', style: `background: var(${v})` }), text))),
      h('h3', {}, 'Devices'),
      h('ul', { class: 'fs-legend fs-legend-kinds' }, kinds.map((k) => h('li', {}, h('span', { class: `fs-swatch fs-k-${k}` }), KIND_LABEL[k] || k))));

    this.canvas = h('div', { class: 'fs-canvas', tabindex: '0', 'aria-label': 'Topology canvas' });
    E.handle = h('div', { class: 'fs-handle', title: 'Drag to another device to connect', hidden: true });
    E.toast = h('div', { class: 'fs-toast', role: 'status', 'aria-live': 'polite', hidden: true });
    E.modeBanner = h('div', { class: 'fs-mode', hidden: true });
    E.footer = h('div', { class: 'fs-footer' });
    E.dropHint = h('div', { class: 'fs-drop-hint', hidden: true }, 'Drop a fabricscope.topology/1 JSON file to import it');
    E.empty = h('div', { class: 'fs-empty', hidden: true }, h('strong', {}, 'This topology is empty'),
      h('span', {}, this.readonly ? 'Nothing has been drawn yet.'
        : 'Drag a device from the palette, insert a server with “+ Host”, generate a cluster, or drop a JSON file here.'));
    const zoom = h('div', { class: 'fs-zoom' },
      btn('+', 'Zoom in (+)', () => this.zoomBy(1.25), { 'data-action': 'zoom-in' }),
      btn('−', 'Zoom out (−)', () => this.zoomBy(0.8), { 'data-action': 'zoom-out' }),
      btn('⤢', 'Fit (F)', () => this.fit(), { 'data-action': 'fit' }));
    const canvasWrap = h('div', { class: 'fs-canvas-wrap' }, this.canvas, E.empty, E.handle, zoom, E.modeBanner, E.toast, E.dropHint, E.footer);
    this.canvasWrap = canvasWrap;

    E.props = h('section', { class: 'fs-props', 'aria-label': 'Properties' });
    E.problems = h('section', { class: 'fs-problems', 'aria-label': 'Problems', hidden: true });
    const side = h('aside', { class: 'fs-side' }, E.problems, E.props);

    this.dialogs = this.buildDialogs();
    r.append(toolbar, h('div', { class: 'fs-body' }, palette, canvasWrap, side), ...Object.values(this.dialogs));
  },

  buildDialogs() {
    const D = {};
    const techSelect = () => {
      const sel = h('select', { name: 'tech', required: true });
      for (const [fam, techs] of this.catalog.grouped()) {
        sel.append(h('optgroup', { label: fam }, techs.map((t) => h('option', { value: t.name }, `${t.name} — ${fmtGbps(t.effective)} eff / ${fmtGbps(t.raw)} raw`))));
      }
      return sel;
    };
    this.techSelect = techSelect;
    // Tech picker (new link).
    D.link = h('dialog', { class: 'fs-dialog', 'data-dialog': 'link' },
      h('form', { method: 'dialog' },
        h('h2', {}, 'New link'),
        h('p', { class: 'fs-ends' }),
        h('label', {}, 'Technology', techSelect()),
        h('fieldset', { class: 'fs-basis' }, h('legend', {}, 'Capacity basis'),
          h('label', {}, h('input', { type: 'radio', name: 'basis', value: 'effective', checked: true }), ' effective'),
          h('label', {}, h('input', { type: 'radio', name: 'basis', value: 'raw' }), ' raw line rate')),
        h('label', {}, 'Capacity (Gb/s per direction)', h('input', { type: 'number', name: 'capacity', min: '0', step: 'any' })),
        h('label', {}, 'Latency (ns)', h('input', { type: 'number', name: 'latency', min: '0', step: 'any' })),
        h('p', { class: 'fs-hint' }, 'Filled from the catalog; edit to override.'),
        h('menu', {}, h('button', { value: 'cancel', formnovalidate: true, class: 'fs-btn' }, 'Cancel'), h('button', { value: 'ok', class: 'fs-btn fs-primary' }, 'Add link'))));
    const f = D.link.querySelector('form');
    const fill = () => {
      const t = this.catalog.tech(f.tech.value);
      if (!t) return;
      f.capacity.value = f.basis.value === 'raw' ? t.raw : t.effective;
      f.latency.value = t.latency;
    };
    f.tech.addEventListener('change', fill);
    for (const r of f.querySelectorAll('input[name=basis]')) r.addEventListener('change', fill);
    this.fillTech = fill;

    D.save = h('dialog', { class: 'fs-dialog', 'data-dialog': 'save' },
      h('form', { method: 'dialog' }, h('h2', {}, 'Save revision'),
        h('label', {}, 'Message (optional)', h('input', { type: 'text', name: 'message', placeholder: 'What changed?', maxlength: '200' })),
        h('menu', {}, h('button', { value: 'cancel', formnovalidate: true, class: 'fs-btn' }, 'Cancel'), h('button', { value: 'ok', class: 'fs-btn fs-primary' }, 'Save'))));

    D.conflict = h('dialog', { class: 'fs-dialog fs-danger-dialog', 'data-dialog': 'conflict', role: 'alertdialog' },
      h('form', { method: 'dialog' }, h('h2', {}, 'Someone saved a newer revision'),
        h('p', { class: 'fs-conflict-text' }),
        h('p', {}, 'Your changes were not saved and nothing was overwritten. Download your version first if you want to keep it, then reload the latest revision and re-apply your changes.'),
        h('menu', {},
          h('button', { type: 'button', class: 'fs-btn', 'data-action': 'conflict-export', onclick: () => this.exportJSON('-mine') }, 'Download my version'),
          h('button', { value: 'keep', class: 'fs-btn' }, 'Keep editing'),
          h('button', { type: 'button', class: 'fs-btn fs-primary', 'data-action': 'reload-latest', onclick: () => this.reloadLatest() }, 'Reload latest'))));

    const tplOptions = () => this.templates.map((t) => h('option', { value: t.name }, t.label));
    D.host = h('dialog', { class: 'fs-dialog', 'data-dialog': 'host' },
      h('form', { method: 'dialog' }, h('h2', {}, 'Insert host from template'),
        h('label', {}, 'Template', h('select', { name: 'template', required: true }, tplOptions())),
        h('label', {}, 'Host id', h('input', { type: 'text', name: 'host_id', required: true, pattern: '[^\\s/]+' })),
        h('label', {}, 'Inside group (optional)', h('select', { name: 'parent' })),
        h('p', { class: 'fs-hint fs-dialog-error', hidden: true }),
        h('menu', {}, h('button', { value: 'cancel', formnovalidate: true, class: 'fs-btn' }, 'Cancel'), h('button', { value: 'ok', class: 'fs-btn fs-primary' }, 'Insert'))));

    // The Generate dialog is the New page's cluster form (templates/designer/_build_form.html,
    // printed by editor.html as <template id="fs-build-form">), with its live preview.
    const buildForm = document.getElementById('fs-build-form');
    D.generate = h('dialog', { class: 'fs-dialog fs-generate-dialog', 'data-dialog': 'generate', 'aria-labelledby': 'fs-generate-title' },
      h('form', { method: 'dialog', novalidate: true }, h('h2', { id: 'fs-generate-title' }, 'Generate cluster'),
        buildForm ? buildForm.content.cloneNode(true) : h('p', { class: 'fs-hint' }, 'Cluster generation is not available on this page.'),
        h('fieldset', {}, h('legend', {}, 'Into this document'),
          h('label', {}, h('input', { type: 'radio', name: 'merge', value: 'replace', checked: true }), ' replace everything'),
          h('label', {}, h('input', { type: 'radio', name: 'merge', value: 'merge' }), ' merge (keep what is there)')),
        h('p', { class: 'fs-hint fs-dialog-error', role: 'alert', hidden: true }),
        h('menu', {}, h('button', { value: 'cancel', formnovalidate: true, class: 'fs-btn' }, 'Cancel'),
          h('button', { value: 'ok', class: 'fs-btn fs-primary', disabled: !buildForm }, 'Generate'))));

    D.matrix = h('dialog', { class: 'fs-dialog fs-matrix-dialog', 'data-dialog': 'matrix' },
      h('form', { method: 'dialog' }, h('h2', {}, 'Imported host: path matrix'),
        h('p', { class: 'fs-hint fs-matrix-summary' }),
        h('div', { class: 'fs-matrix-tables' }),
        h('menu', {}, h('button', { value: 'close', class: 'fs-btn' }, 'Close'))));

    D.help = h('dialog', { class: 'fs-dialog fs-help', 'data-dialog': 'help' },
      h('form', { method: 'dialog' }, h('h2', {}, 'Keyboard shortcuts'),
        h('table', {}, h('tbody', {}, SHORTCUTS.filter(([k]) => !this.readonly || /^(\?|\/|E|\[|H|L|F|\+|Esc|Shift\+drag)/.test(k)).map(([k, d]) => h('tr', {}, h('th', {}, h('kbd', {}, k)), h('td', {}, d))))),
        h('menu', {}, h('button', { value: 'close', class: 'fs-btn' }, 'Close'))));
    return D;
  },

  fitHeight() {
    const top = this.root.getBoundingClientRect().top + window.scrollY;
    this.root.style.height = `${Math.max(420, window.innerHeight - top)}px`;
    if (this.cy) this.cy.resize();
  }
};

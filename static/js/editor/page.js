/* Fabricscope editor — the page the editor builds in its root: toolbar, palette, canvas, side
 * panel and dialogs. Fills ed.els (the elements the modules update), ed.dialogs, ed.canvas,
 * ed.canvasWrap and ed.paletteKinds; every control runs a command of `cmd` (commands.js). */
import { KIND_STYLE, SPEED_BUCKETS } from './cystyle.js';
import { buildDialogs } from './dialogs.js';
import { h, KIND_LABEL } from './dom.js';

const btn = (label, title, onclick, extra = {}) => h('button', { type: 'button', class: 'fs-btn', title, onclick, ...extra }, label);
const EDIT = 'fs-btn fs-edit'; // hidden on a viewer's page

function toolbarControls(ed, cmd, E) {
  E.name = h('span', { class: 'fs-docname', title: 'Topology name' }, ed.model.doc.name);
  E.status = h('span', { class: 'fs-status', role: 'status', 'aria-live': 'polite' });
  E.undo = btn('↶', 'Undo (Ctrl+Z)', () => cmd.undo(), { class: EDIT, 'data-action': 'undo', 'aria-label': 'Undo' });
  E.redo = btn('↷', 'Redo (Ctrl+Shift+Z / Ctrl+Y)', () => cmd.redo(), { class: EDIT, 'data-action': 'redo', 'aria-label': 'Redo' });
  E.connect = btn('⟷ Connect', 'Connect mode: click source then target (C)', () => cmd.toggleConnect(), { class: EDIT, 'data-action': 'connect', 'aria-pressed': 'false' });
  E.insertHost = btn('+ Host', 'Insert a host from a template', () => cmd.openInsertHost(), { class: EDIT, 'data-action': 'insert-host' });
  E.generate = btn('Generate…', 'Generate a cluster (template × hosts + fabric)', () => cmd.openGenerate(), { class: EDIT, 'data-action': 'generate' });
  E.importBtn = btn('Import', 'Import a topology JSON file or a SimAI topology file (a whole design), or a server as a new host: NCCL topology XML, nvidia-smi topo -m text, hwloc XML, rocm-smi (or drop it on the canvas)', () => E.file.click(), { class: EDIT, 'data-action': 'import' });
  E.file = h('input', { type: 'file', accept: '.json,.xml,.txt,application/json,text/xml,application/xml,text/plain', hidden: true, onchange: (e) => cmd.importFile(e.target.files[0]) });
  E.exportJson = btn('⇩ JSON', 'Export the document as JSON', () => cmd.exportJSON(), { 'data-action': 'export-json' });
  E.exportPng = btn('⇩ PNG', 'Export the canvas as PNG', () => cmd.exportPNG(), { 'data-action': 'export-png' });
  E.validate = btn('Validate', 'Check the document on the server', () => cmd.validate(), { class: EDIT, 'data-action': 'validate' });
  E.save = btn('Save', 'Save a new revision (Ctrl+S)', () => cmd.openSave(), { class: 'fs-btn fs-primary fs-edit', 'data-action': 'save' });
  E.search = h('input', { type: 'search', class: 'fs-search', placeholder: 'Search…  ( / )', 'aria-label': 'Search devices and groups', autocomplete: 'off' });
  E.results = h('ul', { class: 'fs-results', role: 'listbox', hidden: true });
  E.labels = h('label', { class: 'fs-check', title: 'Link labels (L)' }, h('input', { type: 'checkbox', onchange: (e) => cmd.setEdgeLabels(e.target.checked) }), ' Link labels (L)');
  E.help = btn('?', 'Keyboard shortcuts (?)', () => cmd.toggleHelp(), { 'data-action': 'help', 'aria-label': 'Keyboard shortcuts' });
}

function toolbar(E) {
  return h('div', { class: 'fs-toolbar', role: 'toolbar' },
    h('div', { class: 'fs-tb-group' }, E.name, E.status),
    h('div', { class: 'fs-tb-group fs-edit' }, E.undo, E.redo),
    h('div', { class: 'fs-tb-group fs-edit' }, E.connect, E.insertHost, E.generate),
    h('div', { class: 'fs-tb-group' }, h('span', { class: 'fs-edit' }, E.importBtn), E.file, E.exportJson, E.exportPng),
    h('div', { class: 'fs-tb-group fs-search-wrap' }, E.search, E.results),
    h('div', { class: 'fs-tb-group' }, E.help),
    h('div', { class: 'fs-tb-group fs-tb-end' }, E.validate, E.save));
}

/** A palette kind: click to place, drag onto the canvas, or its number key. */
function kindButton(cmd, k, i) {
  return h('button', {
    type: 'button', class: 'fs-kind', draggable: 'true', 'data-kind': k,
    title: `${KIND_LABEL[k] || k} — click to place, or drag onto the canvas (key ${i + 1})`,
    onclick: () => cmd.placeNode(k, null),
    ondragstart: (e) => { e.dataTransfer.setData('application/x-fabricscope-kind', k); e.dataTransfer.effectAllowed = 'copy'; },
  }, h('span', { class: `fs-swatch fs-k-${k}` }), h('span', {}, KIND_LABEL[k] || k), h('kbd', {}, String(i + 1)));
}

/** Palette: kinds (click or drag), groups controls, legend. */
function palette(kinds, cmd, E) {
  return h('aside', { class: 'fs-palette', 'aria-label': 'Palette' },
    h('h3', { class: 'fs-edit' }, 'Add device'),
    h('div', { class: 'fs-kinds fs-edit' }, kinds.map((k, i) => kindButton(cmd, k, i))),
    h('h3', {}, 'Groups'),
    h('div', { class: 'fs-row' },
      btn('Collapse all', 'Collapse every host ( [ )', () => cmd.collapseAll(true), { 'data-action': 'collapse-all' }),
      btn('Expand all', 'Expand every host ( ] )', () => cmd.collapseAll(false), { 'data-action': 'expand-all' })),
    h('div', { class: 'fs-row fs-edit' }, btn('Re-layout', 'Forget hand-placed positions and lay out automatically', () => cmd.relayoutAll(), { 'data-action': 'relayout' })),
    h('h3', {}, 'Link speed'),
    h('div', { class: 'fs-row' }, E.labels),
    h('ul', { class: 'fs-legend' }, SPEED_BUCKETS.map(([, v, text]) => h('li', {}, h('span', { class: 'fs-line', style: `background: var(${v})` }), text))),
    h('h3', {}, 'Devices'),
    h('ul', { class: 'fs-legend fs-legend-kinds' }, kinds.map((k) => h('li', {}, h('span', { class: `fs-swatch fs-k-${k}` }), KIND_LABEL[k] || k))));
}

/** The canvas with what floats over it: empty hint, handle, zoom buttons, banner, toast, footer. */
function canvasArea(ed, cmd, E) {
  E.handle = h('div', { class: 'fs-handle', title: 'Drag to another device to connect', hidden: true });
  E.toast = h('div', { class: 'fs-toast', role: 'status', 'aria-live': 'polite', hidden: true });
  E.modeBanner = h('div', { class: 'fs-mode', hidden: true });
  E.footer = h('div', { class: 'fs-footer' });
  E.dropHint = h('div', { class: 'fs-drop-hint', hidden: true }, 'Drop a fabricscope.topology/1 JSON file to import it');
  E.empty = h('div', { class: 'fs-empty', hidden: true }, h('strong', {}, 'This topology is empty'),
    h('span', {}, ed.readonly ? 'Nothing has been drawn yet.'
      : 'Drag a device from the palette, insert a server with “+ Host”, generate a cluster, or drop a JSON file here.'));
  const zoom = h('div', { class: 'fs-zoom' },
    btn('+', 'Zoom in (+)', () => cmd.zoomBy(1.25), { 'data-action': 'zoom-in' }),
    btn('−', 'Zoom out (−)', () => cmd.zoomBy(0.8), { 'data-action': 'zoom-out' }),
    btn('⤢', 'Fit (F)', () => cmd.fit(), { 'data-action': 'fit' }));
  const canvas = h('div', { class: 'fs-canvas', tabindex: '0', 'aria-label': 'Topology canvas' });
  const wrap = h('div', { class: 'fs-canvas-wrap' }, canvas, E.empty, E.handle, zoom, E.modeBanner, E.toast, E.dropHint, E.footer);
  return { canvas, wrap };
}

/** Build the page in ed.root. */
export function buildPage(ed, cmd) {
  const r = ed.root;
  r.classList.add('fs-editor');
  if (ed.readonly) r.classList.add('fs-readonly');
  r.innerHTML = '';
  const E = {};
  toolbarControls(ed, cmd, E);
  ed.paletteKinds = ed.catalog.nodeKinds.filter((k) => KIND_STYLE[k]);
  const pal = palette(ed.paletteKinds, cmd, E);
  const { canvas, wrap } = canvasArea(ed, cmd, E);
  E.props = h('section', { class: 'fs-props', 'aria-label': 'Properties' });
  E.problems = h('section', { class: 'fs-problems', 'aria-label': 'Problems', hidden: true });
  const side = h('aside', { class: 'fs-side' }, E.problems, E.props);
  Object.assign(ed, { els: E, canvas, canvasWrap: wrap, dialogs: buildDialogs(ed, cmd) });
  r.append(toolbar(E), h('div', { class: 'fs-body' }, pal, wrap, side), ...Object.values(ed.dialogs));
}

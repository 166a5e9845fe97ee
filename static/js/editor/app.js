/* Fabricscope editor — the page controller: builds the state, the page and the Cytoscape view,
 * wires the events, and answers the page's hooks (editor.js, the browser tests).
 *
 * There is no shared `this`: the state is one object, `ed` (state.js), passed to the functions
 * of each module; user actions are the named commands of commands.js. The modules:
 *   state.js      the state and which module owns each part
 *   commands.js   every action by name, bound to the state
 *   page.js, dialogs.js, properties.js, chrome.js   what the page shows around the canvas
 *   view.js (Cytoscape), visible.js (which elements), cystyle.js (how they look)
 *   canvas.js, connect.js, keyboard.js, search.js    input: pointer, connecting, keys, search
 *   edit.js, groups.js, viewport.js, selection.js    editing, collapsing, zoom, the selection
 *   io.js, hosts.js, generate.js, http.js            files and the server
 *   model.js, viewstate.js, layout.js, diff.js, catalog.js   the document and its helpers
 */
import { bindCy, bindDrop } from './canvas.js';
import { fitHeight } from './chrome.js';
import { editorCommands } from './commands.js';
import { applyNeighbourhood } from './groups.js';
import { clearProblems } from './io.js';
import { bindKeys } from './keyboard.js';
import { buildPage } from './page.js';
import { bindSearch } from './search.js';
import { createEditorState } from './state.js';
import { View } from './view.js';

/** The tab's sessionStorage, or null where it is unavailable (sandboxed frame, disabled storage). */
function sessionStore() {
  try { return window.sessionStorage || null; } catch { return null; }
}

function redraw(ed) {
  ed.view.render();
  if (ed.hood.hops) applyNeighbourhood(ed);
}

/** Model events: a replaced document (import, or its undo) opens as a new one would, with its
 * own view; any change redraws. */
function onModel(ed, cmd, e) {
  if (e.type === 'change' && e.ops.some((op) => op.t === 'doc')) {
    ed.viewState.initFor(ed.model.doc, { useStored: false });
    ed.view.relayout();
    clearProblems(ed);
  }
  if (e.type === 'load') ed.view.relayout();
  if (e.type === 'change' || e.type === 'load') redraw(ed);
  cmd.refresh();
}

/** View-state events redraw, never touch the document or its undo history. Viewport and
 * selection events come in bursts (a wheel, a box select): only the last is stored. */
function bindViewState(ed, cmd) {
  const vs = ed.viewState;
  const cy = ed.cy;
  vs.on((e) => { if (e.type === 'collapse') redraw(ed); cmd.refresh(); });
  let vpTimer = null;
  cy.on('viewport', () => {
    clearTimeout(vpTimer);
    vpTimer = setTimeout(() => vs.setViewport(cy.zoom(), cy.pan()), 150);
  });
  let selTimer = null;
  cy.on('select unselect', () => {
    clearTimeout(selTimer);
    selTimer = setTimeout(() => vs.setSelection(cy.$(':selected').map((el) => el.id())), 0);
  });
  ed.els.search.addEventListener('input', () => vs.setSearch(ed.els.search.value));
}

/** The panel and the handle follow the selection, once per burst. */
function bindSelection(ed, cmd) {
  let timer = null;
  ed.cy.on('select unselect', () => { clearTimeout(timer); timer = setTimeout(cmd.selectionChanged, 0); });
}

function bindWindow(ed) {
  window.addEventListener('resize', () => fitHeight(ed));
  window.addEventListener('beforeunload', (e) => {
    if (ed.model.isDirty() && !ed.server.bypassUnload && !ed.readonly) { e.preventDefault(); e.returnValue = ''; }
  });
}

/** First frame: the stored view of this topology if this tab has one, else fit everything. */
function initialView(ed) {
  const vs = ed.viewState;
  const cy = ed.cy;
  ed.view.relayout();
  ed.view.render();
  if (vs.viewport) cy.viewport({ zoom: vs.viewport.zoom, pan: vs.viewport.pan }); else cy.fit(undefined, 30);
  for (const id of vs.selection) cy.getElementById(id).select();
  if (vs.search) ed.els.search.value = vs.search;
}

/** The editor of one page. Its methods are the hooks the page and the browser tests use. */
export class Editor {
  constructor(root, config) {
    const t0 = performance.now();
    const ed = createEditorState(root, config, { storage: sessionStore() });
    const cmd = editorCommands(ed);
    this.state = ed;
    this.commands = cmd;
    buildPage(ed, cmd);
    bindSearch(ed, cmd.focusElement);
    ed.view = new View(ed.canvas, ed.model, ed.catalog, { readonly: ed.readonly, viewState: ed.viewState });
    ed.cy = ed.view.cy;
    bindCy(ed, cmd);
    bindSelection(ed, cmd);
    bindViewState(ed, cmd);
    bindKeys(ed, cmd);
    bindDrop(ed, cmd);
    ed.model.on((e) => onModel(ed, cmd, e));
    fitHeight(ed);
    bindWindow(ed);
    initialView(ed);
    ed.chrome.loadMs = performance.now() - t0;
    cmd.refresh();
  }

  get view() { return this.state.view; }
  get cy() { return this.state.cy; }
  get canvas() { return this.state.canvas; }
  get model() { return this.state.model; }

  load(doc) {
    const ed = this.state;
    ed.model.load(doc);
    ed.viewState.initFor(ed.model.doc, { useStored: false });
    clearProblems(ed);
    initialView(ed);
    this.commands.refresh();
  }

  getDocument() { return this.state.model.toJSON(); }

  focusElement(type, id) { return this.commands.focusElement(type, id); }
  toggleCollapse(groupIds) { this.commands.toggleCollapse(groupIds); }
  setCollapsed(groupIds, collapsed) { return this.commands.setCollapsed(groupIds, collapsed); }
  selectIds(kind, ids) { this.commands.selectIds(kind, ids); }
  setEdgeLabels(on) { this.commands.setEdgeLabels(on); }
  fit() { this.commands.fit(); }

  stats() {
    const ed = this.state;
    const m = ed.model;
    const cy = ed.cy;
    return {
      nodes: m.doc.nodes.length, links: m.doc.links.length, groups: m.doc.groups.length,
      visibleNodes: cy.nodes().length, visibleEdges: cy.edges().length,
      collapsed: ed.viewState.collapsed.size, dirty: m.isDirty(), revision: ed.server.revision,
      undo: m.undoStack.length, redo: m.redoStack.length, selected: cy.$(':selected').map((e) => e.id()),
      problems: cy.elements('.problem').map((e) => e.id()),
      lastRenderMs: ed.view.lastRenderMs, loadMs: ed.chrome.loadMs, zoom: cy.zoom(), mode: ed.connect.mode,
    };
  }
}

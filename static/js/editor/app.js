/* Fabricscope editor — the page controller: editor state, wiring, the toolbar's status line.
 *
 * Editor's methods are grouped by concern, one module each, and mixed into its prototype:
 *   dom.js (page structure), canvas.js (Cytoscape events, connect, zoom, drop), edit.js (editing
 *   commands), search.js, properties.js (properties panel), keyboard.js (shortcuts), io.js
 *   (import/export and server calls). They share the editor's state through `this`.
 *
 * Two kinds of state: `this.model` is the document (edits, undo, "unsaved"), `this.viewState`
 * is what the user looks at (collapsed groups, zoom/pan, selection, search; viewstate.js) and
 * never dirties the document.
 */
import { Catalog } from './catalog.js';
import { Model } from './model.js';
import { View } from './view.js';
import { ViewState, viewStateKey } from './viewstate.js';
import { canvasMethods } from './canvas.js';
import { domMethods } from './dom.js';
import { editMethods } from './edit.js';
import { ioMethods } from './io.js';
import { keyboardMethods } from './keyboard.js';
import { propertiesMethods } from './properties.js';
import { searchMethods } from './search.js';

export class Editor {
  constructor(root, config) {
    const t0 = performance.now();
    this.root = root;
    this.config = config || {};
    this.readonly = !!this.config.readonly;
    this.revision = this.config.revision == null ? null : this.config.revision;
    this.urls = this.config.urls || {};
    this.catalog = new Catalog(this.config.catalog);
    this.templates = (this.config.templates || []).map((t) => (typeof t === 'string' ? { name: t, label: t } : { name: t.name || t.id, label: t.label || t.title || t.name || t.id }));
    // Opened from the page (editor.js), the model owns the parsed document and a save's base is
    // parsed again from the page when first needed (io.js savedBase): no copy on open.
    const owned = typeof this.config.readDocument === 'function';
    this.model = new Model(this.config.document || {}, { own: owned });
    if (owned) this.config.document = null;
    this.viewState = new ViewState({ storage: sessionStore(), key: viewStateKey(this.config.topology_id) });
    this.viewState.initFor(this.model.doc);
    this.clipboard = null;
    this.pasteCount = 0;
    this.mode = null;          // null | 'connect'
    this.connectSource = null;
    this.hops = 0;
    this.pointer = null;       // last model-space pointer position over the canvas
    this.problems = [];
    this.bypassUnload = false;
    this.buildDom();
    this.view = new View(this.canvas, this.model, this.catalog, { readonly: this.readonly, viewState: this.viewState });
    this.cy = this.view.cy;
    this.bindCy();
    this.bindViewState();
    this.bindKeys();
    this.bindDrop();
    this.model.on((e) => this.onModel(e));
    this.fitHeight();
    window.addEventListener('resize', () => this.fitHeight());
    window.addEventListener('beforeunload', (e) => {
      if (this.model.isDirty() && !this.bypassUnload && !this.readonly) { e.preventDefault(); e.returnValue = ''; }
    });
    this.initialView();
    this.loadMs = performance.now() - t0;
    this.refreshChrome();
  }

  /* ================================================================ model events, chrome */
  onModel(e) {
    if (e.type === 'change' && e.ops.some((op) => op.t === 'doc')) {
      // A replaced document (import, or its undo) opens as a new one would: its own view.
      this.viewState.initFor(this.model.doc, { useStored: false });
      this.view.relayout();
      this.clearProblems();
    }
    if (e.type === 'load') { this.view.relayout(); }
    if (e.type === 'change' || e.type === 'load') this.redraw();
    this.refreshChrome();
  }

  /** View-state events: redraw, never touch the document or its undo history. */
  onViewState(e) {
    if (e.type === 'collapse') this.redraw();
    this.refreshChrome();
  }

  redraw() {
    this.view.render();
    if (this.hops) this.applyNeighbourhood();
  }

  /** Collapse or expand groups (view state: not an edit, not undoable). */
  setCollapsed(groupIds, collapsed) {
    return this.viewState.setCollapsed(groupIds, collapsed, (id) => !!this.model.group(id));
  }

  bindViewState() {
    const vs = this.viewState;
    vs.on((e) => this.onViewState(e));
    // Viewport and selection events come in bursts (a wheel, a box select): store the last.
    let vpTimer = null;
    this.cy.on('viewport', () => {
      clearTimeout(vpTimer);
      vpTimer = setTimeout(() => vs.setViewport(this.cy.zoom(), this.cy.pan()), 150);
    });
    let selTimer = null;
    this.cy.on('select unselect', () => {
      clearTimeout(selTimer);
      selTimer = setTimeout(() => vs.setSelection(this.cy.$(':selected').map((el) => el.id())), 0);
    });
    this.els.search.addEventListener('input', () => vs.setSearch(this.els.search.value));
  }

  refreshChrome() {
    const E = this.els;
    const dirty = this.model.isDirty();
    E.name.textContent = this.model.doc.name || 'untitled';
    const rev = this.revision == null ? 'new' : `rev ${this.revision}`;
    // A topology never saved (blank) is not "saved": say so until its first revision.
    E.status.textContent = this.readonly ? `read-only · ${rev}` : dirty ? `● unsaved (${rev})` : this.revision == null ? 'new · not saved yet' : `saved · ${rev}`;
    E.status.title = this.revision == null ? 'Never saved' : `Based on revision ${this.revision}`;
    E.status.classList.toggle('fs-dirty', dirty && !this.readonly);
    this.root.dataset.dirty = dirty ? '1' : '0';
    E.undo.disabled = !this.model.canUndo();
    E.redo.disabled = !this.model.canRedo();
    const m = this.model.doc;
    const cy = this.cy;
    E.empty.hidden = m.nodes.length > 0 || m.groups.length > 0;
    if (cy) {
      E.footer.textContent = `${m.nodes.length.toLocaleString()} devices · ${m.links.length.toLocaleString()} links · ${m.groups.length} groups — showing ${cy.nodes().length.toLocaleString()} nodes, ${cy.edges().length.toLocaleString()} edges · render ${Math.round(this.view.lastRenderMs || 0)} ms`;
    }
    this.updateProps();
  }

  toast(msg, kind) {
    const t = this.els.toast;
    t.textContent = msg;
    t.className = `fs-toast${kind ? ' fs-toast-' + kind : ''}`;
    t.hidden = false;
    clearTimeout(this.toastTimer);
    this.toastTimer = setTimeout(() => { t.hidden = true; }, kind === 'error' ? 6000 : 2500);
  }

  /** First frame: the stored view of this topology if this tab has one, else fit everything. */
  initialView() {
    const vs = this.viewState;
    this.view.relayout();
    this.view.render();
    if (vs.viewport) this.cy.viewport({ zoom: vs.viewport.zoom, pan: vs.viewport.pan }); else this.cy.fit(undefined, 30);
    for (const id of vs.selection) this.cy.getElementById(id).select();
    if (vs.search) this.els.search.value = vs.search;
  }

  /* ================================================================ public hooks */
  load(doc) {
    this.model.load(doc);
    this.viewState.initFor(this.model.doc, { useStored: false });
    this.clearProblems();
    this.initialView();
    this.refreshChrome();
  }

  getDocument() { return this.model.toJSON(); }

  stats() {
    const m = this.model;
    return {
      nodes: m.doc.nodes.length, links: m.doc.links.length, groups: m.doc.groups.length,
      visibleNodes: this.cy.nodes().length, visibleEdges: this.cy.edges().length,
      collapsed: this.viewState.collapsed.size, dirty: m.isDirty(), revision: this.revision,
      undo: m.undoStack.length, redo: m.redoStack.length, selected: this.cy.$(':selected').map((e) => e.id()),
      problems: this.cy.elements('.problem').map((e) => e.id()),
      lastRenderMs: this.view.lastRenderMs, loadMs: this.loadMs, zoom: this.cy.zoom(), mode: this.mode,
    };
  }
}

/** The tab's sessionStorage, or null where it is unavailable (sandboxed frame, disabled storage). */
function sessionStore() {
  try { return window.sessionStorage || null; } catch { return null; }
}

/** Copy `sources`' methods onto `target` (non-enumerable, as class methods are); a name defined
 * twice is a mistake in the split, so it throws instead of silently overriding. */
function mixin(target, ...sources) {
  for (const src of sources) {
    for (const [name, desc] of Object.entries(Object.getOwnPropertyDescriptors(src))) {
      if (Object.prototype.hasOwnProperty.call(target, name)) throw new Error(`editor: method ${name} defined twice`);
      Object.defineProperty(target, name, { ...desc, enumerable: false });
    }
  }
}

mixin(Editor.prototype, domMethods, canvasMethods, editMethods, searchMethods, propertiesMethods, keyboardMethods, ioMethods);

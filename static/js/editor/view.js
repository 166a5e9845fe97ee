/* Fabricscope editor — the Cytoscape projection of the document model.
 *
 * The View owns the Cytoscape instance and what only it needs: the automatic layout of nodes
 * the user has not placed, the stylesheet's inputs and the problem marks. Which elements are
 * shown is visible.js (pure); how they look is cystyle.js. render() diffs the wanted set against
 * Cytoscape, so an edit touches only the elements that changed.
 *
 * Cytoscape is the vendored classic script (static/vendor/cytoscape.min.js), read as a global.
 */
/* global cytoscape */
import { buildStyle, CSS_KIND, NVLINK_COLOR, readColors, sharedKinds, speedColor } from './cystyle.js';
import { autoLayout } from './layout.js';
import { bundleKey, computeVisible, groupBox, groupCentre, makeRepResolver } from './visible.js';

const LARGE = 1500; // visible elements above which cheap rendering kicks in

export class View {
  /**
   * @param {HTMLElement} container the canvas
   * @param {Model} model the document
   * @param {Catalog} catalog link technologies
   * @param {{readonly?: boolean, viewState: ViewState}} opts
   */
  constructor(container, model, catalog, opts) {
    this.container = container;
    this.model = model;
    this.catalog = catalog;
    this.viewState = opts.viewState; // collapsed groups live there, not in the document
    this.edgeLabels = false;
    this.auto = new Map();
    this.problemIds = new Set();
    this.large = false;
    this.lastRenderMs = 0;
    this.kinds = sharedKinds();
    this.shareKindColors();
    this.colors = readColors(container);
    this.cy = cytoscape({
      container,
      elements: [],
      style: this.style(),
      minZoom: 0.002, // a 32k-GPU design fits the screen at ~0.01
      maxZoom: 4,
      boxSelectionEnabled: true,
      selectionType: 'single',
      textureOnViewport: true,
      hideEdgesOnViewport: true,
      motionBlur: false,
      pixelRatio: Math.min(window.devicePixelRatio || 1, 2),
      autoungrabify: !!opts.readonly,
    });
    const mq = window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)');
    if (mq && mq.addEventListener) mq.addEventListener('change', () => this.restyle());
  }

  /** Kind colours of #fs-style as the editor's CSS variables, so the palette chips match too. */
  shareKindColors() {
    const host = this.container.closest('.fs-editor') || this.container;
    for (const [kind, v] of Object.entries(CSS_KIND)) {
      if (this.kinds[kind] && this.kinds[kind].color) host.style.setProperty(v, this.kinds[kind].color);
    }
  }

  style() { return buildStyle({ colors: this.colors, kinds: this.kinds, large: this.large, edgeLabels: this.edgeLabels }); }

  restyle() {
    this.colors = readColors(this.container);
    this.cy.style(this.style());
  }

  setEdgeLabels(on) { this.edgeLabels = on; this.cy.style(this.style()); }

  /* ---------------------------------------------------------------- positions */
  relayout() { this.auto = autoLayout(this.model); this.layoutOf = this.model.indexed; }

  /** Lay out again when a device has no position; not looked for when the model has not been
   * indexed again since the last layout (nothing was added: 629k devices at 100,000 GPUs). */
  ensureLayout() {
    const m = this.model;
    if (this.layoutOf === m.indexed) return;
    this.layoutOf = m.indexed;
    for (const n of m.doc.nodes) if (!m.position(n.id) && !this.auto.has(n.id)) { this.relayout(); return; }
  }

  posOf(nodeId) { return this.model.position(nodeId) || this.auto.get(nodeId) || [0, 0]; }

  groupBox(gid) { return groupBox(this.model, (id) => this.posOf(id), gid); }

  groupCentre(gid) { return groupCentre(this.model, (id) => this.posOf(id), gid); }

  makeRepResolver() { return makeRepResolver(this.model, this.viewState); }

  /** What visible.js needs to know of this view. */
  scene() {
    return { model: this.model, viewState: this.viewState, catalog: this.catalog,
      posOf: (id) => this.posOf(id),
      // a host's block answers for its devices unless one is placed by hand (posOf's first source)
      blockBounds: (prefix, ids) => (this.model.placedUnder(prefix) || !this.auto.blockBounds ? null : this.auto.blockBounds(prefix, ids)),
      speedColor: (g) => speedColor(this.colors, g), nvlinkColor: this.colors[NVLINK_COLOR] };
  }

  computeVisible() { return computeVisible(this.scene()); }

  /* ---------------------------------------------------------------- render */
  render() {
    const t0 = performance.now();
    this.ensureLayout();
    const want = this.computeVisible();
    const cy = this.cy;
    const large = want.size > LARGE;
    if (large !== this.large) { this.large = large; cy.style(this.style()); }
    cy.batch(() => {
      removeStale(cy, want);
      const add = updateKept(cy, want);
      const depth = (w) => (w.group === 'edges' ? 1e6 : w.data.etype === 'group' ? this.model.ancestors(w.data.ref).length : 1e5);
      add.sort((a, b) => depth(a) - depth(b)); // parents before their children, edges last
      for (const w of add) if (Array.isArray(w.position)) w.position = { x: w.position[0], y: w.position[1] };
      if (add.length) cy.add(add);
      this.applyProblemClasses();
    });
    this.lastRenderMs = performance.now() - t0;
    return this.lastRenderMs;
  }

  /* ---------------------------------------------------------------- lookups used by the UI */
  /** Cytoscape element currently standing for a document node/link/group id. */
  elementFor(kind, id) {
    const cy = this.cy;
    const m = this.model;
    const { groupRep, nodeRep } = this.makeRepResolver();
    if (kind === 'node') { const r = nodeRep(id); return r ? cy.getElementById(r) : cy.collection(); }
    if (kind === 'group') {
      const g = m.group(id);
      if (!g) return cy.collection();
      const r = g.parent ? groupRep(g.parent) : null;
      return cy.getElementById(r ? 'g:' + r : 'g:' + id);
    }
    if (kind !== 'link') return cy.collection();
    const direct = cy.getElementById('l:' + id);
    if (direct.nonempty()) return direct;
    const l = m.link(id);
    if (!l) return cy.collection();
    const ra = nodeRep(l.a); const rb = nodeRep(l.b);
    if (ra === rb) return cy.getElementById(ra);
    return cy.getElementById('agg:' + bundleKey(ra, rb));
  }

  setProblems(list) { this.problemIds = new Set(list.map((p) => `${p.kind}:${p.id}`)); this.cy.batch(() => this.applyProblemClasses()); }

  applyProblemClasses() {
    this.cy.elements('.problem').removeClass('problem');
    for (const key of this.problemIds) {
      const i = key.indexOf(':');
      this.elementFor(key.slice(0, i), key.slice(i + 1)).addClass('problem');
    }
  }
}

/** Remove what is no longer wanted, or moved to another parent or other ends (Cytoscape cannot
 * re-parent or re-attach in place). The ghost of connect mode ("__") is not ours. */
function removeStale(cy, want) {
  const remove = [];
  cy.elements().forEach((el) => {
    if (el.id().startsWith('__')) return;
    const w = want.get(el.id());
    if (!w) { remove.push(el); return; }
    if (el.isNode() && (el.data('parent') || undefined) !== w.data.parent) remove.push(el);
    if (el.isEdge() && (el.data('source') !== w.data.source || el.data('target') !== w.data.target)) remove.push(el);
  });
  if (remove.length) cy.collection(remove).remove();
}

/** Update the data and position of the kept elements; returns the wanted ones not there yet. */
function updateKept(cy, want) {
  const add = [];
  for (const [id, w] of want) {
    const el = cy.getElementById(id);
    if (el.empty()) { add.push(w); continue; }
    if (el.data('sig') !== w.data.sig) {
      const upd = { ...w.data };
      delete upd.id; delete upd.parent; delete upd.source; delete upd.target;
      el.data(upd);
    }
    if (w.position && !el.isParent()) {
      const p = el.position();
      const q = Array.isArray(w.position) ? { x: w.position[0], y: w.position[1] } : w.position;
      if (Math.abs(p.x - q.x) > 0.5 || Math.abs(p.y - q.y) > 0.5) el.position(q);
    }
  }
  return add;
}

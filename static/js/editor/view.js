/* Fabricscope editor — the Cytoscape projection of the document model.
 *
 * Only visible elements are materialized: a collapsed group is one node, and the links between
 * two different visible representatives, one of them a collapsed group, are drawn once per pair
 * as a bundle ("8 × nvlink5x1 (3.2 Tb/s)") whose width grows with the count. Bundles are view
 * state: they follow the collapsed set (viewstate.js), never the document. Colour is the
 * members' speed class (SPEED_BUCKETS, the sidebar legend); network links (Ethernet,
 * InfiniBand) are dashed, so a bundle of 400 Gb/s NVLinks is told from a 400 Gb/s Ethernet
 * link by its line. render() diffs the wanted set against Cytoscape, so an edit touches only
 * the elements that changed.
 *
 * Cytoscape is the vendored classic script (static/vendor/cytoscape.min.js), read as a global.
 */
/* global cytoscape */
import { autoLayout } from './layout.js';

export const SPEED_BUCKETS = [ // upper bound Gb/s (per direction), CSS variable, legend text
  [100, '--fs-speed-1', '≤ 100 Gb/s'],
  [200, '--fs-speed-2', '≤ 200 Gb/s'],
  [400, '--fs-speed-3', '≤ 400 Gb/s'],
  [800, '--fs-speed-4', '≤ 800 Gb/s (PCIe5 x16)'],
  [2000, '--fs-speed-5', '≤ 2 Tb/s (NVLink, UPI)'],
  [Infinity, '--fs-speed-6', '> 2 Tb/s (DDR)'],
];
export const KIND_STYLE = { // fallback shape, width, height (shape and colour come from #fs-style)
  gpu: ['round-rectangle', 34, 26], cpu: ['hexagon', 36, 30], memory: ['pentagon', 28, 28],
  pcie_switch: ['triangle', 32, 30], nvswitch: ['diamond', 36, 32], nic: ['ellipse', 28, 24],
  nvme: ['vee', 26, 24], switch: ['round-octagon', 44, 30], storage: ['star', 36, 36],
};
// The kind vocabulary of designer/figures/style.py style_json() (one palette and one set of shapes
// for the editor and every result view); editor.html prints it as #fs-style.
const CSS_KIND = { gpu: '--fs-gpu', cpu: '--fs-cpu', memory: '--fs-memory', pcie_switch: '--fs-pcie',
  nvswitch: '--fs-nvswitch', nic: '--fs-nic', nvme: '--fs-nvme', storage: '--fs-storage', switch: '--fs-switch-leaf' };

export function sharedKinds(doc = (typeof document !== 'undefined' ? document : null)) {
  const el = doc && doc.getElementById('fs-style');
  try { return (el && JSON.parse(el.textContent).kinds) || {}; } catch { return {}; }
}
const ROLE_COLOR = { tor: '--fs-switch-tor', leaf: '--fs-switch-leaf', spine: '--fs-switch-spine', core: '--fs-switch-core' };
const LARGE = 1500; // visible elements above which cheap rendering kicks in
/** Link families drawn dashed: cables of the scale-out network, not a node's or rack's own links. */
export const NETWORK_FAMILIES = new Set(['ethernet', 'infiniband']);
const COLLAPSED_OVERHANG = 50; // px a collapsed box may reach below its laid-out footprint (< the layout's 120 px row gap)
const BUNDLE_MAX_WIDTH = 10; // px: a bundle's width grows with log2(count) up to this

export function fmtGbps(g) {
  if (g == null || !isFinite(g)) return '?';
  if (g >= 1000) return `${+(g / 1000).toFixed(g >= 10000 ? 0 : 1)} Tb/s`;
  return `${+g.toFixed(g >= 100 ? 0 : 1)} Gb/s`;
}

/**
 * Label of a bundle of parallel links.
 * @param {Map<string, number>} techCounts member links per technology name ('' unknown)
 * @param {number} capGbps summed capacity of the members, Gb/s per direction
 * @returns {string} "8 × nvlink5x1 (3.2 Tb/s)"; mixed: "6 links: 4 × a, 2 × b (2.4 Tb/s)"
 */
export function bundleLabel(techCounts, capGbps) {
  const parts = [...techCounts].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const count = parts.reduce((s, [, n]) => s + n, 0);
  const cap = ` (${fmtGbps(capGbps)})`;
  if (parts.length === 1) return `${count} × ${parts[0][0] || '?'}${cap}`;
  const shown = parts.slice(0, 3).map(([t, n]) => `${n} × ${t || '?'}`).join(', ');
  return `${count} links: ${shown}${parts.length > 3 ? ', …' : ''}${cap}`;
}

/**
 * Edge width of a bundle: the member width plus log2 of the count, so 8 links read thicker than
 * 2 and 300 links do not fill the screen.
 * @param {number} maxCapGbps fastest member, Gb/s per direction
 * @param {number} count member links (≥ 1)
 * @returns {number} px
 */
export function bundleWidth(maxCapGbps, count) {
  return Math.min(edgeWidth(maxCapGbps) + Math.log2(Math.max(count, 1)), BUNDLE_MAX_WIDTH);
}

export class View {
  constructor(container, model, catalog, opts) {
    this.container = container;
    this.model = model;
    this.catalog = catalog;
    this.opts = opts || {};
    this.viewState = this.opts.viewState; // collapsed groups live there, not in the document
    this.edgeLabels = false;
    this.auto = new Map();
    this.problemIds = new Set();
    this.large = false;
    this.kinds = sharedKinds();
    this.shareKindColors();
    this.colors = this.readColors();
    this.cy = cytoscape({
      container,
      elements: [],
      style: this.buildStyle(),
      minZoom: 0.002, // a 32k-GPU design fits the screen at ~0.01
      maxZoom: 4,
      boxSelectionEnabled: true,
      selectionType: 'single',
      textureOnViewport: true,
      hideEdgesOnViewport: true,
      motionBlur: false,
      pixelRatio: Math.min(window.devicePixelRatio || 1, 2),
      autoungrabify: !!this.opts.readonly,
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

  readColors() {
    const cs = getComputedStyle(this.container);
    const get = (name, dflt) => (cs.getPropertyValue(name) || '').trim() || dflt;
    const names = ['--fs-text', '--fs-muted', '--fs-bg', '--fs-accent', '--fs-danger', '--fs-group', '--fs-group-border',
      '--fs-gpu', '--fs-cpu', '--fs-memory', '--fs-pcie', '--fs-nvswitch', '--fs-nic', '--fs-nvme', '--fs-storage',
      '--fs-switch-tor', '--fs-switch-leaf', '--fs-switch-spine', '--fs-switch-core', '--fs-node-border',
      ...SPEED_BUCKETS.map((b) => b[1])];
    const out = {};
    for (const n of names) out[n] = get(n, '#888');
    return out;
  }

  restyle() {
    this.colors = this.readColors();
    this.cy.style(this.buildStyle());
  }

  speedColor(g) {
    for (const [max, v] of SPEED_BUCKETS) if (g <= max + 1e-9) return this.colors[v];
    return this.colors[SPEED_BUCKETS[SPEED_BUCKETS.length - 1][1]];
  }

  buildStyle() {
    const c = this.colors;
    const large = this.large;
    const kindColor = {
      gpu: c['--fs-gpu'], cpu: c['--fs-cpu'], memory: c['--fs-memory'], pcie_switch: c['--fs-pcie'],
      nvswitch: c['--fs-nvswitch'], nic: c['--fs-nic'], nvme: c['--fs-nvme'], storage: c['--fs-storage'],
      switch: (this.kinds.switch || {}).color || c['--fs-switch-leaf'],
    };
    const s = [
      { selector: 'node', style: {
        label: 'data(label)', 'font-size': 10, color: c['--fs-text'], 'text-valign': 'bottom',
        'text-margin-y': 3, 'text-max-width': 64, 'text-wrap': 'ellipsis', 'font-family': 'system-ui, sans-serif',
        'border-width': 1, 'border-color': c['--fs-node-border'], 'min-zoomed-font-size': large ? 7 : 5,
        'text-background-color': c['--fs-bg'], 'text-background-opacity': 0.7, 'text-background-padding': 1,
        'background-color': '#999',
      } },
    ];
    for (const [kind, [fallback, w, h]] of Object.entries(KIND_STYLE)) {
      const shape = (this.kinds[kind] || {}).shape || fallback;
      s.push({ selector: `node[kind="${kind}"]`, style: { shape, width: w, height: h, 'background-color': kindColor[kind] } });
    }
    // Switch roles keep their own shades only without the shared palette (results draw one switch colour).
    if (!this.kinds.switch) {
      for (const [role, v] of Object.entries(ROLE_COLOR)) {
        s.push({ selector: `node[kind="switch"][role="${role}"]`, style: { 'background-color': c[v] } });
      }
    }
    s.push(
      { selector: 'node[kind="switch"][role="spine"]', style: { width: 52, height: 32, shape: 'octagon' } },
      { selector: 'node[kind="switch"][role="core"]', style: { width: 56, height: 34, shape: 'octagon' } },
      { selector: 'node[etype="group"]', style: {
        shape: 'round-rectangle', 'background-color': c['--fs-group'], 'background-opacity': 0.5,
        'border-width': 1, 'border-style': 'dashed', 'border-color': c['--fs-group-border'],
        'text-valign': 'top', 'text-halign': 'center', 'text-margin-y': -4, 'font-size': 12, 'font-weight': 'bold',
        'text-max-width': 400, padding: 14, 'text-background-opacity': 0,
      } },
      { selector: 'node[etype="group"][gkind="host"]', style: { 'border-style': 'solid' } },
      { selector: 'node[etype="group"][?collapsed]', style: {
        width: 'data(w)', height: 'data(h)', 'background-opacity': 1, 'border-width': 2, 'border-style': 'double',
        'border-color': c['--fs-group-border'], 'text-valign': 'center', 'text-wrap': 'wrap',
        'text-max-width': 'data(w)', 'font-size': 'data(fs)', 'font-weight': 'normal', 'text-margin-y': 0,
        'text-background-opacity': 0,
      } },
      { selector: 'node[etype="group"][?collapsed][gkind="rack"]', style: { shape: 'rectangle' } },
      // Devices and closed groups over the links, also links that only pass by (a tray's
      // uplink crossing the trays above it); an open group's box stays below.
      { selector: 'node[etype="node"], node[etype="group"][?collapsed]', style: { 'z-compound-depth': 'top' } },
      { selector: 'edge', style: {
        width: 'data(width)', 'line-color': 'data(color)', 'curve-style': large ? 'haystack' : 'bezier',
        opacity: large ? 0.35 : 0.85, 'haystack-radius': 0, 'font-size': 9, color: c['--fs-text'],
        'text-background-color': c['--fs-bg'], 'text-background-opacity': 0.85, 'text-background-padding': 1,
        'min-zoomed-font-size': 7, 'text-rotation': 'autorotate',
      } },
      { selector: 'edge[etype="agg"]', style: { 'line-style': 'solid', opacity: large ? 0.3 : 0.7 } },
      { selector: 'edge[?net]', style: { 'line-style': 'dashed', 'line-dash-pattern': [7, 4] } },
      { selector: 'node:selected', style: { 'border-width': 3, 'border-color': c['--fs-accent'], 'border-style': 'solid' } },
      { selector: 'edge:selected', style: { 'line-color': c['--fs-accent'], width: 4, opacity: 1, 'z-index': 10 } },
      { selector: '.faded', style: { opacity: 0.12 } },
      { selector: 'node.nhood', style: { 'border-width': 3, 'border-color': c['--fs-accent'] } },
      { selector: 'edge.nhood', style: { opacity: 1, width: 3 } },
      { selector: 'node.problem', style: { 'border-width': 4, 'border-color': c['--fs-danger'], 'border-style': 'solid' } },
      { selector: 'edge.problem', style: { 'line-color': c['--fs-danger'], width: 5, 'line-style': 'dashed', opacity: 1 } },
      { selector: 'node.connect-source', style: { 'border-width': 4, 'border-color': c['--fs-accent'], 'border-style': 'double' } },
      { selector: '#__ghost', style: { width: 1, height: 1, opacity: 0, label: '', events: 'no' } },
      { selector: '#__ghost_edge', style: { 'line-style': 'dashed', 'line-color': c['--fs-accent'], width: 2, 'curve-style': 'straight', events: 'no' } },
    );
    // Dashes in proportion to the line: a pod's bundle, thickened to be seen from afar, would
    // otherwise read as hatching.
    for (const w of [16, 64, 256, 1024]) s.push({ selector: `edge[?net][width >= ${w}]`, style: { 'line-dash-pattern': [2 * w, 1.2 * w] } });
    if (this.edgeLabels) s.push({ selector: 'edge', style: { label: 'data(label)' } });
    return s;
  }

  setEdgeLabels(on) { this.edgeLabels = on; this.cy.style(this.buildStyle()); }

  /* ---------------------------------------------------------------- helpers */
  linkCapacity(l) {
    if (l.capacity_gbps != null && isFinite(l.capacity_gbps)) return Number(l.capacity_gbps);
    const t = this.catalog.tech(l.tech);
    if (!t) return null;
    return l.capacity_basis === 'raw' ? t.raw : t.effective;
  }

  linkFamily(l) { const t = this.catalog.tech(l.tech); return t ? t.family : 'other'; }

  relayout() { this.auto = autoLayout(this.model); }

  ensureLayout() {
    const m = this.model;
    for (const n of m.doc.nodes) if (!m.position(n.id) && !this.auto.has(n.id)) { this.relayout(); return; }
  }

  posOf(nodeId) { return this.model.position(nodeId) || this.auto.get(nodeId) || [0, 0]; }

  groupBox(gid) {
    const ids = this.model.descendantNodes(gid);
    if (!ids.length) { const p = this.model.position(gid) || [0, 0]; return { cx: p[0], cy: p[1], w: 0, h: 0 }; }
    let x0 = Infinity; let x1 = -Infinity; let y0 = Infinity; let y1 = -Infinity;
    for (const id of ids) {
      const p = this.posOf(id);
      if (p[0] < x0) x0 = p[0]; if (p[0] > x1) x1 = p[0];
      if (p[1] < y0) y0 = p[1]; if (p[1] > y1) y1 = p[1];
    }
    return { cx: (x0 + x1) / 2, cy: (y0 + y1) / 2, w: x1 - x0, h: y1 - y0 };
  }

  groupCentre(gid) {
    const ids = this.model.descendantNodes(gid);
    if (!ids.length) return this.model.position(gid) || [0, 0];
    let x0 = Infinity; let x1 = -Infinity; let y0 = Infinity; let y1 = -Infinity;
    for (const id of ids) {
      const p = this.posOf(id);
      if (p[0] < x0) x0 = p[0]; if (p[0] > x1) x1 = p[0];
      if (p[1] < y0) y0 = p[1]; if (p[1] > y1) y1 = p[1];
    }
    return [(x0 + x1) / 2, (y0 + y1) / 2];
  }

  /** Outermost collapsed group containing group `gid` (itself included), or null. */
  makeRepResolver() {
    const m = this.model;
    const cache = new Map();
    const groupRep = (gid) => {
      if (!gid || !m.group(gid)) return null;
      if (cache.has(gid)) return cache.get(gid);
      let rep = null;
      for (const a of m.ancestors(gid)) if (this.viewState.isCollapsed(a)) rep = a;
      cache.set(gid, rep);
      return rep;
    };
    const nodeRep = (nid) => {
      const n = m.node(nid);
      if (!n) return null;
      const g = groupRep(n.group);
      return g ? 'g:' + g : 'n:' + nid;
    };
    return { groupRep, nodeRep };
  }

  labelOf(n) {
    if (n.group && n.id.startsWith(n.group + '/')) return n.id.slice(n.group.length + 1);
    return n.id;
  }

  /* ---------------------------------------------------------------- visible set */
  computeVisible() {
    const m = this.model;
    const want = new Map();
    const scale = new Map();
    const { groupRep, nodeRep } = this.makeRepResolver();
    const visibleGroup = (gid) => {
      const g = m.group(gid);
      const parentRep = g.parent && m.group(g.parent) ? groupRep(g.parent) : null;
      return !parentRep;
    };
    for (const g of m.doc.groups) {
      if (!visibleGroup(g.id)) continue;
      const collapsed = this.viewState.isCollapsed(g.id);
      const count = collapsed ? m.descendantNodes(g.id).length : 0;
      const data = {
        id: 'g:' + g.id, ref: g.id, etype: 'group', kind: 'group', gkind: g.kind || 'other',
        parent: g.parent && m.group(g.parent) ? 'g:' + g.parent : undefined,
        collapsed: collapsed ? 1 : 0,
        label: collapsed ? `${g.id}\n${g.template ? g.template + ' · ' : ''}${count} nodes`
          : `${g.id}${g.template ? ' · ' + g.template : g.kind && g.kind !== 'host' ? ' · ' + g.kind : ''}`,
      };
      const el = { group: 'nodes', data };
      if (collapsed) {
        // A collapsed group is drawn as a block about the size of its expanded contents, so the
        // overview keeps its proportions and expanding happens "in place".
        const bb = this.groupBox(g.id);
        el.position = [bb.cx, bb.cy];
        // Up to a host's size as before; a group of racks (a pod, 10,000+ px expanded) keeps its
        // footprint, label scaled with it, so an overview of pods reads at the zoom that fits them.
        const big = bb.w > 12000 || bb.h > 12000; // pods of racks, a layer of 256 super-spines; not a rack
        data.w = Math.round(big ? Math.max(bb.w * 0.8, 1200) : Math.min(Math.max(bb.w * 0.8, 76), 640));
        data.h = Math.round(big ? Math.max(bb.h * 0.8, data.w / 5, 1200) : Math.min(Math.max(bb.h * 0.8, 44), 420));
        data.fs = Math.round(big ? Math.min(data.w / 9, data.h * 0.4) : Math.min(Math.max(data.w / 12, 10), 40));
        if (!big) data.h = Math.min(Math.max(data.h, Math.round(data.fs * 2.8)), 420); // two label lines fit inside
        // A box taller than its footprint (a one-row layer of 256 super-spines is 0 px tall laid
        // out, 2,700 px collapsed) grows upward: the layout keeps upper tiers above what they
        // serve, and centred it would cover the top row of the pod below.
        // oy: the drawn centre's offset from the footprint's (commitDrag moves by the difference).
        if (data.h > bb.h + 2 * COLLAPSED_OVERHANG) data.oy = Math.floor(bb.h / 2 + COLLAPSED_OVERHANG - data.h / 2);
        if (data.oy) el.position = [bb.cx, bb.cy + data.oy];
        if (big) scale.set(data.id, data.fs / 24); // its edges thicken with it (seen from afar)
      }
      else if (!m.descendantNodes(g.id).length && !(m.childGroups.get(g.id) || []).length) el.position = m.position(g.id) || [0, 0];
      want.set(data.id, el);
    }
    for (const n of m.doc.nodes) {
      if (nodeRep(n.id) !== 'n:' + n.id) continue;
      const attrs = n.attrs || {};
      const data = {
        id: 'n:' + n.id, ref: n.id, etype: 'node', kind: n.kind, role: attrs.role || undefined,
        parent: n.group && m.group(n.group) ? 'g:' + n.group : undefined, label: this.labelOf(n),
      };
      const p = this.posOf(n.id);
      want.set(data.id, { group: 'nodes', data, position: { x: p[0], y: p[1] } });
    }
    const aggs = new Map();
    for (const l of m.doc.links) {
      const ra = nodeRep(l.a); const rb = nodeRep(l.b);
      if (!ra || !rb || ra === rb) continue;
      const cap = this.linkCapacity(l);
      const net = NETWORK_FAMILIES.has(this.linkFamily(l)) ? 1 : 0;
      if (ra.startsWith('n:') && rb.startsWith('n:')) {
        const data = {
          id: 'l:' + l.id, ref: l.id, etype: 'link', source: ra, target: rb, tech: l.tech,
          color: this.speedColor(cap == null ? 0 : cap), width: edgeWidth(cap), net,
          label: `${l.tech || '?'} ${shortGbps(cap)}`,
        };
        want.set(data.id, { group: 'edges', data });
      } else {
        const key = ra < rb ? `${ra}|${rb}` : `${rb}|${ra}`;
        let a = aggs.get(key);
        if (!a) aggs.set(key, (a = { s: ra < rb ? ra : rb, t: ra < rb ? rb : ra, count: 0, cap: 0, max: 0, net: 0, techs: new Map(), links: [] }));
        a.count += 1; a.cap += cap || 0; a.max = Math.max(a.max, cap || 0); a.net += net; a.links.push(l.id);
        a.techs.set(l.tech || '', (a.techs.get(l.tech || '') || 0) + 1);
      }
    }
    for (const [key, a] of aggs) {
      const data = {
        id: 'agg:' + key, ref: key, etype: 'agg', source: a.s, target: a.t, count: a.count,
        color: this.speedColor(a.max), net: a.net * 2 > a.count ? 1 : 0, // dashed when mostly network links
        width: bundleWidth(a.max, a.count) * Math.max(scale.get(a.s) || 1, scale.get(a.t) || 1),
        label: bundleLabel(a.techs, a.cap), links: a.links.length > 64 ? undefined : a.links.join(' '),
      };
      want.set(data.id, { group: 'edges', data });
    }
    for (const el of want.values()) el.data.sig = JSON.stringify(el.data);
    return want;
  }

  /* ---------------------------------------------------------------- render */
  render() {
    const t0 = performance.now();
    this.ensureLayout();
    const want = this.computeVisible();
    const cy = this.cy;
    const large = want.size > LARGE;
    if (large !== this.large) { this.large = large; cy.style(this.buildStyle()); }
    cy.batch(() => {
      const remove = [];
      cy.elements().forEach((el) => {
        if (el.id().startsWith('__')) return;
        const w = want.get(el.id());
        if (!w) { remove.push(el); return; }
        if (el.isNode() && (el.data('parent') || undefined) !== w.data.parent) remove.push(el);
        if (el.isEdge() && (el.data('source') !== w.data.source || el.data('target') !== w.data.target)) remove.push(el);
      });
      if (remove.length) cy.collection(remove).remove();
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
      const depth = (w) => (w.group === 'edges' ? 1e6 : w.data.etype === 'group' ? this.model.ancestors(w.data.ref).length : 1e5);
      add.sort((a, b) => depth(a) - depth(b));
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
      if (!m.group(id)) return cy.collection();
      const g = m.group(id);
      const r = g.parent ? groupRep(g.parent) : null;
      return cy.getElementById(r ? 'g:' + r : 'g:' + id);
    }
    if (kind === 'link') {
      const direct = cy.getElementById('l:' + id);
      if (direct.nonempty()) return direct;
      const l = m.link(id);
      if (!l) return cy.collection();
      const ra = nodeRep(l.a); const rb = nodeRep(l.b);
      if (ra === rb) return cy.getElementById(ra);
      const key = ra < rb ? `${ra}|${rb}` : `${rb}|${ra}`;
      return cy.getElementById('agg:' + key);
    }
    return cy.collection();
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

function shortGbps(g) {
  if (g == null || !isFinite(g)) return '';
  return g >= 1000 ? `${+(g / 1000).toFixed(1)}T` : `${Math.round(g)}G`;
}

function edgeWidth(cap) {
  if (!cap) return 1;
  return Math.max(1, Math.min(6, 1 + Math.log2(cap / 100)));
}

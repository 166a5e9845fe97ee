/* Fabricscope editor — canvas interaction: Cytoscape events, the connect handle and connect mode,
 * dragging, zoom, and dropping palette kinds or files onto the canvas.
 */

/** Tooltip: "8 × nvlink5x1 (3.2 Tb/s) between h0/nvs0 and h0/tray0" for a bundle; id, tech, ends for a link. */
function edgeTooltip(el, model) {
  const end = (id) => id.slice(id.indexOf(':') + 1);
  const ends = `${end(el.data('source'))} and ${end(el.data('target'))}`;
  if (el.data('etype') === 'agg') return `${el.data('label')} between ${ends} (double-click to expand)`;
  const l = model.link(el.data('ref'));
  return `${el.data('ref')}: ${(l && l.tech) || '?'} between ${ends}`;
}

/** The line-style key under the speed legend (dom.js builds the speed legend itself; this adds
 * the dashed = network row once, next to it). */
function addLineStyleLegend(canvas) {
  const root = canvas.closest('.fs-editor');
  const speeds = root && root.querySelector('.fs-legend');
  if (!speeds || root.querySelector('.fs-legend-styles')) return;
  const ul = document.createElement('ul');
  ul.className = 'fs-legend fs-legend-styles';
  for (const [cls, text] of [['fs-line-solid', 'NVLink, PCIe, UPI, DDR'], ['fs-line-dashed', 'network: Ethernet, IB'],
    ['fs-line-bundle', 'bundle: “8 × nvlink5x1”']]) {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = `fs-line ${cls}`;
    li.append(sw, text);
    ul.append(li);
  }
  speeds.after(ul);
}

export const canvasMethods = {
  /* ---------------------------------------------------------------- cytoscape bindings */
  bindCy() {
    const cy = this.cy;
    let selTimer = null;
    cy.on('select unselect', () => {
      clearTimeout(selTimer);
      selTimer = setTimeout(() => { this.updateProps(); this.updateHandle(); if (this.hops) this.applyNeighbourhood(); }, 0);
    });
    cy.on('tap', 'node', (e) => this.onTapNode(e));
    cy.on('tap', (e) => { if (e.target === cy && this.mode === 'connect' && this.connectSource) this.setConnectSource(null); });
    cy.on('dbltap', 'node[etype="group"]', (e) => this.toggleCollapse([e.target.data('ref')]));
    cy.on('dbltap', 'edge[etype="agg"]', (e) => this.expandAggregate(e.target));
    cy.on('pan zoom position', () => this.updateHandle());
    // A link's or bundle's tooltip: the browser's own, from the canvas title.
    cy.on('mouseover', 'edge[etype="agg"], edge[etype="link"]', (e) => { this.canvas.title = edgeTooltip(e.target, this.model); });
    cy.on('mouseout', 'edge', () => { this.canvas.removeAttribute('title'); });
    addLineStyleLegend(this.canvas);
    const pending = new Set();
    cy.on('dragfree', 'node', (e) => {
      pending.add(e.target);
      if (pending.size === 1) queueMicrotask(() => { const els = [...pending]; pending.clear(); this.commitDrag(els); });
    });
    const toModel = (ev) => {
      const rect = this.canvas.getBoundingClientRect();
      const pan = cy.pan(); const z = cy.zoom();
      return { x: (ev.clientX - rect.left - pan.x) / z, y: (ev.clientY - rect.top - pan.y) / z, rx: ev.clientX - rect.left, ry: ev.clientY - rect.top };
    };
    this.toModel = toModel;
    this.canvas.addEventListener('mousemove', (ev) => {
      this.pointer = toModel(ev);
      if (this.ghost) this.ghost.position({ x: this.pointer.x, y: this.pointer.y });
    });
    this.canvas.addEventListener('mouseleave', () => { this.pointer = null; });
    // Handle drag: mousedown on the handle, move, release over a device.
    this.els.handle.addEventListener('mousedown', (ev) => {
      ev.preventDefault(); ev.stopPropagation();
      const sel = this.selectedNodes();
      if (sel.length !== 1) return;
      this.startGhost(sel[0]);
      const move = (e2) => { const p = toModel(e2); if (this.ghost) this.ghost.position({ x: p.x, y: p.y }); };
      const up = (e2) => {
        document.removeEventListener('mousemove', move);
        document.removeEventListener('mouseup', up);
        const target = this.nodeAtRendered(toModel(e2));
        const src = this.ghostSource;
        this.stopGhost();
        if (target && target !== src) this.openLinkPicker(src, target);
      };
      document.addEventListener('mousemove', move);
      document.addEventListener('mouseup', up);
    });
  },

  nodeAtRendered(p) {
    let found = null;
    this.cy.nodes('[etype="node"]').forEach((n) => {
      const bb = n.renderedBoundingBox({ includeLabels: false });
      if (p.rx >= bb.x1 && p.rx <= bb.x2 && p.ry >= bb.y1 && p.ry <= bb.y2) found = n.data('ref');
    });
    return found;
  },

  startGhost(srcId) {
    this.stopGhost();
    const src = this.view.elementFor('node', srcId);
    const p = this.pointer || src.position();
    this.cy.add([{ group: 'nodes', data: { id: '__ghost' }, position: { x: p.x, y: p.y }, selectable: false, grabbable: false },
      { group: 'edges', data: { id: '__ghost_edge', source: src.id(), target: '__ghost' } }]);
    this.ghost = this.cy.getElementById('__ghost');
    this.ghostSource = srcId;
    src.addClass('connect-source');
  },

  stopGhost() {
    this.cy.remove('#__ghost');
    this.cy.$('.connect-source').removeClass('connect-source');
    this.ghost = null; this.ghostSource = null;
  },

  updateHandle() {
    const hd = this.els.handle;
    const sel = this.readonly || this.mode ? [] : this.selectedNodes();
    if (sel.length !== 1) { hd.hidden = true; return; }
    const el = this.view.elementFor('node', sel[0]);
    if (el.empty()) { hd.hidden = true; return; }
    const bb = el.renderedBoundingBox({ includeLabels: false });
    hd.hidden = false;
    hd.style.left = `${bb.x2 + 2}px`;
    hd.style.top = `${bb.y1 - 12}px`;
  },

  onTapNode(e) {
    const el = e.target;
    if (this.mode !== 'connect' || el.id().startsWith('__')) return;
    if (el.data('etype') !== 'node') { this.toast('Expand the group to connect one of its devices.'); return; }
    const id = el.data('ref');
    if (!this.connectSource) { this.setConnectSource(id); return; }
    if (id === this.connectSource) { this.setConnectSource(null); return; }
    const src = this.connectSource;
    this.setConnectSource(null);
    this.openLinkPicker(src, id);
  },

  setConnectSource(id) {
    this.connectSource = id;
    if (id) { this.startGhost(id); this.els.modeBanner.textContent = `Connect: now click the target device for ${id} (Esc cancels)`; } else {
      this.stopGhost();
      if (this.mode === 'connect') this.els.modeBanner.textContent = 'Connect: click the source device (Esc cancels)';
    }
  },

  toggleConnect(force) {
    if (this.readonly) return;
    const on = force != null ? force : this.mode !== 'connect';
    this.mode = on ? 'connect' : null;
    this.els.connect.setAttribute('aria-pressed', on ? 'true' : 'false');
    this.els.connect.classList.toggle('fs-active', on);
    this.els.modeBanner.hidden = !on;
    this.setConnectSource(null);
    this.cy.autounselectify(false);
    this.updateHandle();
  },

  commitDrag(els) {
    if (this.readonly) return;
    const m = this.model;
    const newPos = new Map();
    const visitLeaf = (el) => {
      const et = el.data('etype');
      const p = el.position();
      // Grabbed and released in place (a click, a double-click) is no move: no edit.
      if (et === 'node') { const q = this.view.posOf(el.data('ref')); if (Math.abs(p.x - q[0]) >= 0.5 || Math.abs(p.y - q[1]) >= 0.5) newPos.set(el.data('ref'), [p.x, p.y]); }
      else if (et === 'group' && el.data('collapsed')) {
        const c = this.view.groupCentre(el.data('ref'));
        const dx = p.x - c[0]; const dy = p.y - c[1] - (el.data('oy') || 0); // oy: drawn above its footprint (view.js)
        if (Math.abs(dx) < 0.5 && Math.abs(dy) < 0.5) return;
        for (const id of m.descendantNodes(el.data('ref'))) { const q = this.view.posOf(id); newPos.set(id, [q[0] + dx, q[1] + dy]); }
      }
    };
    for (const el of els) {
      if (el.removed()) continue;
      if (el.isParent()) el.descendants().filter((d) => !d.isParent()).forEach(visitLeaf); else visitLeaf(el);
    }
    const ops = [];
    for (const [id, p] of newPos) ops.push(m.opPos(id, p));
    m.apply(ops, 'move');
  },

  /* ---------------------------------------------------------------- zoom, labels */
  zoomBy(f) {
    const cy = this.cy;
    cy.zoom({ level: Math.max(cy.minZoom(), Math.min(cy.maxZoom(), cy.zoom() * f)), renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
  },

  fit() { this.cy.stop(); this.cy.fit(this.cy.elements().not('#__ghost, #__ghost_edge'), 30); },

  setEdgeLabels(on) {
    this.view.setEdgeLabels(on);
    this.els.labels.querySelector('input').checked = on;
  },

  /* ---------------------------------------------------------------- drop: palette kinds and files */
  bindDrop() {
    const wrap = this.canvasWrap;
    wrap.addEventListener('dragover', (e) => {
      const types = [...e.dataTransfer.types];
      if (types.includes('application/x-fabricscope-kind') && !this.readonly) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; }
      else if (types.includes('Files') && !this.readonly) { e.preventDefault(); this.els.dropHint.hidden = false; }
    });
    wrap.addEventListener('dragleave', () => { this.els.dropHint.hidden = true; });
    wrap.addEventListener('drop', (e) => {
      this.els.dropHint.hidden = true;
      if (this.readonly) return;
      const kind = e.dataTransfer.getData('application/x-fabricscope-kind');
      e.preventDefault();
      if (kind) { const p = this.toModel(e); this.placeNode(kind, { x: p.x, y: p.y }); return; }
      const file = e.dataTransfer.files && e.dataTransfer.files[0];
      if (file) this.importFile(file);
    });
  }
};

/* Fabricscope editor — editing commands on the selection: place, connect, delete, copy/paste,
 * nudge, undo/redo, collapse/expand groups, and the neighbourhood highlight.
 */
import { clone } from './model.js';
import { fmtGbps } from './view.js';

export const editMethods = {
  /* ---------------------------------------------------------------- selection helpers */
  selection() {
    const out = { nodes: [], links: [], groups: [], aggs: [] };
    this.cy.$(':selected').forEach((el) => {
      const et = el.data('etype');
      if (et === 'node') out.nodes.push(el.data('ref'));
      else if (et === 'link') out.links.push(el.data('ref'));
      else if (et === 'group') out.groups.push(el.data('ref'));
      else if (et === 'agg') out.aggs.push(el);
    });
    return out;
  },

  selectedNodes() { return this.selection().nodes; },

  aggLinks(aggEl) {
    const [ra, rb] = [aggEl.data('source'), aggEl.data('target')];
    const { nodeRep } = this.view.makeRepResolver();
    return this.model.doc.links.filter((l) => { const a = nodeRep(l.a); const b = nodeRep(l.b); return (a === ra && b === rb) || (a === rb && b === ra); }).map((l) => l.id);
  },

  selectIds(kind, ids) {
    this.cy.$(':selected').unselect();
    for (const id of ids) this.view.elementFor(kind, id).select();
  },

  /* ---------------------------------------------------------------- editing */
  placeNode(kind, at, groupHint) {
    if (this.readonly) return;
    const m = this.model;
    let pos = at;
    if (!pos) {
      const ext = this.cy.extent();
      pos = this.pointer || { x: (ext.x1 + ext.x2) / 2, y: (ext.y1 + ext.y2) / 2 };
      // Successive clicks without moving should not stack devices on top of each other.
      if (!this.pointer) { this.placeCount = (this.placeCount || 0) + 1; pos = { x: pos.x + ((this.placeCount % 8) - 4) * 50, y: pos.y + Math.floor(this.placeCount / 8) % 4 * 60 }; }
    }
    // Dropped (or keyed) at a point: it joins the group under that point. Clicked in the
    // palette: it joins only an explicitly selected group.
    let group = groupHint !== undefined ? groupHint : at ? this.groupAt(pos) : null;
    if (!group) {
      const sel = this.selection();
      if (sel.groups.length === 1 && !this.viewState.isCollapsed(sel.groups[0])) group = sel.groups[0];
    }
    const role = kind === 'switch' ? 'leaf' : undefined;
    const id = m.newNodeId(kind, group, role);
    const node = { id, kind };
    if (group) node.group = group;
    if (role) node.attrs = { role };
    m.apply([m.opAdd('node', node), m.opPos(id, [pos.x, pos.y])], `add ${id}`);
    this.selectIds('node', [id]);
    return id;
  },

  /** Innermost expanded group whose box contains model point p. */
  groupAt(p) {
    let best = null; let bestArea = Infinity;
    this.cy.nodes('[etype="group"]').forEach((g) => {
      if (!g.isParent() || g.data('collapsed')) return;
      const bb = g.boundingBox({ includeLabels: false });
      if (p.x < bb.x1 || p.x > bb.x2 || p.y < bb.y1 || p.y > bb.y2) return;
      const area = bb.w * bb.h;
      if (area < bestArea) { bestArea = area; best = g.data('ref'); }
    });
    return best;
  },

  suggestTech(a, b) {
    const m = this.model;
    const ka = m.node(a).kind; const kb = m.node(b).kind;
    const key = [ka, kb].sort().join('|');
    const counts = new Map();
    for (const l of m.doc.links) {
      const na = m.node(l.a); const nb = m.node(l.b);
      if (!na || !nb || !l.tech || [na.kind, nb.kind].sort().join('|') !== key) continue;
      counts.set(l.tech, (counts.get(l.tech) || 0) + 1);
    }
    if (counts.size) return [...counts.entries()].sort((x, y) => y[1] - x[1])[0][0];
    const has = (k) => ka === k || kb === k;
    const pick = (...names) => names.find((n) => this.catalog.tech(n)) || this.catalog.techs.keys().next().value;
    if (has('nvswitch') || (ka === 'gpu' && kb === 'gpu')) return pick('nvlink4x4', 'nvlink4x18');
    if (ka === 'cpu' && kb === 'cpu') return pick('upi-spr', 'upi');
    if (has('memory')) return pick('ddr5x8', 'ddr5');
    if (has('switch') || has('storage')) return pick('ib-ndr', 'eth400');
    return pick('pcie5x16', 'pcie4x16');
  },

  openLinkPicker(a, b) {
    if (this.readonly) return;
    const d = this.dialogs.link;
    const f = d.querySelector('form');
    d.querySelector('.fs-ends').textContent = `${a}  ⟷  ${b}`;
    f.tech.value = this.suggestTech(a, b);
    f.querySelector('input[value=effective]').checked = this.catalog.basis !== 'raw';
    f.querySelector('input[value=raw]').checked = this.catalog.basis === 'raw';
    this.fillTech();
    d.returnValue = '';
    d.onclose = () => {
      if (d.returnValue !== 'ok') return;
      const m = this.model;
      const link = { id: m.newLinkId(a, b), a, b, tech: f.tech.value };
      const cap = parseFloat(f.capacity.value); const lat = parseFloat(f.latency.value);
      if (isFinite(cap)) link.capacity_gbps = cap;
      if (isFinite(lat)) link.latency_ns = lat;
      if (f.basis.value === 'raw') link.capacity_basis = 'raw';
      m.apply([m.opAdd('link', link)], `connect ${a} – ${b}`);
      this.selectIds('link', [link.id]);
      this.toast(`Linked ${a} ⟷ ${b} (${link.tech}, ${fmtGbps(link.capacity_gbps)})`);
    };
    d.showModal();
    f.tech.focus();
  },

  deleteSelection() {
    if (this.readonly) return;
    const sel = this.selection();
    for (const agg of sel.aggs) sel.links.push(...this.aggLinks(agg));
    const ops = this.model.opsDelete(sel);
    if (!ops.length) return;
    const n = sel.nodes.length + sel.links.length + sel.groups.length;
    this.model.apply(ops, `delete ${n} item${n > 1 ? 's' : ''}`);
    this.toast(`Deleted ${n} item${n > 1 ? 's' : ''} (Ctrl+Z to undo)`);
  },

  copy() {
    const m = this.model;
    const sel = this.selection();
    const groups = new Set();
    for (const g of sel.groups) { groups.add(g); for (const d of m.descendantGroups(g)) groups.add(d); }
    const nodes = new Set(sel.nodes);
    for (const g of sel.groups) for (const n of m.descendantNodes(g)) nodes.add(n);
    if (!nodes.size && !groups.size) return;
    const links = m.doc.links.filter((l) => nodes.has(l.a) && nodes.has(l.b));
    this.clipboard = {
      groups: m.doc.groups.filter((g) => groups.has(g.id)).map(clone),
      nodes: m.doc.nodes.filter((n) => nodes.has(n.id)).map(clone),
      links: links.map(clone),
      pos: Object.fromEntries([...nodes].map((id) => [id, this.view.posOf(id)])),
    };
    this.pasteCount = 0;
    this.toast(`Copied ${nodes.size} device${nodes.size === 1 ? '' : 's'}${links.length ? `, ${links.length} links` : ''}${groups.size ? `, ${groups.size} groups` : ''}`);
  },

  paste() {
    if (this.readonly || !this.clipboard) return;
    const m = this.model;
    const cb = this.clipboard;
    this.pasteCount += 1;
    const off = 48 * this.pasteCount;
    const taken = new Set();
    const gmap = new Map();
    for (const g of cb.groups) { const id = m.uniqueId(g.id, taken); taken.add(id); gmap.set(g.id, id); }
    const nmap = new Map();
    for (const n of cb.nodes) {
      let id;
      if (n.group && gmap.has(n.group) && n.id.startsWith(n.group + '/')) id = gmap.get(n.group) + n.id.slice(n.group.length);
      else id = m.uniqueId(n.id, taken);
      if (m.idTaken(id) || taken.has(id)) id = m.uniqueId(id, taken);
      taken.add(id); nmap.set(n.id, id);
    }
    const ops = [];
    for (const g of cb.groups) {
      const ng = { ...clone(g), id: gmap.get(g.id) };
      if (g.parent && gmap.has(g.parent)) ng.parent = gmap.get(g.parent);
      else if (g.parent && !m.group(g.parent)) delete ng.parent;
      ops.push(m.opAdd('group', ng));
    }
    for (const n of cb.nodes) {
      const nn = { ...clone(n), id: nmap.get(n.id) };
      if (n.group && gmap.has(n.group)) nn.group = gmap.get(n.group);
      else if (n.group && !m.group(n.group)) delete nn.group;
      ops.push(m.opAdd('node', nn));
      const p = cb.pos[n.id];
      ops.push(m.opPos(nn.id, [p[0] + off, p[1] + off]));
    }
    const ltaken = new Set();
    for (const l of cb.links) {
      const a = nmap.get(l.a); const b = nmap.get(l.b);
      let id = l.id;
      for (const [o, nw] of [[l.a, a], [l.b, b]]) if (id.includes(o)) id = id.replace(o, nw);
      id = m.uniqueLinkId(id, ltaken); ltaken.add(id);
      ops.push(m.opAdd('link', { ...clone(l), id, a, b }));
    }
    m.apply(ops, `paste ${cb.nodes.length} devices`);
    this.cy.$(':selected').unselect();
    for (const g of cb.groups) if (!g.parent || !gmap.has(g.parent)) this.view.elementFor('group', gmap.get(g.id)).select();
    for (const n of cb.nodes) if (!n.group || !gmap.has(n.group)) this.view.elementFor('node', nmap.get(n.id)).select();
    this.toast(`Pasted ${cb.nodes.length} device${cb.nodes.length === 1 ? '' : 's'}`);
  },

  nudge(dx, dy) {
    if (this.readonly) return;
    const sel = this.selection();
    const m = this.model;
    const ids = new Set(sel.nodes);
    for (const g of sel.groups) for (const n of m.descendantNodes(g)) ids.add(n);
    if (!ids.size) return;
    const ops = [...ids].map((id) => { const p = this.view.posOf(id); return m.opPos(id, [p[0] + dx, p[1] + dy]); });
    m.apply(ops, 'nudge');
  },

  undo() { const l = this.model.undo(); if (l) this.toast(`Undid: ${l}`); },

  redo() { const l = this.model.redo(); if (l) this.toast(`Redid: ${l}`); },

  relayoutAll() {
    const m = this.model;
    const ops = Object.keys(m.doc.layout.positions).map((id) => m.opPos(id, null));
    if (!ops.length) { this.toast('Already laid out automatically.'); return; }
    m.apply(ops, 're-layout');
    this.view.relayout();
    this.view.render();
    this.fit();
  },

  /* ---------------------------------------------------------------- groups */
  toggleCollapse(groupIds) {
    const m = this.model;
    groupIds = groupIds.filter((g) => m.group(g));
    if (!groupIds.length) return;
    const collapse = !this.viewState.isCollapsed(groupIds[0]);
    this.setCollapsed(groupIds, collapse);
    const el = this.view.elementFor('group', groupIds[0]);
    this.cy.$(':selected').unselect();
    el.select();
    // Collapsing at reading zoom would fill the screen with one block: step back a little.
    if (collapse && el.renderedWidth() > 0.6 * this.cy.width()) {
      this.cy.animate({ fit: { eles: el.closedNeighborhood(), padding: 60 } }, { duration: 200 });
    }
  },

  toggleSelectedGroup() {
    const sel = this.selection();
    const m = this.model;
    let ids = sel.groups;
    if (!ids.length && sel.nodes.length) ids = [...new Set(sel.nodes.map((n) => m.hostOf(n) || m.node(n).group).filter(Boolean))];
    this.toggleCollapse(ids);
  },

  collapseAll(collapse) {
    const m = this.model;
    const hosts = m.doc.groups.filter((g) => g.kind === 'host').map((g) => g.id);
    const ids = collapse ? hosts : m.doc.groups.map((g) => g.id);
    if (!collapse && m.doc.nodes.length > 3000) this.toast(`Expanding ${hosts.length} hosts (${m.doc.nodes.length.toLocaleString()} devices)…`);
    this.setCollapsed(ids, collapse);
    this.fit();
  },

  expandAggregate(aggEl) {
    const ids = [aggEl.data('source'), aggEl.data('target')].filter((id) => id.startsWith('g:')).map((id) => id.slice(2));
    this.setCollapsed(ids, false);
  },

  /* ---------------------------------------------------------------- neighbourhood */
  cycleHops() {
    this.hops = (this.hops + 1) % 4;
    if (this.hops && !this.cy.$('node:selected').length) { this.hops = 0; this.toast('Select a device first.'); }
    this.applyNeighbourhood();
  },

  applyNeighbourhood() {
    const cy = this.cy;
    cy.elements('.faded, .nhood').removeClass('faded nhood');
    if (!this.hops) return;
    const m = this.model;
    const sel = this.selection();
    const start = new Set(sel.nodes);
    for (const g of sel.groups) for (const n of m.descendantNodes(g)) start.add(n);
    if (!start.size) { this.hops = 0; return; }
    let frontier = [...start];
    const seen = new Set(start);
    for (let k = 0; k < this.hops; k += 1) {
      const next = [];
      for (const id of frontier) for (const lid of m.linksOf(id)) {
        const l = m.link(lid); const o = l.a === id ? l.b : l.a;
        if (!seen.has(o)) { seen.add(o); next.push(o); }
      }
      frontier = next;
    }
    const { nodeRep } = this.view.makeRepResolver();
    const reps = new Set([...seen].map(nodeRep));
    cy.batch(() => {
      cy.elements().forEach((el) => {
        const inSet = el.isNode() ? reps.has(el.id()) || (el.isParent() && el.descendants().some((d) => reps.has(d.id())))
          : reps.has(el.data('source')) && reps.has(el.data('target'));
        el.addClass(inSet ? 'nhood' : 'faded');
      });
    });
    this.toast(`${this.hops}-hop neighbourhood: ${seen.size - start.size} devices (H for more, Esc clears)`);
  }
};

/* Fabricscope editor — the toolbar search box (devices, groups, links) and focusing what it finds. */
import { naturalCompare } from './model.js';
import { h } from './dom.js';

export const searchMethods = {
  /* ---------------------------------------------------------------- search */
  bindSearch() {
    const input = this.els.search;
    const list = this.els.results;
    let items = [];
    let active = 0;
    const render = () => {
      list.innerHTML = '';
      items.forEach((it, i) => list.append(h('li', { role: 'option', class: i === active ? 'fs-active' : '', 'aria-selected': i === active ? 'true' : 'false', onmousedown: (e) => { e.preventDefault(); choose(i); } },
        h('span', { class: `fs-swatch fs-k-${it.kind}` }), it.id, h('small', {}, it.kind))));
      list.hidden = !items.length;
    };
    const choose = (i) => {
      const it = items[i];
      if (!it) return;
      list.hidden = true;
      input.blur();
      this.focusElement(it.type, it.id);
    };
    input.addEventListener('input', () => {
      const q = input.value.trim().toLowerCase();
      active = 0;
      if (!q) { items = []; render(); return; }
      const m = this.model;
      const score = (id) => { const s = id.toLowerCase(); return s === q ? 0 : s.startsWith(q) ? 1 : s.split('/').pop().startsWith(q) ? 2 : s.includes(q) ? 3 : -1; };
      const found = [];
      for (const g of m.doc.groups) { const sc = score(g.id); if (sc >= 0) found.push({ type: 'group', id: g.id, kind: g.kind || 'group', sc }); }
      for (const n of m.doc.nodes) { const sc = score(n.id); if (sc >= 0) found.push({ type: 'node', id: n.id, kind: n.kind, sc }); if (found.length > 400) break; }
      for (const l of m.doc.links) { if (found.length > 400) break; const sc = score(l.id); if (sc === 0) found.push({ type: 'link', id: l.id, kind: 'link', sc }); }
      found.sort((a, b) => a.sc - b.sc || naturalCompare(a.id, b.id));
      items = found.slice(0, 12);
      render();
    });
    input.addEventListener('keydown', (e) => {
      if (e.key === 'ArrowDown') { active = Math.min(active + 1, items.length - 1); render(); e.preventDefault(); }
      else if (e.key === 'ArrowUp') { active = Math.max(active - 1, 0); render(); e.preventDefault(); }
      else if (e.key === 'Enter') { choose(active); e.preventDefault(); }
      else if (e.key === 'Escape') { input.value = ''; items = []; render(); input.blur(); }
    });
    input.addEventListener('blur', () => setTimeout(() => { list.hidden = true; }, 100));
  },

  /** Expand what hides the element, select it and zoom to it. */
  focusElement(type, id) {
    const m = this.model;
    let groupChain = [];
    if (type === 'node' && m.node(id)) groupChain = m.ancestors(m.node(id).group);
    else if (type === 'group' && m.group(id)) groupChain = m.ancestors(m.group(id).parent);
    else if (type === 'link' && m.link(id)) { const l = m.link(id); groupChain = [...m.ancestors(m.node(l.a) && m.node(l.a).group), ...m.ancestors(m.node(l.b) && m.node(l.b).group)]; }
    this.setCollapsed(groupChain, false);
    const el = this.view.elementFor(type, id);
    if (el.empty()) return false;
    this.cy.$(':selected').unselect();
    el.select();
    let zoom = Math.min(Math.max(this.cy.zoom(), 1.3), 2);
    if (type === 'group' || el.isParent()) {
      // Fit the whole group, but never zoom in further than reading distance.
      const bb = el.boundingBox();
      zoom = Math.min(2, Math.max(0.3, Math.min(this.cy.width() / (bb.w + 80), this.cy.height() / (bb.h + 80))));
    }
    this.cy.stop();
    this.cy.animate({ zoom, center: { eles: el } }, { duration: 250 });
    return true;
  }
};

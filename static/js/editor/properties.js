/* Fabricscope editor — the properties panel: the document, one device, link or group, or a summary
 * of a multiple selection. Every change is one undoable model transaction.
 */
import { clone } from './model.js';
import { fmtGbps } from './view.js';
import { appendAll, h, KIND_LABEL } from './dom.js';

const ROLES = ['tor', 'leaf', 'spine', 'core'];

export const propertiesMethods = {
  /* ---------------------------------------------------------------- properties panel */
  updateProps() {
    if (!this.cy) return;
    const P = this.els.props;
    const m = this.model;
    const sel = this.selection();
    const total = sel.nodes.length + sel.links.length + sel.groups.length + sel.aggs.length;
    const ro = this.readonly;
    P.innerHTML = '';
    const field = (label, input, hint) => h('label', { class: 'fs-field' }, h('span', {}, label), input, hint ? h('small', { class: 'fs-hint' }, hint) : null);
    const text = (name, value, onchange, extra = {}) => h('input', { type: 'text', name, value: value == null ? '' : value, disabled: ro, onchange, ...extra });
    const number = (name, value, onchange, extra = {}) => h('input', { type: 'number', name, step: 'any', value: value == null ? '' : value, disabled: ro, onchange, ...extra });
    if (total === 0) {
      appendAll(P, h('h3', {}, 'Document'),
        field('Name', text('doc-name', m.doc.name, (e) => m.apply([{ t: 'meta', key: 'name', before: m.doc.name, after: e.target.value }], 'rename document'))),
        h('p', { class: 'fs-hint' }, ro ? 'Read-only view: pan, zoom, search, collapse and export.' : 'Select a device, link or group to edit it. Drag kinds from the palette, press C to connect, ? for shortcuts.'));
      return;
    }
    if (total > 1) {
      appendAll(P, h('h3', {}, `${total} selected`),
        h('p', {}, `${sel.nodes.length} devices, ${sel.links.length + sel.aggs.length} links, ${sel.groups.length} groups`),
        ro ? null : h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => this.deleteSelection() }, 'Delete selection'));
      return;
    }
    if (sel.nodes.length) return this.nodeProps(P, m.node(sel.nodes[0]), field, text, number);
    if (sel.links.length) return this.linkProps(P, m.link(sel.links[0]), field, text, number);
    if (sel.groups.length) return this.groupProps(P, m.group(sel.groups[0]), field, text);
    if (sel.aggs.length) {
      const agg = sel.aggs[0];
      const ids = this.aggLinks(agg);
      appendAll(P, h('h3', {}, 'Aggregate link'),
        h('p', {}, `${agg.data('label')} between ${agg.data('source').slice(2)} and ${agg.data('target').slice(2)}`),
        h('ul', { class: 'fs-list' }, ids.slice(0, 12).map((id) => h('li', {}, id)), ids.length > 12 ? h('li', {}, `… ${ids.length - 12} more`) : null),
        h('button', { type: 'button', class: 'fs-btn', onclick: () => this.expandAggregate(agg) }, 'Expand to see the links'));
    }
  },

  nodeProps(P, n, field, text, number) {
    const m = this.model;
    const attrs = n.attrs || {};
    const update = (mut, label) => {
      const after = clone(n);
      mut(after);
      if (after.attrs && !Object.keys(after.attrs).length) delete after.attrs;
      m.apply([m.opUpdate('node', n, after)], label);
    };
    const setAttr = (key, raw, numeric) => update((x) => {
      x.attrs = x.attrs || {};
      const v = numeric ? (raw === '' ? null : Number(raw)) : raw.trim();
      if (v === '' || v == null || (numeric && !isFinite(v))) delete x.attrs[key]; else x.attrs[key] = v;
    }, `set ${key} of ${n.id}`);
    const idErr = h('small', { class: 'fs-error', hidden: true, 'data-error': 'id' });
    const idInput = text('id', n.id, (e) => {
      const v = e.target.value.trim();
      const err = !v ? 'The id cannot be empty.' : /\s/.test(v) ? 'No spaces in ids.' : v !== n.id && m.idTaken(v) ? `“${v}” is already used.` : '';
      idErr.textContent = err; idErr.hidden = !err;
      e.target.setAttribute('aria-invalid', err ? 'true' : 'false');
      if (err || v === n.id) return;
      m.apply(m.opsRenameNode(n.id, v), `rename ${n.id} → ${v}`);
      this.selectIds('node', [v]);
    });
    const kindSel = h('select', { name: 'kind', disabled: this.readonly, onchange: (e) => update((x) => { x.kind = e.target.value; }, `kind of ${n.id}`) },
      this.catalog.nodeKinds.map((k) => h('option', { value: k, selected: k === n.kind }, KIND_LABEL[k] || k)));
    const groupSel = h('select', { name: 'group', disabled: this.readonly, onchange: (e) => update((x) => { if (e.target.value) x.group = e.target.value; else delete x.group; }, `move ${n.id} to group`) },
      h('option', { value: '' }, '— none (fabric) —'),
      this.model.doc.groups.length > 300 ? (n.group ? h('option', { value: n.group, selected: true }, n.group) : null)
        : this.model.doc.groups.map((g) => h('option', { value: g.id, selected: g.id === n.group }, `${g.id} (${g.kind})`)));
    const known = new Set(['model', 'rail', 'role', 'socket']);
    const extra = Object.fromEntries(Object.entries(attrs).filter(([k]) => !known.has(k)));
    const extraArea = h('textarea', { name: 'attrs-extra', rows: '3', disabled: this.readonly, spellcheck: 'false' }, Object.keys(extra).length ? JSON.stringify(extra) : '');
    const extraErr = h('small', { class: 'fs-error', hidden: true });
    extraArea.addEventListener('change', () => {
      let obj = {};
      try { obj = extraArea.value.trim() ? JSON.parse(extraArea.value) : {}; if (typeof obj !== 'object' || Array.isArray(obj)) throw new Error('an object'); } catch {
        extraErr.textContent = 'Expected a JSON object, e.g. {"port_gbps": 400}'; extraErr.hidden = false; return;
      }
      update((x) => { const kept = Object.fromEntries(Object.entries(x.attrs || {}).filter(([k]) => known.has(k))); x.attrs = { ...kept, ...obj }; }, `attrs of ${n.id}`);
    });
    const links = m.linksOf(n.id);
    appendAll(P, h('h3', {}, h('span', { class: `fs-swatch fs-k-${n.kind}` }), ` ${KIND_LABEL[n.kind] || n.kind}`),
      field('Id', idInput), idErr,
      field('Kind', kindSel),
      field('Group', groupSel),
      n.kind === 'switch' ? field('Role', h('select', { name: 'role', disabled: this.readonly, onchange: (e) => setAttr('role', e.target.value) },
        h('option', { value: '' }, '—'), ROLES.map((r) => h('option', { value: r, selected: attrs.role === r }, r)))) : null,
      field('Model', text('model', attrs.model, (e) => setAttr('model', e.target.value))),
      field('Rail', number('rail', attrs.rail, (e) => setAttr('rail', e.target.value, true), { min: '0', step: '1' })),
      field('Socket', number('socket', attrs.socket, (e) => setAttr('socket', e.target.value, true), { min: '0', step: '1' })),
      field('Capacity override (Gb/s)', number('capacity_gbps', n.capacity_gbps, (e) => update((x) => {
        const v = parseFloat(e.target.value); if (isFinite(v)) x.capacity_gbps = v; else delete x.capacity_gbps;
      }, `capacity of ${n.id}`), { min: '0', placeholder: 'none — not a shared resource' }), 'A node with a capacity becomes a resource (root complex, memory).'),
      field('Other attributes (JSON)', extraArea), extraErr,
      h('p', { class: 'fs-hint' }, `${links.length} link${links.length === 1 ? '' : 's'}${n.group ? ` · in ${n.group}` : ''}`),
      this.readonly ? null : h('div', { class: 'fs-row' },
        h('button', { type: 'button', class: 'fs-btn', onclick: () => { this.toggleConnect(true); this.setConnectSource(n.id); } }, 'Connect from here'),
        h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => this.deleteSelection() }, 'Delete')));
  },

  linkProps(P, l, field, text, number) {
    const m = this.model;
    const t = this.catalog.tech(l.tech);
    const update = (mut, label) => { const after = clone(l); mut(after); m.apply([m.opUpdate('link', l, after)], label); };
    const techSel = this.techSelect();
    techSel.disabled = this.readonly;
    if (!t && l.tech) techSel.prepend(h('option', { value: l.tech }, `${l.tech} (not in catalog)`));
    techSel.value = l.tech || '';
    techSel.addEventListener('change', () => update((x) => {
      const nt = this.catalog.tech(techSel.value);
      x.tech = techSel.value;
      if (nt) { x.capacity_gbps = x.capacity_basis === 'raw' ? nt.raw : nt.effective; x.latency_ns = nt.latency; }
    }, `tech of ${l.id}`));
    const dflt = t ? (l.capacity_basis === 'raw' ? t.raw : t.effective) : null;
    const setNum = (key) => (e) => update((x) => { const v = parseFloat(e.target.value); if (isFinite(v)) x[key] = v; else delete x[key]; }, `${key} of ${l.id}`);
    const overridden = t && l.capacity_gbps != null && Math.abs(l.capacity_gbps - dflt) > 1e-9;
    appendAll(P, h('h3', {}, 'Link'),
      field('Id', text('id', l.id, null, { readonly: true })),
      h('p', { class: 'fs-ends' }, `${l.a} ⟷ ${l.b}`),
      field('Technology', techSel),
      field('Capacity basis', h('select', { name: 'capacity_basis', disabled: this.readonly, onchange: (e) => update((x) => {
        if (e.target.value === 'raw') x.capacity_basis = 'raw'; else delete x.capacity_basis;
        if (t) x.capacity_gbps = e.target.value === 'raw' ? t.raw : t.effective;
      }, `basis of ${l.id}`) }, h('option', { value: 'effective', selected: l.capacity_basis !== 'raw' }, 'effective'), h('option', { value: 'raw', selected: l.capacity_basis === 'raw' }, 'raw line rate'))),
      field('Capacity (Gb/s per direction)', number('capacity_gbps', l.capacity_gbps, setNum('capacity_gbps'), { min: '0', placeholder: dflt == null ? '' : `catalog: ${dflt}` }),
        t ? `catalog: ${fmtGbps(t.effective)} effective, ${fmtGbps(t.raw)} raw${overridden ? ' · overridden' : ''}` : null),
      field('Latency (ns)', number('latency_ns', l.latency_ns, setNum('latency_ns'), { min: '0', placeholder: t ? `catalog: ${t.latency}` : '' })),
      this.readonly ? null : h('div', { class: 'fs-row' },
        t ? h('button', { type: 'button', class: 'fs-btn', onclick: () => update((x) => { x.capacity_gbps = dflt; x.latency_ns = t.latency; }, `reset ${l.id}`) }, 'Reset to catalog') : null,
        h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => this.deleteSelection() }, 'Delete')));
  },

  groupProps(P, g, field, text) {
    const m = this.model;
    const collapsed = this.viewState.isCollapsed(g.id);
    const nodes = m.descendantNodes(g.id);
    const update = (mut, label) => { const after = clone(g); mut(after); m.apply([m.opUpdate('group', g, after)], label); };
    appendAll(P, h('h3', {}, `${g.kind === 'host' ? 'Host' : g.kind === 'rack' ? 'Rack' : 'Group'} ${g.id}`),
      field('Id', text('id', g.id, null, { readonly: true })),
      field('Kind', h('select', { name: 'gkind', disabled: this.readonly, onchange: (e) => update((x) => { x.kind = e.target.value; }, `kind of ${g.id}`) },
        this.catalog.groupKinds.map((k) => h('option', { value: k, selected: k === g.kind }, k)))),
      field('Template', text('template', g.template, (e) => update((x) => { if (e.target.value.trim()) x.template = e.target.value.trim(); else delete x.template; }, `template of ${g.id}`))),
      field('Parent', text('parent', g.parent, null, { readonly: true })),
      h('p', { class: 'fs-hint' }, `${nodes.length} devices inside`),
      h('div', { class: 'fs-row' },
        h('button', { type: 'button', class: 'fs-btn', 'data-action': 'toggle-collapse', onclick: () => this.toggleCollapse([g.id]) }, collapsed ? 'Expand (E)' : 'Collapse (E)'),
        this.importMatrices && this.importMatrices[g.id] ? h('button', { type: 'button', class: 'fs-btn', 'data-action': 'import-matrix', title: 'The imported file\'s path matrix next to the engine\'s', onclick: () => this.showImportMatrix(g.id) }, 'Compare path matrix') : null,
        this.readonly ? null : h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => this.deleteSelection() }, 'Delete group')));
  }
};

/* Fabricscope editor — the properties panel: the document, one device, link or group, or a summary
 * of a multiple selection. Every change is one undoable model transaction; buttons run commands
 * of `cmd` (commands.js).
 */
import { techSelect } from './dialogs.js';
import { appendAll, h, KIND_LABEL } from './dom.js';
import { clone } from './model.js';
import { aggLinks, selection } from './selection.js';
import { fmtGbps } from './visible.js';

const ROLES = ['tor', 'leaf', 'spine', 'core'];

const KNOWN_ATTRS = new Set(['model', 'rail', 'role', 'socket']); // have their own fields

/** Form controls of the panel; disabled on a viewer's page. */
function controls(ro) {
  return {
    field: (label, input, hint) => h('label', { class: 'fs-field' }, h('span', {}, label), input, hint ? h('small', { class: 'fs-hint' }, hint) : null),
    text: (name, value, onchange, extra = {}) => h('input', { type: 'text', name, value: value == null ? '' : value, disabled: ro, onchange, ...extra }),
    number: (name, value, onchange, extra = {}) => h('input', { type: 'number', name, step: 'any', value: value == null ? '' : value, disabled: ro, onchange, ...extra }),
  };
}

/** Why `v` cannot be node `n`'s new id, or '' when it can. */
export function idProblem(model, n, v) {
  if (!v) return 'The id cannot be empty.';
  if (/\s/.test(v)) return 'No spaces in ids.';
  return v !== n.id && model.idTaken(v) ? `“${v}” is already used.` : '';
}

/** `text` as the extra attributes of a device (a JSON object; blank or `null`: none), or null
 * when it is not one. */
export function parseExtraAttrs(text) {
  let obj;
  try { obj = text.trim() ? JSON.parse(text) : {}; } catch { return null; }
  if (obj === null) return {};
  return typeof obj === 'object' && !Array.isArray(obj) ? obj : null;
}

/** Redraw the panel for the current selection. */
export function updateProps(ed, cmd) {
  if (!ed.cy) return;
  const P = ed.els.props;
  const m = ed.model;
  const sel = selection(ed.cy);
  const total = sel.nodes.length + sel.links.length + sel.groups.length + sel.aggs.length;
  const ro = ed.readonly;
  const c = controls(ro);
  P.innerHTML = '';
  if (total === 0) {
    appendAll(P, h('h3', {}, 'Document'),
      c.field('Name', c.text('doc-name', m.doc.name, (e) => m.apply([{ t: 'meta', key: 'name', before: m.doc.name, after: e.target.value }], 'rename document'))),
      h('p', { class: 'fs-hint' }, ro ? 'Read-only view: pan, zoom, search, collapse and export.' : 'Select a device, link or group to edit it. Drag kinds from the palette, press C to connect, ? for shortcuts.'));
    return;
  }
  if (total > 1) {
    appendAll(P, h('h3', {}, `${total} selected`),
      h('p', {}, `${sel.nodes.length} devices, ${sel.links.length + sel.aggs.length} links, ${sel.groups.length} groups`),
      ro ? null : h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => cmd.deleteSelection() }, 'Delete selection'));
    return;
  }
  if (sel.nodes.length) nodeProps(ed, cmd, P, m.node(sel.nodes[0]), c);
  else if (sel.links.length) linkProps(ed, cmd, P, m.link(sel.links[0]), c);
  else if (sel.groups.length) groupProps(ed, cmd, P, m.group(sel.groups[0]), c);
  else aggProps(ed, cmd, P, sel.aggs[0]);
}

function aggProps(ed, cmd, P, agg) {
  const ids = aggLinks(ed, agg);
  appendAll(P, h('h3', {}, 'Aggregate link'),
    h('p', {}, `${agg.data('label')} between ${agg.data('source').slice(2)} and ${agg.data('target').slice(2)}`),
    h('ul', { class: 'fs-list' }, ids.slice(0, 12).map((id) => h('li', {}, id)), ids.length > 12 ? h('li', {}, `… ${ids.length - 12} more`) : null),
    h('button', { type: 'button', class: 'fs-btn', onclick: () => cmd.expandAggregate(agg) }, 'Expand to see the links'));
}

/** The id field of node `n` and its error line: a valid new id renames it (links follow). */
function idField(ed, cmd, n, c) {
  const m = ed.model;
  const err = h('small', { class: 'fs-error', hidden: true, 'data-error': 'id' });
  const input = c.text('id', n.id, (e) => {
    const v = e.target.value.trim();
    const problem = idProblem(m, n, v);
    err.textContent = problem; err.hidden = !problem;
    e.target.setAttribute('aria-invalid', problem ? 'true' : 'false');
    if (problem || v === n.id) return;
    m.apply(m.opsRenameNode(n.id, v), `rename ${n.id} → ${v}`);
    cmd.selectIds('node', [v]);
  });
  return [c.field('Id', input), err];
}

/** The attributes without a field of their own, edited as JSON. */
function extraAttrsField(ed, n, c, update) {
  const extra = Object.fromEntries(Object.entries(n.attrs || {}).filter(([k]) => !KNOWN_ATTRS.has(k)));
  const area = h('textarea', { name: 'attrs-extra', rows: '3', disabled: ed.readonly, spellcheck: 'false' }, Object.keys(extra).length ? JSON.stringify(extra) : '');
  const err = h('small', { class: 'fs-error', hidden: true });
  area.addEventListener('change', () => {
    const obj = parseExtraAttrs(area.value);
    if (!obj) { err.textContent = 'Expected a JSON object, e.g. {"port_gbps": 400}'; err.hidden = false; return; }
    update((x) => { const kept = Object.fromEntries(Object.entries(x.attrs || {}).filter(([k]) => KNOWN_ATTRS.has(k))); x.attrs = { ...kept, ...obj }; }, `attrs of ${n.id}`);
  });
  return [c.field('Other attributes (JSON)', area), err];
}

function groupSelect(ed, n, update) {
  const groups = ed.model.doc.groups;
  return h('select', { name: 'group', disabled: ed.readonly, onchange: (e) => update((x) => { if (e.target.value) x.group = e.target.value; else delete x.group; }, `move ${n.id} to group`) },
    h('option', { value: '' }, '— none (fabric) —'),
    // A long list would make every selection slow: then only the current group is offered.
    groups.length > 300 ? (n.group ? h('option', { value: n.group, selected: true }, n.group) : null)
      : groups.map((g) => h('option', { value: g.id, selected: g.id === n.group }, `${g.id} (${g.kind})`)));
}

function nodeProps(ed, cmd, P, n, c) {
  const m = ed.model;
  const ro = ed.readonly;
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
  const kindSel = h('select', { name: 'kind', disabled: ro, onchange: (e) => update((x) => { x.kind = e.target.value; }, `kind of ${n.id}`) },
    ed.catalog.nodeKinds.map((k) => h('option', { value: k, selected: k === n.kind }, KIND_LABEL[k] || k)));
  const links = m.linksOf(n.id);
  appendAll(P, h('h3', {}, h('span', { class: `fs-swatch fs-k-${n.kind}` }), ` ${KIND_LABEL[n.kind] || n.kind}`),
    ...idField(ed, cmd, n, c),
    c.field('Kind', kindSel),
    c.field('Group', groupSelect(ed, n, update)),
    n.kind === 'switch' ? c.field('Role', h('select', { name: 'role', disabled: ro, onchange: (e) => setAttr('role', e.target.value) },
      h('option', { value: '' }, '—'), ROLES.map((r) => h('option', { value: r, selected: attrs.role === r }, r)))) : null,
    c.field('Model', c.text('model', attrs.model, (e) => setAttr('model', e.target.value))),
    c.field('Rail', c.number('rail', attrs.rail, (e) => setAttr('rail', e.target.value, true), { min: '0', step: '1' })),
    c.field('Socket', c.number('socket', attrs.socket, (e) => setAttr('socket', e.target.value, true), { min: '0', step: '1' })),
    c.field('Capacity override (Gb/s)', c.number('capacity_gbps', n.capacity_gbps, (e) => update((x) => {
      const v = parseFloat(e.target.value); if (isFinite(v)) x.capacity_gbps = v; else delete x.capacity_gbps;
    }, `capacity of ${n.id}`), { min: '0', placeholder: 'none — not a shared resource' }), 'A node with a capacity becomes a resource (root complex, memory).'),
    ...extraAttrsField(ed, n, c, update),
    h('p', { class: 'fs-hint' }, `${links.length} link${links.length === 1 ? '' : 's'}${n.group ? ` · in ${n.group}` : ''}`),
    ro ? null : h('div', { class: 'fs-row' },
      h('button', { type: 'button', class: 'fs-btn', onclick: () => cmd.connectFrom(n.id) }, 'Connect from here'),
      h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => cmd.deleteSelection() }, 'Delete')));
}

/** The technology picker of link `l`: a new technology resets capacity and latency. */
function linkTechSelect(ed, l, t, update) {
  const sel = techSelect(ed.catalog);
  sel.disabled = ed.readonly;
  if (!t && l.tech) sel.prepend(h('option', { value: l.tech }, `${l.tech} (not in catalog)`));
  sel.value = l.tech || '';
  sel.addEventListener('change', () => update((x) => {
    const nt = ed.catalog.tech(sel.value);
    x.tech = sel.value;
    if (nt) { x.capacity_gbps = x.capacity_basis === 'raw' ? nt.raw : nt.effective; x.latency_ns = nt.latency; }
  }, `tech of ${l.id}`));
  return sel;
}

function linkProps(ed, cmd, P, l, c) {
  const m = ed.model;
  const ro = ed.readonly;
  const t = ed.catalog.tech(l.tech);
  const update = (mut, label) => { const after = clone(l); mut(after); m.apply([m.opUpdate('link', l, after)], label); };
  const dflt = t ? (l.capacity_basis === 'raw' ? t.raw : t.effective) : null;
  const setNum = (key) => (e) => update((x) => { const v = parseFloat(e.target.value); if (isFinite(v)) x[key] = v; else delete x[key]; }, `${key} of ${l.id}`);
  const overridden = t && l.capacity_gbps != null && Math.abs(l.capacity_gbps - dflt) > 1e-9;
  appendAll(P, h('h3', {}, 'Link'),
    c.field('Id', c.text('id', l.id, null, { readonly: true })),
    h('p', { class: 'fs-ends' }, `${l.a} ⟷ ${l.b}`),
    c.field('Technology', linkTechSelect(ed, l, t, update)),
    c.field('Capacity basis', h('select', { name: 'capacity_basis', disabled: ro, onchange: (e) => update((x) => {
      if (e.target.value === 'raw') x.capacity_basis = 'raw'; else delete x.capacity_basis;
      if (t) x.capacity_gbps = e.target.value === 'raw' ? t.raw : t.effective;
    }, `basis of ${l.id}`) }, h('option', { value: 'effective', selected: l.capacity_basis !== 'raw' }, 'effective'), h('option', { value: 'raw', selected: l.capacity_basis === 'raw' }, 'raw line rate'))),
    c.field('Capacity (Gb/s per direction)', c.number('capacity_gbps', l.capacity_gbps, setNum('capacity_gbps'), { min: '0', placeholder: dflt == null ? '' : `catalog: ${dflt}` }),
      t ? `catalog: ${fmtGbps(t.effective)} effective, ${fmtGbps(t.raw)} raw${overridden ? ' · overridden' : ''}` : null),
    c.field('Latency (ns)', c.number('latency_ns', l.latency_ns, setNum('latency_ns'), { min: '0', placeholder: t ? `catalog: ${t.latency}` : '' })),
    ro ? null : h('div', { class: 'fs-row' },
      t ? h('button', { type: 'button', class: 'fs-btn', onclick: () => update((x) => { x.capacity_gbps = dflt; x.latency_ns = t.latency; }, `reset ${l.id}`) }, 'Reset to catalog') : null,
      h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => cmd.deleteSelection() }, 'Delete')));
}

const GROUP_TITLE = new Map([['host', 'Host'], ['rack', 'Rack']]);

function groupProps(ed, cmd, P, g, c) {
  const m = ed.model;
  const ro = ed.readonly;
  const collapsed = ed.viewState.isCollapsed(g.id);
  const nodes = m.descendantNodes(g.id);
  const update = (mut, label) => { const after = clone(g); mut(after); m.apply([m.opUpdate('group', g, after)], label); };
  const imported = ed.server.importMatrices.has(g.id);
  appendAll(P, h('h3', {}, `${GROUP_TITLE.get(g.kind) || 'Group'} ${g.id}`),
    c.field('Id', c.text('id', g.id, null, { readonly: true })),
    c.field('Kind', h('select', { name: 'gkind', disabled: ro, onchange: (e) => update((x) => { x.kind = e.target.value; }, `kind of ${g.id}`) },
      ed.catalog.groupKinds.map((k) => h('option', { value: k, selected: k === g.kind }, k)))),
    c.field('Template', c.text('template', g.template, (e) => update((x) => { if (e.target.value.trim()) x.template = e.target.value.trim(); else delete x.template; }, `template of ${g.id}`))),
    c.field('Parent', c.text('parent', g.parent, null, { readonly: true })),
    h('p', { class: 'fs-hint' }, `${nodes.length} devices inside`),
    h('div', { class: 'fs-row' },
      h('button', { type: 'button', class: 'fs-btn', 'data-action': 'toggle-collapse', onclick: () => cmd.toggleCollapse([g.id]) }, collapsed ? 'Expand (E)' : 'Collapse (E)'),
      imported ? h('button', { type: 'button', class: 'fs-btn', 'data-action': 'import-matrix', title: 'The imported file\'s path matrix next to the engine\'s', onclick: () => cmd.showImportMatrix(g.id) }, 'Compare path matrix') : null,
      ro ? null : h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => cmd.deleteSelection() }, 'Delete group')));
}

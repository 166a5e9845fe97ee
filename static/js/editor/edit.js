/* Fabricscope editor — editing commands on the selection: place, connect, delete, copy/paste,
 * nudge, undo/redo, re-layout. Each is one undoable model transaction.
 *
 * The exported pure functions (suggestTech, newNodeOps, linkFromForm, copyItems, pasteOps,
 * nudgeOps) compute the transaction from the model alone; the commands (taking the editor
 * state `ed`, see state.js) read the canvas, apply it and say what happened.
 */
import { toast } from './chrome.js';
import { fillTech } from './dialogs.js';
import { clone } from './model.js';
import { aggLinks, selectIds, selection } from './selection.js';
import { fit } from './viewport.js';
import { fmtGbps } from './visible.js';

const PASTE_OFFSET = 48; // px each paste of one clipboard lands further down-right

export const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;

/* ================================================================ pure: transactions */
/** The technology most links between these two kinds already use, or undefined. */
function usedTech(model, ka, kb) {
  const key = [ka, kb].sort().join('|');
  const counts = new Map();
  for (const l of model.doc.links) {
    const na = model.node(l.a); const nb = model.node(l.b);
    if (!na || !nb || !l.tech || [na.kind, nb.kind].sort().join('|') !== key) continue;
    counts.set(l.tech, (counts.get(l.tech) || 0) + 1);
  }
  return counts.size ? [...counts.entries()].sort((x, y) => y[1] - x[1])[0][0] : undefined;
}

/** A sensible technology for a new link between two kinds, among those in the catalog. */
function defaultTech(catalog, ka, kb) {
  const has = (k) => ka === k || kb === k;
  const pick = (...names) => names.find((n) => catalog.tech(n)) || catalog.techs.keys().next().value;
  if (has('nvswitch') || (ka === 'gpu' && kb === 'gpu')) return pick('nvlink4x4', 'nvlink4x18');
  if (ka === 'cpu' && kb === 'cpu') return pick('upi-spr', 'upi');
  if (has('memory')) return pick('ddr5x8', 'ddr5');
  if (has('switch') || has('storage')) return pick('ib-ndr', 'eth400');
  return pick('pcie5x16', 'pcie4x16');
}

/** The technology the link dialog proposes for a new link a – b: what the design already uses
 * between these kinds, else a default for them. */
export function suggestTech(model, catalog, a, b) {
  const ka = model.node(a).kind; const kb = model.node(b).kind;
  return usedTech(model, ka, kb) || defaultTech(catalog, ka, kb);
}

/** Ops adding a device of `kind` in `group` (or none) at `pos`; a switch starts as a leaf. */
export function newNodeOps(model, kind, group, pos) {
  const role = kind === 'switch' ? 'leaf' : undefined;
  const id = model.newNodeId(kind, group, role);
  const node = { id, kind };
  if (group) node.group = group;
  if (role) node.attrs = { role };
  return { id, ops: [model.opAdd('node', node), model.opPos(id, [pos.x, pos.y])] };
}

/** Where the `n`-th device placed without a pointer lands: successive clicks without moving
 * should not stack devices on top of each other. */
export function staggered(pos, n) {
  return { x: pos.x + ((n % 8) - 4) * 50, y: pos.y + Math.floor(n / 8) % 4 * 60 };
}

/** The link the dialog's values describe ({tech, capacity, latency, basis}, as typed). */
export function linkFromForm(model, a, b, values) {
  const link = { id: model.newLinkId(a, b), a, b, tech: values.tech };
  const cap = parseFloat(values.capacity); const lat = parseFloat(values.latency);
  if (isFinite(cap)) link.capacity_gbps = cap;
  if (isFinite(lat)) link.latency_ns = lat;
  if (values.basis === 'raw') link.capacity_basis = 'raw';
  return link;
}

/** Devices of the selection, the selected groups' included. */
function selectedDevices(model, sel) {
  const ids = new Set(sel.nodes);
  for (const g of sel.groups) for (const n of model.descendantNodes(g)) ids.add(n);
  return ids;
}

/** The clipboard of a selection: its groups (with their subgroups), devices, the links among
 * them and their positions; null when nothing is selected. */
export function copyItems(model, sel, posOf) {
  const groups = new Set();
  for (const g of sel.groups) { groups.add(g); for (const d of model.descendantGroups(g)) groups.add(d); }
  const nodes = selectedDevices(model, sel);
  if (!nodes.size && !groups.size) return null;
  return {
    groups: model.doc.groups.filter((g) => groups.has(g.id)).map(clone),
    nodes: model.doc.nodes.filter((n) => nodes.has(n.id)).map(clone),
    links: model.doc.links.filter((l) => nodes.has(l.a) && nodes.has(l.b)).map(clone),
    pos: Object.fromEntries([...nodes].map((id) => [id, posOf(id)])),
  };
}

/** New ids for a paste: groups get free ids; a device inside a pasted group follows its group
 * ("h0/gpu1" in h0 pasted as h1 -> "h1/gpu1"), any other a free id like its own. */
function pasteIds(model, cb) {
  const taken = new Set();
  const gmap = new Map();
  for (const g of cb.groups) { const id = model.uniqueId(g.id, taken); taken.add(id); gmap.set(g.id, id); }
  const nmap = new Map();
  for (const n of cb.nodes) {
    const inPasted = n.group && gmap.has(n.group) && n.id.startsWith(n.group + '/');
    let id = inPasted ? gmap.get(n.group) + n.id.slice(n.group.length) : model.uniqueId(n.id, taken);
    if (model.idTaken(id) || taken.has(id)) id = model.uniqueId(id, taken);
    taken.add(id); nmap.set(n.id, id);
  }
  return { gmap, nmap };
}

/** `item` with its container (`key`: parent or group) mapped to the pasted copy, or dropped
 * when the container is neither pasted nor in the document. */
function reattach(model, item, key, gmap) {
  const was = item[key];
  if (!was) return item;
  if (gmap.has(was)) item[key] = gmap.get(was);
  else if (!model.group(was)) delete item[key];
  return item;
}

function pastedLinkOps(model, cb, nmap) {
  const ops = [];
  const taken = new Set();
  for (const l of cb.links) {
    const a = nmap.get(l.a); const b = nmap.get(l.b);
    let id = l.id;
    for (const [o, nw] of [[l.a, a], [l.b, b]]) if (id.includes(o)) id = id.replace(o, nw);
    id = model.uniqueLinkId(id, taken); taken.add(id);
    ops.push(model.opAdd('link', { ...clone(l), id, a, b }));
  }
  return ops;
}

/**
 * The ops of pasting clipboard `cb` for the `pasteNo`-th time (each lands further off).
 * @returns {{ops: object[], gmap: Map<string, string>, nmap: Map<string, string>}} the ops and
 *   the copied ids of groups and devices
 */
export function pasteOps(model, cb, pasteNo) {
  const off = PASTE_OFFSET * pasteNo;
  const { gmap, nmap } = pasteIds(model, cb);
  const ops = [];
  for (const g of cb.groups) ops.push(model.opAdd('group', reattach(model, { ...clone(g), id: gmap.get(g.id) }, 'parent', gmap)));
  for (const n of cb.nodes) {
    const nn = reattach(model, { ...clone(n), id: nmap.get(n.id) }, 'group', gmap);
    const p = cb.pos[n.id];
    ops.push(model.opAdd('node', nn), model.opPos(nn.id, [p[0] + off, p[1] + off]));
  }
  ops.push(...pastedLinkOps(model, cb, nmap));
  return { ops, gmap, nmap };
}

/** Ops moving the selected devices (and those of selected groups) by dx, dy. */
export function nudgeOps(model, sel, posOf, dx, dy) {
  return [...selectedDevices(model, sel)].map((id) => { const p = posOf(id); return model.opPos(id, [p[0] + dx, p[1] + dy]); });
}

/* ================================================================ commands */
/** Innermost expanded group whose box contains model point p. */
export function groupAt(cy, p) {
  let best = null; let bestArea = Infinity;
  cy.nodes('[etype="group"]').forEach((g) => {
    if (!g.isParent() || g.data('collapsed')) return;
    const bb = g.boundingBox({ includeLabels: false });
    if (p.x < bb.x1 || p.x > bb.x2 || p.y < bb.y1 || p.y > bb.y2) return;
    const area = bb.w * bb.h;
    if (area < bestArea) { bestArea = area; best = g.data('ref'); }
  });
  return best;
}

/** Where a device placed without a point goes: the pointer, else around the view's centre. */
function freePlace(ed) {
  if (ed.pointer) return ed.pointer;
  const ext = ed.cy.extent();
  ed.clip.placed += 1;
  return staggered({ x: (ext.x1 + ext.x2) / 2, y: (ext.y1 + ext.y2) / 2 }, ed.clip.placed);
}

/** Add a device of `kind`. Dropped (or keyed) at a point: it joins the group under that point.
 * Clicked in the palette: it joins only an explicitly selected, expanded group. */
export function placeNode(ed, kind, at, groupHint) {
  if (ed.readonly) return undefined;
  const pos = at || freePlace(ed);
  let group = groupHint !== undefined ? groupHint : at ? groupAt(ed.cy, pos) : null;
  if (!group) {
    const sel = selection(ed.cy);
    if (sel.groups.length === 1 && !ed.viewState.isCollapsed(sel.groups[0])) group = sel.groups[0];
  }
  const { id, ops } = newNodeOps(ed.model, kind, group, pos);
  ed.model.apply(ops, `add ${id}`);
  selectIds(ed, 'node', [id]);
  return id;
}

/** The link dialog for a new link a – b, filled from the catalog. */
export function openLinkPicker(ed, a, b) {
  if (ed.readonly) return;
  const d = ed.dialogs.link;
  const f = d.querySelector('form');
  d.querySelector('.fs-ends').textContent = `${a}  ⟷  ${b}`;
  f.tech.value = suggestTech(ed.model, ed.catalog, a, b);
  f.querySelector('input[value=effective]').checked = ed.catalog.basis !== 'raw';
  f.querySelector('input[value=raw]').checked = ed.catalog.basis === 'raw';
  fillTech(f, ed.catalog);
  d.returnValue = '';
  d.onclose = () => {
    if (d.returnValue !== 'ok') return;
    const link = linkFromForm(ed.model, a, b, { tech: f.tech.value, capacity: f.capacity.value, latency: f.latency.value, basis: f.basis.value });
    ed.model.apply([ed.model.opAdd('link', link)], `connect ${a} – ${b}`);
    selectIds(ed, 'link', [link.id]);
    toast(ed, `Linked ${a} ⟷ ${b} (${link.tech}, ${fmtGbps(link.capacity_gbps)})`);
  };
  d.showModal();
  f.tech.focus();
}

export function deleteSelection(ed) {
  if (ed.readonly) return;
  const sel = selection(ed.cy);
  for (const agg of sel.aggs) sel.links.push(...aggLinks(ed, agg));
  const ops = ed.model.opsDelete(sel);
  if (!ops.length) return;
  const n = sel.nodes.length + sel.links.length + sel.groups.length;
  ed.model.apply(ops, `delete ${n} item${n > 1 ? 's' : ''}`);
  toast(ed, `Deleted ${n} item${n > 1 ? 's' : ''} (Ctrl+Z to undo)`);
}

export function copy(ed) {
  const cb = copyItems(ed.model, selection(ed.cy), (id) => ed.view.posOf(id));
  if (!cb) return;
  ed.clip.items = cb;
  ed.clip.pastes = 0;
  toast(ed, `Copied ${plural(cb.nodes.length, 'device')}${cb.links.length ? `, ${cb.links.length} links` : ''}${cb.groups.length ? `, ${cb.groups.length} groups` : ''}`);
}

export function paste(ed) {
  const cb = ed.clip.items;
  if (ed.readonly || !cb) return;
  ed.clip.pastes += 1;
  const { ops, gmap, nmap } = pasteOps(ed.model, cb, ed.clip.pastes);
  ed.model.apply(ops, `paste ${cb.nodes.length} devices`);
  // Select the outermost pasted items: groups not inside a pasted group, devices outside them.
  ed.cy.$(':selected').unselect();
  for (const g of cb.groups) if (!g.parent || !gmap.has(g.parent)) ed.view.elementFor('group', gmap.get(g.id)).select();
  for (const n of cb.nodes) if (!n.group || !gmap.has(n.group)) ed.view.elementFor('node', nmap.get(n.id)).select();
  toast(ed, `Pasted ${plural(cb.nodes.length, 'device')}`);
}

export function nudge(ed, dx, dy) {
  if (ed.readonly) return;
  const ops = nudgeOps(ed.model, selection(ed.cy), (id) => ed.view.posOf(id), dx, dy);
  if (ops.length) ed.model.apply(ops, 'nudge');
}

export function undo(ed) { const l = ed.model.undo(); if (l) toast(ed, `Undid: ${l}`); }

export function redo(ed) { const l = ed.model.redo(); if (l) toast(ed, `Redid: ${l}`); }

/** Forget every hand-placed position and lay out automatically (one undoable step). */
export function relayoutAll(ed) {
  const m = ed.model;
  const ops = Object.keys(m.doc.layout.positions).map((id) => m.opPos(id, null));
  if (!ops.length) { toast(ed, 'Already laid out automatically.'); return; }
  m.apply(ops, 're-layout');
  ed.view.relayout();
  ed.view.render();
  fit(ed);
}

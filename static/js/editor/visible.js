/* Fabricscope editor — the visible set: which Cytoscape elements stand for the document now.
 *
 * Only visible elements are materialized: a collapsed group is one node, and the links between
 * two different visible representatives, one of them a collapsed group, are drawn once per pair
 * as a bundle ("8 × nvlink5x1 (3.2 Tb/s)") whose width grows with the count. Bundles are view
 * state: they follow the collapsed set (viewstate.js), never the document. Network links
 * (Ethernet, InfiniBand) are dashed, so a bundle of 400 Gb/s NVLinks is told from a 400 Gb/s
 * Ethernet link by its line.
 *
 * Pure: no DOM, no Cytoscape. Everything is read from a `scene`:
 *   {model, viewState, catalog, posOf(nodeId) -> [x, y], speedColor(gbps) -> colour, nvlinkColor}
 */

/** Link families drawn dashed: cables of the scale-out network, not a node's or rack's own links. */
export const NETWORK_FAMILIES = new Set(['ethernet', 'infiniband']);
const COLLAPSED_OVERHANG = 50; // px a collapsed box may reach below its laid-out footprint (< the layout's 120 px row gap)
const BUNDLE_MAX_WIDTH = 10; // px: a bundle's width grows with log2(count) up to this
const BIG_GROUP_PX = 12000; // a footprint wider or taller than this is a pod or a super-spine layer, not a rack
const BUNDLE_LIST_MAX = 64; // member ids kept on a bundle (the properties panel lists them)
// A collapsed box's label: a character of a sans-serif label ("4 GPUs · 14 devices") is about 0.66 em wide on
// average in DejaVu Sans (Chromium's default on Linux; measured in tests/browser/test_drawings.py): 0.68 keeps
// it inside its box. Lines are 1.2 em apart.
const CHAR_EM = 0.68;
const LINE_HEIGHT = 1.2;
const LABEL_PAD = 6; // px kept clear on each side of a collapsed box's label
const LABEL_MAX_FS = 64; // px: a tray's label at most this big (an NVL72 rack fitted to 800 px: about 10 px on screen)

export function fmtGbps(g) {
  if (g == null || !isFinite(g)) return '?';
  if (g >= 1000) return `${+(g / 1000).toFixed(g >= 10000 ? 0 : 1)} Tb/s`;
  return `${+g.toFixed(g >= 100 ? 0 : 1)} Gb/s`;
}

export function shortGbps(g) {
  if (g == null || !isFinite(g)) return '';
  return g >= 1000 ? `${+(g / 1000).toFixed(1)}T` : `${Math.round(g)}G`;
}

/** Edge width of one link: 1 px up to 100 Gb/s, one more per doubling, 6 at most. */
export function edgeWidth(cap) {
  if (!cap) return 1;
  return Math.max(1, Math.min(6, 1 + Math.log2(cap / 100)));
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

/** Capacity of link `l` in Gb/s per direction: its own, else its technology's, else null. */
export function linkCapacity(catalog, l) {
  if (l.capacity_gbps != null && isFinite(l.capacity_gbps)) return Number(l.capacity_gbps);
  const t = catalog.tech(l.tech);
  if (!t) return null;
  return l.capacity_basis === 'raw' ? t.raw : t.effective;
}

export function linkFamily(catalog, l) { const t = catalog.tech(l.tech); return t ? t.family : 'other'; }

/**
 * Colour of a link: every NVLink (any generation and width, C2C too) takes the NVLink colour of
 * the legend, other links their speed class's. By speed alone an NVLink 4 x4 (659 Gb/s) would
 * read as the legend's PCIe class and an NVLink 5 x18 (14.4 Tb/s) as DDR.
 * @param {object} scene see the top of this file (`nvlinkColor` optional: speed only without it)
 * @param {number|null} capGbps Gb/s per direction
 * @param {string} family the technology's family ('nvlink', 'pcie', ...)
 * @returns {string} colour
 */
export function linkColor(scene, capGbps, family) {
  if (family === 'nvlink' && scene.nvlinkColor) return scene.nvlinkColor;
  return scene.speedColor(capGbps == null ? 0 : capGbps);
}

/** Bounds of the laid-out positions of `ids`, or null for none. */
function bounds(ids, posOf) {
  if (!ids.length) return null;
  let x0 = Infinity; let x1 = -Infinity; let y0 = Infinity; let y1 = -Infinity;
  for (const id of ids) {
    const [x, y] = posOf(id);
    x0 = Math.min(x0, x); x1 = Math.max(x1, x);
    y0 = Math.min(y0, y); y1 = Math.max(y1, y);
  }
  return { x0, x1, y0, y1 };
}

/** bounds() of the devices of group `gid` and of the groups inside it, each group's own devices
 * read at once where `blockBounds(prefix, ids)` answers for them (a host's laid-out block). */
function groupBounds(model, posOf, gid, blockBounds) {
  let b = null;
  for (const g of [gid, ...model.descendantGroups(gid)]) {
    const ids = model.childNodes.get(g);
    if (!ids || !ids.length) continue;
    const part = blockBounds(`${g}/`, ids) || bounds(ids, posOf);
    b = b ? { x0: Math.min(b.x0, part.x0), x1: Math.max(b.x1, part.x1), y0: Math.min(b.y0, part.y0), y1: Math.max(b.y1, part.y1) } : part;
  }
  return b;
}

/** Footprint of group `gid` (its devices laid out, `ids` when the caller has listed them):
 * centre, width and height. `blockBounds` (optional, see groupBounds) reads hosts whole. */
export function groupBox(model, posOf, gid, ids = model.descendantNodes(gid), blockBounds = null) {
  const b = blockBounds ? groupBounds(model, posOf, gid, blockBounds) : bounds(ids, posOf);
  if (!b) { const p = model.position(gid) || [0, 0]; return { cx: p[0], cy: p[1], w: 0, h: 0 }; }
  return { cx: (b.x0 + b.x1) / 2, cy: (b.y0 + b.y1) / 2, w: b.x1 - b.x0, h: b.y1 - b.y0 };
}

export function groupCentre(model, posOf, gid) {
  const b = bounds(model.descendantNodes(gid), posOf);
  if (!b) return model.position(gid) || [0, 0];
  return [(b.x0 + b.x1) / 2, (b.y0 + b.y1) / 2];
}

/** Which visible element stands for a group or a node: groupRep(gid) is the outermost
 * collapsed group containing `gid` (itself included) or null; nodeRep(nid) is "g:<group>"
 * inside a collapsed group, else "n:<nid>" (null for an unknown node). */
export function makeRepResolver(model, viewState) {
  const cache = new Map();
  const groupRep = (gid) => {
    if (!gid || !model.group(gid)) return null;
    if (cache.has(gid)) return cache.get(gid);
    let rep = null;
    for (const a of model.ancestors(gid)) if (viewState.isCollapsed(a)) rep = a;
    cache.set(gid, rep);
    return rep;
  };
  const keys = new Map(); // group -> "g:<its representative>" (or null): one string per group
  const repOf = (n) => {
    let key = keys.get(n.group);
    if (key === undefined) {
      const g = groupRep(n.group);
      keys.set(n.group, (key = g ? 'g:' + g : null));
    }
    return key || 'n:' + n.id;
  };
  const nodeRep = (nid) => {
    const n = model.node(nid);
    return n ? repOf(n) : null;
  };
  /** nodeRep of the device at position `i` of doc.nodes (-1, an unknown device: null). */
  const nodeRepAt = (i) => (i < 0 ? null : repOf(model.doc.nodes[i]));
  return { groupRep, nodeRep, nodeRepAt };
}

/** The id a bundle between two representatives has, whichever way round they are given. */
export function bundleKey(ra, rb) { return ra < rb ? `${ra}|${rb}` : `${rb}|${ra}`; }

/** A device's label: its id without its group's prefix ("h0/gpu3" in h0 -> "gpu3"). */
export function labelOf(n) {
  if (n.group && n.id.startsWith(n.group + '/')) return n.id.slice(n.group.length + 1);
  return n.id;
}

const KIND_WORD = { nvlink_switch_tray: 'NVSwitch tray', nvlink_domain: 'NVLink domain' };

/**
 * Label of a group. Open: "h0 · dgx-h100". Collapsed, one short line each (a collapsed box's
 * font is fitted to its longest line, so short lines read larger): the id, what it is (its
 * template, else its kind), what it holds ("4 GPUs · 14 devices"; "2 chips" for a switch tray).
 * @param {object} g the group
 * @param {boolean} collapsed
 * @param {number} count devices inside (collapsed only)
 * @param {Map<string, number>} [kinds] devices inside per kind (collapsed only)
 * @returns {string}
 */
export function groupLabel(g, collapsed, count, kinds = new Map()) {
  if (collapsed) return collapsedLines(g, count, kinds);
  const suffix = g.template ? ' · ' + g.template : g.kind && g.kind !== 'host' ? ' · ' + g.kind : '';
  return `${g.id}${suffix}`;
}

function collapsedLines(g, count, kinds) {
  const what = g.template || KIND_WORD[g.kind] || g.kind || 'group';
  const gpus = kinds.get('gpu') || 0;
  const chips = kinds.get('nvswitch') || 0;
  let holds = `${count} devices`;
  if (g.kind === 'nvlink_switch_tray' && chips === count) holds = `${chips} chips`;
  else if (gpus) holds = `${gpus} GPUs · ${count} devices`;
  const said = !g.template && g.id.split('/').pop().startsWith(what); // "pod0" already says pod
  return said ? `${g.id}\n${holds}` : `${g.id}\n${what}\n${holds}`;
}

/**
 * Size of a collapsed group's box from its footprint `bb`: about the size of its expanded
 * contents, so the overview keeps its proportions and expanding happens "in place". Up to a
 * host's size; a group of racks (a pod, 10,000+ px expanded) keeps its footprint, label scaled
 * with it, so an overview of pods reads at the zoom that fits them.
 * @param {{w: number, h: number}} bb the group's laid-out footprint, px
 * @param {string} [label] its label (lines split on "\n"): the font is fitted to its longest line
 *   and the box made tall enough for every line
 * @param {number} [fill] box width / footprint width (a tray of an NVLink domain fills its
 *   column: the layout keeps DOMAIN_COL_GAP between columns, and its label reads larger)
 * @returns {{w: number, h: number, fs: number, oy?: number, big: boolean}} px; fs the font size;
 *   oy the drawn centre's offset from the footprint's, when the box grows upward
 */
export function collapsedBox(bb, label = '', fill = 0.8) {
  const big = bb.w > BIG_GROUP_PX || bb.h > BIG_GROUP_PX;
  const w = Math.round(big ? Math.max(bb.w * 0.8, 1200) : Math.min(Math.max(bb.w * fill, 76), 640));
  let h = Math.round(big ? Math.max(bb.h * 0.8, w / 5, 1200) : Math.min(Math.max(bb.h * 0.8, 44), 420));
  const lines = label ? label.split('\n') : ['', ''];
  const fs = big ? bigLabelFont(w, h, lines) : Math.floor(labelFont(w, lines)); // floor: the line still fits
  if (!big) h = Math.min(Math.max(h, Math.round(fs * (LINE_HEIGHT * lines.length + 0.4))), 420); // every line fits inside
  const box = { w, h, fs, big };
  // A box taller than its footprint (a one-row layer of 256 super-spines is 0 px tall laid out,
  // 2,700 px collapsed) grows upward: the layout keeps upper tiers above what they serve, and
  // centred it would cover the top row of the pod below.
  if (h > bb.h + 2 * COLLAPSED_OVERHANG) box.oy = Math.floor(bb.h / 2 + COLLAPSED_OVERHANG - h / 2);
  return box;
}

/** Font size (px) at which the longest of `lines` fills a box `w` px wide, between 10 and
 * LABEL_MAX_FS; without a label, one twelfth of the width (the older rule). */
function labelFont(w, lines) {
  const chars = Math.max(...lines.map((l) => l.length));
  const fit = chars ? (w - 2 * LABEL_PAD) / (CHAR_EM * chars) : w / 12;
  return Math.min(Math.max(fit, 10), chars ? LABEL_MAX_FS : 40);
}

/** Font size (px) of a pod-sized box's label: its footprint's scale, every line inside it. */
function bigLabelFont(w, h, lines) {
  const chars = Math.max(...lines.map((l) => l.length));
  const fitW = chars ? (w - 2 * LABEL_PAD) / (CHAR_EM * chars) : Infinity;
  return Math.floor(Math.min(w / 9, h * 0.4, fitW, h / (LINE_HEIGHT * lines.length + 0.4)));
}

function collapsedLabel(m, g, ids) {
  return groupLabel(g, true, ids.length, m.kindCounts(g.id));
}

/** A collapsed group's box: its size, font and position from its laid-out footprint. */
function placeCollapsed(scene, g, el, scale, ids) {
  const m = scene.model;
  const data = el.data;
  const bb = groupBox(m, scene.posOf, g.id, ids, scene.blockBounds);
  const inDomain = g.parent && (m.group(g.parent) || {}).kind === 'nvlink_domain';
  let box = collapsedBox(bb, data.label, inDomain ? 1 : 0.8);
  if (box.big && data.label.includes(' · ')) {
    // A pod-sized box is read from afar (the 25 pods of a 100,000-GPU design fit the screen at
    // zoom ~0.005): its counts on lines of their own ("4064 GPUs", "25528 devices") read about
    // twice as large as on one line, which was 5 px on screen there.
    const stacked = data.label.replace(' · ', '\n');
    const taller = collapsedBox(bb, stacked, inDomain ? 1 : 0.8);
    if (taller.fs > box.fs) { box = taller; data.label = stacked; }
  }
  Object.assign(data, { w: box.w, h: box.h, fs: box.fs });
  if (box.oy !== undefined) data.oy = box.oy; // commitDrag moves by the difference
  el.position = [bb.cx, bb.cy + (box.oy || 0)];
  if (box.big) scale.set(data.id, box.fs / 24); // its edges thicken with it (seen from afar)
}

function groupElement(scene, g, collapsed, scale) {
  const m = scene.model;
  const inside = collapsed ? m.descendantNodes(g.id) : null; // listed once: a pod holds 80,000
  const data = {
    id: 'g:' + g.id, ref: g.id, etype: 'group', kind: 'group', gkind: g.kind || 'other',
    parent: g.parent && m.group(g.parent) ? 'g:' + g.parent : undefined,
    collapsed: collapsed ? 1 : 0,
    label: collapsed ? collapsedLabel(m, g, inside) : groupLabel(g, false, 0),
  };
  const el = { group: 'nodes', data };
  if (collapsed) placeCollapsed(scene, g, el, scale, inside);
  else if (!m.descendantNodes(g.id).length && !(m.childGroups.get(g.id) || []).length) {
    el.position = m.position(g.id) || [0, 0];
  }
  return el;
}

/** Adds the groups drawn; returns those drawn open (their own devices are drawn too). */
function addGroups(scene, groupRep, want, scale) {
  const m = scene.model;
  const open = [];
  for (const g of m.doc.groups) {
    const hidden = g.parent && m.group(g.parent) && groupRep(g.parent);
    if (hidden) continue;
    const collapsed = scene.viewState.isCollapsed(g.id);
    const el = groupElement(scene, g, collapsed, scale);
    want.set(el.data.id, el);
    if (!collapsed) open.push(g.id);
  }
  return open;
}

/**
 * The devices drawn as devices: those directly in each group drawn open (groups in document
 * order), then those in no group or an unknown one (Model.looseNodes). Read from the model's
 * index, so a design opened with every host closed reads none of the devices inside them
 * (600,000 at 100,000 GPUs).
 * @returns {object[]} the node objects
 */
function drawnNodes(model, openGroups) {
  const out = [];
  for (const g of openGroups) for (const id of model.childNodes.get(g) || []) out.push(model.node(id));
  for (const id of model.looseNodes) out.push(model.node(id));
  return out;
}

/** NVLinks a technology name bonds ("nvlink4x5" -> 5), 1 when it does not say. */
export function nvlinkWidth(tech) {
  const m = /^nvlink\d+x(\d+)$/.exec(tech || '');
  return m ? Number(m[1]) : 1;
}

/**
 * The NVLink fans of the drawing: per GPU drawn as a device, its NVLinks into NVSwitches drawn as
 * devices, summed. With link labels on, a GPU's label says "NV18 3T" (nvidia-smi topo -m
 * vocabulary: 18 bonded NVLinks into the switch plane) instead of one label on each of its
 * links: 4 GPUs × 4 NVSwitches of an H200 host are 16 crossing links, whose labels overlap.
 * Only the drawn GPUs' links are read (`drawn`: the drawn devices, see drawnNodes).
 * @returns {{gpus: Map<string, {links: number, cap: number}>, links: Set<string>}} node ids, link ids
 */
export function nvlinkFans(scene, nodeRep, drawn) {
  const m = scene.model;
  const gpus = new Map();
  const links = new Set();
  for (const gpu of drawn) {
    if (gpu.kind !== 'gpu') continue;
    for (const l of m.linkObjectsOf(gpu.id)) {
      const other = m.node(l.a === gpu.id ? l.b : l.a);
      if (!other || other.kind !== 'nvswitch' || linkFamily(scene.catalog, l) !== 'nvlink') continue;
      if (nodeRep(other.id) !== 'n:' + other.id || links.has(l.id)) continue;
      const fan = gpus.get(gpu.id) || { links: 0, cap: 0 };
      fan.links += nvlinkWidth(l.tech); fan.cap += linkCapacity(scene.catalog, l) || 0;
      gpus.set(gpu.id, fan); links.add(l.id);
    }
  }
  return { gpus, links };
}

function addNodes(scene, drawn, want, fans) {
  const m = scene.model;
  for (const n of drawn) {
    const attrs = n.attrs || {};
    const data = {
      id: 'n:' + n.id, ref: n.id, etype: 'node', kind: n.kind, role: attrs.role || undefined,
      parent: n.group && m.group(n.group) ? 'g:' + n.group : undefined, label: labelOf(n),
    };
    const fan = fans.gpus.get(n.id);
    if (fan) data.fanlabel = `${data.label}\nNV${fan.links} ${shortGbps(fan.cap)}`; // narrower than the 66 px between GPUs
    const p = scene.posOf(n.id);
    want.set(data.id, { group: 'nodes', data, position: { x: p[0], y: p[1] } });
  }
}

function linkElement(scene, l, ra, rb, cap, net, fan) {
  const data = {
    id: 'l:' + l.id, ref: l.id, etype: 'link', source: ra, target: rb, tech: l.tech,
    color: linkColor(scene, cap, linkFamily(scene.catalog, l)), width: edgeWidth(cap), net,
    label: `${l.tech || '?'} ${shortGbps(cap)}`, fan: fan ? 1 : undefined, // labelled on its GPU (nvlinkFans)
  };
  return { group: 'edges', data };
}

function addToBundle(bundles, l, ra, rb, cap, net, nvlink) {
  const key = bundleKey(ra, rb);
  let a = bundles.get(key);
  if (!a) {
    a = { s: ra < rb ? ra : rb, t: ra < rb ? rb : ra, count: 0, cap: 0, max: 0, net: 0, nvlink: 0, techs: new Map(), links: [] };
    bundles.set(key, a);
  }
  a.nvlink += nvlink ? 1 : 0;
  a.count += 1; a.cap += cap || 0; a.max = Math.max(a.max, cap || 0); a.net += net; a.links.push(l.id);
  a.techs.set(l.tech || '', (a.techs.get(l.tech || '') || 0) + 1);
}

function bundleElement(scene, key, a, scale) {
  const data = {
    id: 'agg:' + key, ref: key, etype: 'agg', source: a.s, target: a.t, count: a.count,
    color: linkColor(scene, a.max, a.nvlink === a.count ? 'nvlink' : ''), // NVLink colour when all are
    net: a.net * 2 > a.count ? 1 : 0, // dashed when mostly network links
    width: bundleWidth(a.max, a.count) * Math.max(scale.get(a.s) || 1, scale.get(a.t) || 1),
    label: bundleLabel(a.techs, a.cap), links: a.links.length > BUNDLE_LIST_MAX ? undefined : a.links.join(' '),
  };
  return { group: 'edges', data };
}

/** `visit(link, ra, rb)` for every link with the representatives of its ends (makeRepResolver),
 * read by the ends' positions in the model's index: no id lookup per end (1.26M links). */
export function eachLinkRep(model, nodeRepAt, visit) {
  const links = model.doc.links;
  const ends = model.linkEndPositions();
  for (let j = 0; j < links.length; j += 1) visit(links[j], nodeRepAt(ends[2 * j]), nodeRepAt(ends[2 * j + 1]));
}

function addLinks(scene, nodeRepAt, want, scale, fans) {
  const bundles = new Map();
  eachLinkRep(scene.model, nodeRepAt, (l, ra, rb) => {
    if (!ra || !rb || ra === rb) return;
    const cap = linkCapacity(scene.catalog, l);
    const family = linkFamily(scene.catalog, l);
    const net = NETWORK_FAMILIES.has(family) ? 1 : 0;
    if (ra.startsWith('n:') && rb.startsWith('n:')) want.set('l:' + l.id, linkElement(scene, l, ra, rb, cap, net, fans.links.has(l.id)));
    else addToBundle(bundles, l, ra, rb, cap, net, family === 'nvlink');
  });
  for (const [key, a] of bundles) want.set('agg:' + key, bundleElement(scene, key, a, scale));
}

/**
 * The elements that should be on the canvas, by Cytoscape id ("g:h0", "n:h0/gpu0",
 * "l:<link id>", "agg:<rep>|<rep>"), each {group, data, position?}; `data.sig` is a signature
 * of the data, so a render updates only the elements whose data changed.
 * @param {object} scene see the top of this file
 * @returns {Map<string, object>}
 */
export function computeVisible(scene) {
  const want = new Map();
  const scale = new Map(); // element id -> edge thickening of a big collapsed group
  const { groupRep, nodeRep, nodeRepAt } = makeRepResolver(scene.model, scene.viewState);
  const drawn = drawnNodes(scene.model, addGroups(scene, groupRep, want, scale));
  const fans = nvlinkFans(scene, nodeRep, drawn);
  addNodes(scene, drawn, want, fans);
  addLinks(scene, nodeRepAt, want, scale, fans);
  for (const el of want.values()) el.data.sig = JSON.stringify(el.data);
  return want;
}

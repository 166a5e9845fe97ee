/* Fabricscope editor — view state: what the user is looking at, kept apart from the document.
 *
 * Expanded/collapsed groups, zoom and pan, the selection and the search query change how the
 * topology is *shown*, never what it *is*: they are not undoable, never mark the editor
 * "unsaved" and never trigger the leave-page prompt. Only the model's transactions (model.js)
 * are edits.
 *
 * The state may persist in sessionStorage under one key per topology, so reloading a tab or
 * coming back from a result page shows the same view. Storage is injected (any object with
 * getItem/setItem), which keeps this module pure: it runs under Node for the unit tests.
 */

export const AUTO_COLLAPSE_NODES = 400; // devices above which a document opens collapsed
export const AUTO_VISIBLE_BUDGET = 400; // items (devices and closed groups) a large document opens with
export const BIG_HOST_LINKS = 128; // links inside one host above which it opens collapsed, whatever the document's size
export const DOMAIN_KIND = 'nvlink_domain';

/**
 * Groups that open collapsed in a document of any size: the trays and NVLink-switch trays of an
 * NVLink domain (one GB200 NVL72 rack is 276 devices but 1,296 NVLinks: drawn open it is a
 * hairball, closed its links are 162 bundles "8 × nvlink5x1"), and hosts with more than
 * `maxLinks` links inside (a DGX H100 has about 80).
 * @param {object} doc normalized fabricscope.topology/1 document
 * @param {number} [maxLinks] links inside a host above which it opens collapsed
 * @param {Set<string>} [closed] groups that open collapsed anyway: their hosts' links are not
 *   counted, and when every host is closed no link is read (a 100,000-GPU design opens with all
 *   12,500 hosts closed: counting its 1.26M links was a second of its open)
 * @returns {string[]} ids of the groups to collapse
 */
export function bigGroups(doc, maxLinks = BIG_HOST_LINKS, closed = new Set()) {
  const kind = new Map(doc.groups.map((g) => [g.id, g.kind]));
  const out = new Set(doc.groups.filter((g) => g.parent && kind.get(g.parent) === DOMAIN_KIND).map((g) => g.id));
  const open = new Set(doc.groups.filter((g) => g.kind === 'host' && !closed.has(g.id)).map((g) => g.id));
  if (!open.size) return [...out];
  const groupOf = new Map();
  for (const n of doc.nodes) if (open.has(n.group)) groupOf.set(n.id, n.group);
  const inside = new Map();
  for (const l of doc.links) {
    const g = groupOf.get(l.a);
    if (g && g === groupOf.get(l.b)) inside.set(g, (inside.get(g) || 0) + 1);
  }
  for (const [g, n] of inside) if (n > maxLinks) out.add(g);
  return [...out];
}

/**
 * Groups a large document opens collapsed, for any nesting of groups (pods → racks → hosts,
 * an NVL72 rack → trays and NVLink-switch trays, …): open the hierarchy one level at a time
 * from the top while everything shown stays within `budget` items; every group below the last
 * level opened stays collapsed, so expanding one shows its children closed, not their devices.
 * @param {object} doc normalized fabricscope.topology/1 document
 * @param {number} [budget] visible items (devices + closed groups) at most, when the top allows
 * @returns {string[]} ids of the groups to collapse
 */
export function autoCollapsed(doc, budget = AUTO_VISIBLE_BUDGET) {
  const { childGroups, directNodes, top, loose } = groupTree(doc);
  let visible = top.length + loose;
  const opened = new Set();
  let level = top;
  while (level.length) {
    let more = 0;
    const next = [];
    for (const id of level) {
      const kids = childGroups.get(id) || [];
      more += (directNodes.get(id) || 0) + kids.length;
      for (const k of kids) if (!opened.has(k)) next.push(k);
    }
    if (visible + more > budget) break;
    visible += more;
    for (const id of level) opened.add(id);
    level = next;
  }
  return doc.groups.map((g) => g.id).filter((id) => !opened.has(id));
}

/** The group hierarchy of `doc`: child groups and direct device counts per group, the top
 * groups, and the number of devices in no (known) group. */
function groupTree(doc) {
  const known = new Set(doc.groups.map((g) => g.id));
  const childGroups = new Map();
  const directNodes = new Map();
  const top = [];
  for (const g of doc.groups) {
    if (g.parent && known.has(g.parent) && g.parent !== g.id) add(childGroups, g.parent, g.id);
    else top.push(g.id);
  }
  let loose = 0;
  for (const n of doc.nodes) {
    if (n.group && known.has(n.group)) directNodes.set(n.group, (directNodes.get(n.group) || 0) + 1);
    else loose += 1;
  }
  return { childGroups, directNodes, top, loose };
}

function add(map, key, value) {
  const list = map.get(key);
  if (list) list.push(value); else map.set(key, [value]);
}

/** sessionStorage key of a topology's view state, or null when the page has no topology id. */
export function viewStateKey(topologyId) {
  return topologyId == null || topologyId === '' ? null : `fabricscope:view:${topologyId}`;
}

export class ViewState {
  /**
   * @param {object} [opts]
   * @param {{getItem: Function, setItem: Function}|null} [opts.storage] where to persist (none: memory only)
   * @param {string|null} [opts.key] storage key (see viewStateKey)
   */
  constructor({ storage = null, key = null } = {}) {
    this.storage = key ? storage : null;
    this.key = key;
    this.listeners = new Set();
    this.collapsed = new Set();
    this.viewport = null;   // {zoom, pan: {x, y}} or null (fit on open)
    this.selection = [];    // Cytoscape element ids ("n:h0/gpu0", "g:h0", "l:…")
    this.search = '';
  }

  on(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }
  emit(evt) { for (const fn of this.listeners) fn(evt); }

  isCollapsed(groupId) { return this.collapsed.has(groupId); }

  /**
   * Collapse or expand `groupIds` (those `known` accepts). Emits one `collapse` event if
   * anything changed.
   * @returns {boolean} whether anything changed
   */
  setCollapsed(groupIds, collapsed, known = () => true) {
    let changed = false;
    for (const id of groupIds) {
      if (!known(id) || this.collapsed.has(id) === collapsed) continue;
      if (collapsed) this.collapsed.add(id); else this.collapsed.delete(id);
      changed = true;
    }
    if (!changed) return false;
    this.persist();
    this.emit({ type: 'collapse' });
    return true;
  }

  /**
   * The collapsed set a document opens with: the stored view if there is one, else the
   * document's legacy `layout.collapsed` hint, else the levels of a large document's group
   * hierarchy that do not fit the screen (autoCollapsed) and, in any document, the trays of
   * NVLink domains and the big hosts (bigGroups).
   * Ids of groups the document does not have are dropped.
   * @param {object} doc normalized fabricscope.topology/1 document
   * @returns {'stored'|'document'|'auto'|'none'} where the set came from
   */
  initFor(doc, { useStored = true } = {}) {
    const groups = new Set(doc.groups.map((g) => g.id));
    const stored = useStored ? this.read() : null;
    let source = 'none';
    let ids = [];
    if (stored && Array.isArray(stored.collapsed)) {
      source = 'stored'; ids = stored.collapsed;
      this.viewport = validViewport(stored.viewport);
      this.selection = Array.isArray(stored.selection) ? stored.selection.filter((s) => typeof s === 'string') : [];
      this.search = typeof stored.search === 'string' ? stored.search : '';
    } else if (doc.layout && Array.isArray(doc.layout.collapsed) && doc.layout.collapsed.length) {
      source = 'document'; ids = doc.layout.collapsed;
    } else {
      const large = doc.nodes.length > AUTO_COLLAPSE_NODES;
      const auto = large ? new Set(autoCollapsed(doc)) : new Set();
      const big = bigGroups(doc, BIG_HOST_LINKS, auto);
      if (large) { source = 'auto'; ids = [...new Set([...auto, ...big])]; }
      else if (big.length) { source = 'auto'; ids = big; }
    }
    this.collapsed = new Set(ids.filter((id) => groups.has(id)));
    return source;
  }

  setViewport(zoom, pan) {
    if (!isFinite(zoom) || !pan || !isFinite(pan.x) || !isFinite(pan.y)) return;
    this.viewport = { zoom, pan: { x: pan.x, y: pan.y } };
    this.persist();
  }

  setSelection(ids) { this.selection = [...ids]; this.persist(); }

  setSearch(q) { this.search = String(q || ''); this.persist(); }

  toJSON() {
    return { collapsed: [...this.collapsed], viewport: this.viewport, selection: this.selection, search: this.search };
  }

  read() {
    if (!this.storage) return null;
    try { return JSON.parse(this.storage.getItem(this.key) || 'null'); } catch { return null; }
  }

  persist() {
    if (!this.storage) return;
    // A full or disabled storage (private mode, quota) only costs the restore on reload.
    try { this.storage.setItem(this.key, JSON.stringify(this.toJSON())); } catch { /* see above */ }
  }
}

function validViewport(v) {
  if (!v || !isFinite(v.zoom) || !v.pan || !isFinite(v.pan.x) || !isFinite(v.pan.y)) return null;
  return { zoom: v.zoom, pan: { x: v.pan.x, y: v.pan.y } };
}

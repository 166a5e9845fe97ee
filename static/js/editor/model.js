/* Fabricscope editor — document model with undo/redo.
 *
 * The fabricscope.topology/1 document lives here, in plain JS, and is the source of truth.
 * Cytoscape only ever holds the *visible* projection of it (see view.js), which is what lets a
 * 5,000-node cluster open collapsed in well under a second.
 *
 * Every edit is a transaction: a list of primitive ops, each carrying its `before` and `after`
 * value, so undo is "apply the ops backwards with `before`" and never needs a document snapshot
 * (snapshots of a 1 MB document per keystroke would not scale).
 *
 * What the user is looking at (collapsed groups, zoom, selection, search) is view state and
 * lives in viewstate.js, not here: only transactions are edits, dirty the document or undo.
 *
 * Pure: no DOM, so it runs (and is unit-tested) under Node as well as in the browser.
 */
export const KINDS = ['gpu', 'cpu', 'memory', 'pcie_switch', 'nvswitch', 'nic', 'nvme', 'switch', 'storage'];
export const ID_PREFIX = {
  gpu: 'gpu', cpu: 'cpu', memory: 'mem', pcie_switch: 'pcie', nvswitch: 'nvsw', nic: 'nic',
  nvme: 'nvme', switch: 'sw', storage: 'storage',
};
const collator = new Intl.Collator(undefined, { numeric: true });
export const naturalCompare = (a, b) => collator.compare(a, b);
export const clone = (o) => (o == null ? o : JSON.parse(JSON.stringify(o)));
const COLLECTION = { node: 'nodes', link: 'links', group: 'groups' };

/** The document in the editor's shape (lists and layout present). A copy unless `own` (the caller
 * hands over an object nothing else holds: a 58 MB design is not copied on open). */
export function normalizeDocument(input, { own = false } = {}) {
  const doc = (own ? input : clone(input)) || {};
  doc.format = doc.format || 'fabricscope.topology/1';
  if (doc.name == null) doc.name = 'untitled';
  doc.groups = Array.isArray(doc.groups) ? doc.groups : [];
  doc.nodes = Array.isArray(doc.nodes) ? doc.nodes : [];
  doc.links = Array.isArray(doc.links) ? doc.links : [];
  const layout = doc.layout && typeof doc.layout === 'object' ? doc.layout : {};
  layout.positions = layout.positions && typeof layout.positions === 'object' ? layout.positions : {};
  layout.collapsed = Array.isArray(layout.collapsed) ? layout.collapsed : [];
  doc.layout = layout;
  return doc;
}

export class Model {
  /** @param {object} doc a fabricscope.topology/1 document; copied unless `own` (see normalizeDocument) */
  constructor(doc, { own = false } = {}) {
    this.listeners = new Set();
    this.load(doc, { own });
  }

  /* ---------------------------------------------------------------- loading, events */
  load(doc, { own = false } = {}) {
    this.doc = normalizeDocument(doc, { own });
    this.undoStack = [];
    this.redoStack = [];
    this.savedTop = null;
    this.reindex();
    this.emit({ type: 'load' });
  }

  on(fn) { this.listeners.add(fn); return () => this.listeners.delete(fn); }
  emit(evt) { for (const fn of this.listeners) fn(evt); }

  reindex() {
    // Plain loops, no temporary [key, value] pairs: on a 383k-link design the pairs were most
    // of this index's time and garbage. Links by id are indexed only when first asked for (an
    // edit, a selection): opening a 1.26M-link design draws from the ends alone, and hashing
    // every link id was a quarter of the index's time (docs/PERFORMANCE.md, "100,000 GPUs in
    // the browser").
    const d = this.doc;
    this.indexed = (this.indexed || 0) + 1; // which index: a view's layout says which it was made for
    this.nodeAt = new Map();   // id -> position in doc.nodes (the last one for a duplicated id)
    this.byIdOfLinks = null;
    this.groupById = new Map();
    this.childGroups = new Map();
    this.childNodes = new Map();
    this.looseNodes = []; // devices in no group (document order), then in an unknown group
    // Whether anything is placed by hand: a generated design places nothing, and looking each of
    // its 629k devices up in an empty object cost 0.2 s of every drawing of a 100,000-GPU design.
    this.anyPlaced = false;
    this.placedPrefixes = null;
    for (const id in d.layout.positions) { if (Object.hasOwn(d.layout.positions, id)) { this.anyPlaced = true; break; } }
    for (const g of d.groups) {
      this.groupById.set(g.id, g);
      if (g.parent) push(this.childGroups, g.parent, g.id);
    }
    for (let i = 0; i < d.nodes.length; i += 1) {
      const n = d.nodes[i];
      this.nodeAt.set(n.id, i);
      if (n.group) push(this.childNodes, n.group, n.id); else this.looseNodes.push(n.id);
    }
    for (const [g, ids] of this.childNodes) if (!this.groupById.has(g)) this.looseNodes.push(...ids);
    this.ends = linkEnds(this.nodeAt, d.nodes.length, d.links);
  }

  /** Links by id, indexed at the first use after a (re)index. */
  get linkById() {
    if (!this.byIdOfLinks) {
      const byId = new Map();
      for (const l of this.doc.links) byId.set(l.id, l);
      this.byIdOfLinks = byId;
    }
    return this.byIdOfLinks;
  }

  /* ---------------------------------------------------------------- queries */
  node(id) {
    const i = this.nodeAt.get(id);
    return i === undefined ? undefined : this.doc.nodes[i];
  }
  link(id) { return this.linkById.get(id); }
  group(id) { return this.groupById.get(id); }
  /** Ids of the links at node `nodeId` (a new array). */
  linksOf(nodeId) { return this.linkObjectsOf(nodeId).map((l) => l.id); }
  /** The links at node `nodeId` themselves, in document order (read it, never change it). */
  linkObjectsOf(nodeId) { return this.ends.at(nodeId, this.doc.links); }
  /** How many link ends node `nodeId` holds (a link from a node to itself counts twice). */
  degree(nodeId) { return this.ends.degree(nodeId); }
  /** Where each link's ends are in doc.nodes: link j's a at [2j], its b at [2j + 1] (-1 for an
   * unknown device). Read it, never change it: a drawing walks 1.26M links by these positions
   * instead of looking 2.5M ids up. */
  linkEndPositions() { return this.ends.positions; }
  position(id) { return (this.anyPlaced && this.doc.layout.positions[id]) || null; }
  /** Whether something whose id starts with `prefix` ("h0/") is placed by hand: a host block
   * answers for its devices' bounds only when none is (visible.js). Prefixes are gathered once
   * per change of the hand-placed positions, which are few. */
  placedUnder(prefix) {
    if (!this.anyPlaced) return false;
    if (!this.placedPrefixes) {
      const prefixes = new Set();
      for (const id of Object.keys(this.doc.layout.positions)) {
        for (let cut = id.indexOf('/'); cut >= 0; cut = id.indexOf('/', cut + 1)) prefixes.add(id.slice(0, cut + 1));
      }
      this.placedPrefixes = prefixes;
    }
    return this.placedPrefixes.has(prefix);
  }

  /** Group chain from the innermost group of `nodeId` outwards. */
  ancestors(groupId) {
    const out = [];
    const seen = new Set();
    let g = groupId ? this.groupById.get(groupId) : null;
    while (g && !seen.has(g.id)) { out.push(g.id); seen.add(g.id); g = g.parent ? this.groupById.get(g.parent) : null; }
    return out;
  }

  descendantGroups(groupId) {
    const out = [];
    const stack = [groupId];
    while (stack.length) {
      const id = stack.pop();
      for (const c of this.childGroups.get(id) || []) { out.push(c); stack.push(c); }
    }
    return out;
  }

  descendantNodes(groupId) {
    const out = [...(this.childNodes.get(groupId) || [])];
    for (const g of this.descendantGroups(groupId)) out.push(...(this.childNodes.get(g) || []));
    return out;
  }

  hostOf(nodeId) {
    const n = this.node(nodeId);
    if (!n) return null;
    for (const g of this.ancestors(n.group)) if (this.groupById.get(g).kind === 'host') return g;
    return null;
  }

  /** Devices of group `gid` and of the groups inside it, by kind (Map kind -> count; read it,
   * never change it). Every group's counts come from one pass over the devices per index: a
   * collapsed pod's label counted its 25,000 devices by id lookups at each drawing. */
  kindCounts(gid) {
    if (!this.kindsByGroup || this.kindsByGroup.indexed !== this.indexed) this.kindsByGroup = this.countKinds();
    return this.kindsByGroup.get(gid) || NO_KINDS;
  }

  countKinds() {
    const direct = new Map();
    for (const n of this.doc.nodes) {
      if (!n.group || !this.groupById.has(n.group)) continue;
      let kinds = direct.get(n.group);
      if (!kinds) direct.set(n.group, (kinds = new Map()));
      kinds.set(n.kind, (kinds.get(n.kind) || 0) + 1);
    }
    const out = new Map();
    for (const [g, kinds] of direct) {
      for (const a of this.ancestors(g)) {
        let total = out.get(a);
        if (!total) out.set(a, (total = new Map()));
        for (const [k, c] of kinds) total.set(k, (total.get(k) || 0) + c);
      }
    }
    out.indexed = this.indexed;
    return out;
  }

  idTaken(id) { return this.nodeAt.has(id) || this.groupById.has(id); }

  /** Next free id shaped like `base` ("h0/gpu3" -> "h0/gpu8"), among nodes and groups. */
  uniqueId(base, taken) {
    const isTaken = (id) => this.idTaken(id) || (taken && taken.has(id));
    if (!isTaken(base)) return base;
    const m = /^(.*?)(\d+)$/.exec(base);
    const stem = m ? m[1] : base;
    let i = m ? Number(m[2]) + 1 : 1;
    while (isTaken(stem + i)) i += 1;
    return stem + i;
  }

  uniqueLinkId(base, taken) {
    const isTaken = (id) => this.linkById.has(id) || (taken && taken.has(id));
    if (!isTaken(base)) return base;
    let i = 2;
    while (isTaken(`${base}~${i}`)) i += 1;
    return `${base}~${i}`;
  }

  newNodeId(kind, groupId, role) {
    const stem = kind === 'switch' && role ? role : ID_PREFIX[kind] || kind;
    return this.uniqueId(`${groupId ? groupId + '/' : ''}${stem}0`);
  }

  newLinkId(a, b) {
    const na = this.node(a);
    const nb = this.node(b);
    // "h0/gpu0-pcie0" as in docs/FORMATS.md, Topology document: drop b's group prefix when both sit in one group.
    let bPart = b;
    if (na && nb && na.group && na.group === nb.group && b.startsWith(na.group + '/')) bPart = b.slice(na.group.length + 1);
    return this.uniqueLinkId(`${a}-${bPart}`);
  }

  /* ---------------------------------------------------------------- transactions */
  /** Apply `ops` as one undoable step labelled `label`. */
  apply(ops, label) {
    ops = ops.filter(Boolean);
    if (!ops.length) return false;
    for (const op of ops) this.applyOp(op, false);
    this.undoStack.push({ ops, label });
    if (this.undoStack.length > 500) this.undoStack.shift();
    this.redoStack = [];
    this.reindex();
    this.emit({ type: 'change', ops, label });
    return true;
  }

  undo() {
    const tx = this.undoStack.pop();
    if (!tx) return null;
    for (let i = tx.ops.length - 1; i >= 0; i -= 1) this.applyOp(tx.ops[i], true);
    this.redoStack.push(tx);
    this.reindex();
    this.emit({ type: 'change', ops: tx.ops, label: tx.label, undo: true });
    return tx.label;
  }

  redo() {
    const tx = this.redoStack.pop();
    if (!tx) return null;
    for (const op of tx.ops) this.applyOp(op, false);
    this.undoStack.push(tx);
    this.reindex();
    this.emit({ type: 'change', ops: tx.ops, label: tx.label, redo: true });
    return tx.label;
  }

  canUndo() { return this.undoStack.length > 0; }
  canRedo() { return this.redoStack.length > 0; }

  applyOp(op, backwards) {
    const value = backwards ? op.before : op.after;
    const prev = backwards ? op.after : op.before;
    if (op.t === 'pos') {
      if (value) { this.doc.layout.positions[op.id] = [value[0], value[1]]; this.anyPlaced = true; }
      else delete this.doc.layout.positions[op.id];
      this.placedPrefixes = null;
      return;
    }
    if (op.t === 'doc') {
      this.doc = normalizeDocument(value);
      this.reindex();
      return;
    }
    if (op.t === 'meta') {
      if (value === undefined) delete this.doc[op.key]; else this.doc[op.key] = clone(value);
      return;
    }
    const arr = this.doc[COLLECTION[op.t]];
    if (prev == null) {
      const at = op.index == null || op.index > arr.length ? arr.length : op.index;
      arr.splice(at, 0, clone(value));
      if (op.index == null) op.index = at;
    } else {
      const idx = arr.findIndex((x) => x.id === op.id);
      if (idx < 0) throw new Error(`model: no ${op.t} ${op.id}`);
      if (value == null) { arr.splice(idx, 1); op.index = idx; } else arr[idx] = clone(value);
    }
  }

  /* ---------------------------------------------------------------- op builders */
  opAdd(t, obj) { return { t, id: obj.id, before: null, after: clone(obj) }; }
  opRemove(t, obj) { return { t, id: obj.id, before: clone(obj), after: null }; }
  opUpdate(t, before, after) { return { t, id: before.id, before: clone(before), after: clone(after) }; }
  opPos(id, after) {
    const before = this.doc.layout.positions[id] || null;
    if (before && after && before[0] === after[0] && before[1] === after[1]) return null;
    if (!before && !after) return null;
    return { t: 'pos', id, before: before && [...before], after: after && [Math.round(after[0]), Math.round(after[1])] };
  }

  /** Ops deleting nodes, groups (with everything inside) and links, plus their positions. */
  opsDelete({ nodes = [], links = [], groups = [] }) {
    const nodeSet = new Set(nodes);
    const groupSet = new Set();
    for (const g of groups) {
      if (!this.groupById.has(g)) continue;
      groupSet.add(g);
      for (const d of this.descendantGroups(g)) groupSet.add(d);
      for (const n of this.descendantNodes(g)) nodeSet.add(n);
    }
    const linkSet = new Set(links);
    for (const n of nodeSet) for (const l of this.linksOf(n)) linkSet.add(l);
    const ops = [];
    for (const l of this.doc.links) if (linkSet.has(l.id)) ops.push(this.opRemove('link', l));
    for (const n of this.doc.nodes) {
      if (!nodeSet.has(n.id)) continue;
      ops.push(this.opRemove('node', n));
      ops.push(this.opPos(n.id, null));
    }
    // Children before parents, so an undo re-creates parents first.
    const depth = (id) => this.ancestors(id).length;
    [...groupSet].sort((a, b) => depth(b) - depth(a)).forEach((id) => {
      ops.push(this.opRemove('group', this.groupById.get(id)));
      ops.push(this.opPos(id, null));
    });
    return ops.filter(Boolean);
  }

  /** Ops renaming node `oldId` to `newId` (links and positions follow). */
  opsRenameNode(oldId, newId) {
    const n = this.node(oldId);
    const idx = this.doc.nodes.indexOf(n);
    const ops = [];
    ops.push({ t: 'node', id: oldId, before: clone(n), after: null });
    ops.push({ t: 'node', id: newId, before: null, after: { ...clone(n), id: newId }, index: idx });
    for (const lid of this.linksOf(oldId)) {
      const l = this.linkById.get(lid);
      const after = { ...clone(l) };
      if (after.a === oldId) after.a = newId;
      if (after.b === oldId) after.b = newId;
      ops.push(this.opUpdate('link', l, after));
    }
    const p = this.position(oldId);
    if (p) { ops.push(this.opPos(oldId, null)); ops.push(this.opPos(newId, p)); }
    return ops;
  }

  /* ---------------------------------------------------------------- dirty tracking */
  isDirty() {
    return this.top() !== this.savedTop;
  }

  /** The last transaction applied (null: none), what markSaved takes. */
  top() {
    return this.undoStack.length ? this.undoStack[this.undoStack.length - 1] : null;
  }

  /** The document is saved as it was after transaction `top` (default: the last one). A save
   * passes the top it sent: an edit made while its request was on the way stays unsaved. */
  markSaved(top = this.top()) {
    this.savedTop = top;
    this.emit({ type: 'saved' });
  }

  /** The document as saved/exported: empty layout parts are dropped, and so is the legacy
   * `layout.collapsed` hint (collapsing is view state, see viewstate.js). A deep copy. */
  toJSON() {
    return clone(this.snapshot());
  }

  /** toJSON()'s document without copying the items: new arrays (and layout) holding the model's
   * item objects, which stay as they are — every edit *replaces* an item (applyOp clones its
   * `after`), none changes one in place. What a save diffs against the last saved snapshot: a
   * 100,000-GPU design's 1.9 M items are compared by identity, not cloned twice and walked
   * (docs/PERFORMANCE.md). Read it, never change it. */
  snapshot() {
    const doc = { ...this.doc, groups: this.doc.groups.slice(), nodes: this.doc.nodes.slice(), links: this.doc.links.slice() };
    const layout = clone(this.doc.layout);
    const pos = layout.positions;
    for (const id of Object.keys(pos)) if (!this.nodeAt.has(id) && !this.groupById.has(id)) delete pos[id];
    if (!Object.keys(pos).length) delete layout.positions;
    delete layout.collapsed;
    if (Object.keys(layout).length) doc.layout = layout; else delete doc.layout;
    return doc;
  }
}

const NO_LINKS = Object.freeze([]);
const NO_KINDS = new Map();

/**
 * Which links end at each node, as one compressed table (CSR): per node, a run of link
 * positions in `order` from `start[i]` to `start[i + 1]`. Built in two passes over typed arrays,
 * not as an array per node: pushing 2.5M ends into 629k arrays was the largest part of opening a
 * 100,000-GPU design, and most of its garbage collection (docs/PERFORMANCE.md). A link naming
 * a device that is not in the document (an unchecked import) is kept in a small map apart.
 */
function linkEnds(at, count, links) {
  const start = new Int32Array(count + 1);
  const ends = new Int32Array(2 * links.length);
  const dangling = new Map();
  const end = (id, k, j) => {
    const i = at.get(id);
    if (i === undefined) { push(dangling, id, j); ends[k] = -1; } else { start[i + 1] += 1; ends[k] = i; }
  };
  for (let j = 0; j < links.length; j += 1) {
    end(links[j].a, 2 * j, j);
    end(links[j].b, 2 * j + 1, j);
  }
  for (let i = 0; i < count; i += 1) start[i + 1] += start[i];
  const order = new Int32Array(start[count]);
  const fill = start.slice(0, count);
  for (let k = 0; k < ends.length; k += 1) if (ends[k] >= 0) order[fill[ends[k]]++] = k >> 1;
  return {
    positions: ends,
    at(id, all) {
      const i = at.get(id);
      if (i === undefined) return dangling.has(id) ? dangling.get(id).map((j) => all[j]) : NO_LINKS;
      const out = new Array(start[i + 1] - start[i]);
      for (let k = start[i]; k < start[i + 1]; k += 1) out[k - start[i]] = all[order[k]];
      return out;
    },
    degree(id) {
      const i = at.get(id);
      if (i === undefined) return dangling.has(id) ? dangling.get(id).length : 0;
      return start[i + 1] - start[i];
    },
  };
}

function push(map, key, value) {
  let arr = map.get(key);
  if (!arr) map.set(key, (arr = []));
  arr.push(value);
}

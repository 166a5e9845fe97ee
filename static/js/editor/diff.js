/* Fabricscope editor — the patch between the revision the editor loaded and the current document.
 *
 * A 2,048-host design is ~40 MB of JSON; a one-device edit should not post all of it. The
 * patch names elements by id (the server applies it with designer/engine/document_patch.py):
 *
 *   {nodes|links|groups: {remove: [ids], update: [whole items], add: [items]},
 *    <other top-level field>: new value (null deletes it)}
 *
 * Removes, then updates, then adds. The patched document keeps the base order (removed items
 * drop out, updated ones stay in place, added ones follow at the end): applyPatch() below
 * builds that same document, so the server's problem paths (`nodes[812].kind`) can be mapped
 * back to elements.
 *
 * Pure: no DOM; unit-tested under Node (tests/js/diff.test.mjs).
 */
export const COLLECTIONS = ['nodes', 'links', 'groups'];

/** Structural equality of two JSON values (object key order does not matter). */
export function sameJSON(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === b.length && a.every((x, i) => sameJSON(x, b[i]));
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && sameJSON(a[k], b[k]));
}

/** Map id -> item, or null when an item has no string id or an id repeats (no patch then). */
function byId(items) {
  const map = new Map();
  for (const item of items || []) {
    const id = item && item.id;
    if (typeof id !== 'string' || map.has(id)) return null;
    map.set(id, item);
  }
  return map;
}

/** The lists without the runs of the *same objects* they start and end with (a snapshot and the
 * model share the items no edit replaced: a one-device edit of 1.9 M items leaves one or two).
 * An item of those runs is unchanged, so it needs no patch entry even without an id of its own
 * (the server leaves it where it is too: designer/engine/document/patch.py). */
function trimShared(base, cur) {
  let head = 0;
  const most = Math.min(base.length, cur.length);
  while (head < most && base[head] === cur[head]) head += 1;
  let tail = 0;
  while (tail < most - head && base[base.length - 1 - tail] === cur[cur.length - 1 - tail]) tail += 1;
  return [base.slice(head, base.length - tail), cur.slice(head, cur.length - tail)];
}

function diffCollection(baseItems, curItems) {
  [baseItems, curItems] = trimShared(baseItems || [], curItems || []);
  const before = byId(baseItems);
  const after = byId(curItems);
  if (!before || !after) return null;
  const part = {};
  const remove = [...before.keys()].filter((id) => !after.has(id));
  const update = [];
  const add = [];
  for (const [id, item] of after) {
    if (!before.has(id)) add.push(item);
    else if (!sameJSON(before.get(id), item)) update.push(item);
  }
  if (remove.length) part.remove = remove;
  if (update.length) part.update = update;
  if (add.length) part.add = add;
  return part;
}

/**
 * The patch turning `base` into `current`, or null when it cannot be expressed (an item
 * without an id, a repeated id): then send the whole document. A no-op edit gives {}.
 */
export function diffDocuments(base, current) {
  const patch = {};
  for (const key of COLLECTIONS) {
    const part = diffCollection(base[key], current[key]);
    if (!part) return null;
    if (Object.keys(part).length) patch[key] = part;
  }
  const fields = new Set([...Object.keys(base), ...Object.keys(current)]);
  for (const key of fields) {
    if (COLLECTIONS.includes(key)) continue;
    const had = Object.prototype.hasOwnProperty.call(base, key);
    const has = Object.prototype.hasOwnProperty.call(current, key) && current[key] !== undefined;
    // null means "delete the field", so a field whose value *is* null cannot be set by patch
    if (has && current[key] === null && !(had && base[key] === null)) return null;
    if (!has) { if (had) patch[key] = null; continue; }
    if (!had || !sameJSON(base[key], current[key])) patch[key] = current[key];
  }
  return patch;
}

/** The document the server builds from `base` and `patch` (same order); `base` is untouched. */
export function applyPatch(base, patch) {
  const doc = { ...base };
  for (const [key, value] of Object.entries(patch)) {
    if (!COLLECTIONS.includes(key)) {
      if (value === null) delete doc[key]; else doc[key] = value;
      continue;
    }
    const removed = new Set(value.remove || []);
    const updates = new Map((value.update || []).map((item) => [item.id, item]));
    const kept = (base[key] || []).filter((item) => !removed.has(item.id))
      .map((item) => updates.get(item.id) || item);
    doc[key] = kept.concat(value.add || []);
  }
  return doc;
}

/**
 * The body of a revision save: {patch} against `base` when it is smaller than the whole
 * document, else {document}. `baseRevision` 0 (nothing saved yet) always sends the document:
 * there is no server-side base to patch.
 * Returns {body, kind: 'patch'|'document', bytes} (bytes of the JSON text, UTF-16 units).
 */
export function saveBody(base, current, baseRevision, message = '') {
  const patch = base && baseRevision ? diffDocuments(base, current) : null;
  const asPatch = patch && { patch, base_revision: baseRevision, message };
  const patchText = asPatch ? JSON.stringify(asPatch) : null;
  // A patch that adds most of the design (a generate, an import) is no smaller than the
  // document; stringifying the document only then keeps a small edit's save cheap.
  if (patchText && patchText.length < approxSize(current)) return { body: asPatch, kind: 'patch', bytes: patchText.length };
  const full = { document: current, base_revision: baseRevision, message };
  const fullText = JSON.stringify(full);
  if (patchText && patchText.length < fullText.length) return { body: asPatch, kind: 'patch', bytes: patchText.length };
  return { body: full, kind: 'document', bytes: fullText.length };
}

/** A lower bound of the JSON size of `doc`: the smallest item (`{"id":"x","kind":"gpu"}`,
 * `{"id":"l","a":"x","b":"y"}`) is over 20 characters. */
function approxSize(doc) {
  return 20 * ((doc.nodes || []).length + (doc.links || []).length + (doc.groups || []).length);
}

/* Fabricscope editor — the document as the editor's document URL sends it.
 *
 * A large design comes in `fabricscope.editor-document/1` form: each repeated host interior once,
 * and which host uses it (designer/editor_compact.py states the form). Rebuilt here into the
 * document itself — the same elements in the same order with the same keys — before the editor
 * sees it: a 100,000-GPU design arrives as 15 MB of JSON instead of 253 MB.
 *
 * Pure: no DOM, unit-tested under Node (tests/js/compact.test.mjs).
 */
export const COMPACT_FORMAT = 'fabricscope.editor-document/1';

/** `out[key] = value` as JSON.parse makes it, also for a key "__proto__" (an own property, not
 * the object's prototype: an attribute of that name survives the trip). */
function put(out, key, value) {
  if (key === '__proto__') Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  else out[key] = value;
}

/** A JSON value copied (objects and arrays anew): every rebuilt element is its own object, so an
 * edit of one host's device can never reach the other hosts'. */
function copy(value) {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map(copy);
  const out = {};
  for (const key of Object.keys(value)) put(out, key, copy(value[key]));
  return out;
}

/** The items of a compact list: elements as they are, an integer k as host k's template items,
 * an array [shape, ...values] as that shape with its named fields set. */
function expandList(items, hosts, templates, which, place, shapes, names) {
  const out = [];
  for (const item of items || []) {
    if (Array.isArray(item)) { out.push(shaped(shapes[item[0]], names, item)); continue; }
    if (typeof item !== 'number') { out.push(item); continue; }
    const [host, t] = hosts[item];
    const prefix = `${host}/`;
    for (const element of templates[t][which]) out.push(place(copy(element), prefix, host));
  }
  return out;
}

function shaped(shape, names, item) {
  const element = copy(shape);
  for (let i = 0; i < names.length; i += 1) element[names[i]] = item[i + 1];
  return element;
}

const NODE_NAMES = ['id'];
const LINK_NAMES = ['id', 'a', 'b'];
const placeNode = (node, prefix, host) => { node.id = prefix + node.id; node.group = host; return node; };
const placeLink = (link, prefix) => { link.id = prefix + link.id; link.a = prefix + link.a; link.b = prefix + link.b; return link; };

/** The document a compact form stands for (any other value is returned as it is). */
export function expandDocument(raw) {
  if (!raw || raw.format !== COMPACT_FORMAT) return raw;
  const doc = raw.document || {};
  const templates = raw.host_templates || [];
  const hosts = raw.hosts || [];
  const out = {};
  for (const key of Object.keys(doc)) put(out, key, doc[key]);
  out.nodes = expandList(doc.nodes, hosts, templates, 'nodes', placeNode, raw.node_shapes || [], NODE_NAMES);
  out.links = expandList(doc.links, hosts, templates, 'links', placeLink, raw.link_shapes || [], LINK_NAMES);
  return out;
}

/** The document of the editor's document URL, from its text (either form). */
export function parseEditorDocument(text) {
  return expandDocument(JSON.parse(text));
}

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

/** A function making fresh copies of `element`, its own-key walk done once: a host template's
 * element is copied for every host that uses it (12,500 times in a 100,000-GPU design), and the
 * spread copies its flat fields at once, a key "__proto__" included as an own property. */
function copier(element) {
  if (element === null || typeof element !== 'object' || Array.isArray(element)) return () => copy(element);
  const nested = Object.keys(element).filter((k) => element[k] !== null && typeof element[k] === 'object');
  if (!nested.length) return () => ({ ...element });
  return () => {
    const out = { ...element };
    for (const key of nested) put(out, key, copy(element[key]));
    return out;
  };
}

/** The items of a compact list: elements as they are, an array [shape, ...values] as that shape
 * with its named fields set, and an integer k as host k's template items (`hostItems(k, out)`
 * appends them). */
function expandList(items, shapes, names, hostItems) {
  const out = [];
  const copiers = new Map();   // shape -> its copier
  for (const item of items || []) {
    if (Array.isArray(item)) out.push(shaped(copiers, shapes, names, item));
    else if (typeof item === 'number') hostItems(item, out);
    else out.push(item);
  }
  return out;
}

function shaped(copiers, shapes, names, item) {
  let make = copiers.get(item[0]);
  if (!make) copiers.set(item[0], (make = copier(shapes[item[0]])));
  const element = make();
  for (let i = 0; i < names.length; i += 1) element[names[i]] = item[i + 1];
  return element;
}

const NODE_NAMES = ['id'];
const LINK_NAMES = ['id', 'a', 'b'];

/** Per host template, made once: a copier per device and per link, and each link's ends as
 * positions among the template's devices. */
function templateMakers(template) {
  const local = new Map((template.nodes || []).map((n, i) => [n.id, i]));
  return {
    nodes: (template.nodes || []).map(copier),
    links: (template.links || []).map(copier),
    ends: (template.links || []).map((l) => [local.get(l.a), local.get(l.b)]),
  };
}

/** Host items of both lists. A link's ends are the very strings its devices' ids are, not equal
 * copies: the editor's index looks every end up by id, and a string hashed once (its device's
 * id) is found at once where a fresh concatenation is hashed anew (0.5 s over the 2.5M ends of a
 * 100,000-GPU design). */
function hostExpanders(hosts, templates) {
  const makers = new Map();
  const makersOf = (t) => makers.get(t) || makers.set(t, templateMakers(templates[t])).get(t);
  const placedIds = new Map();   // host item -> its devices' ids, in template order
  const nodes = (k, out) => {
    const [host, t] = hosts[k];
    const prefix = `${host}/`;
    const ids = [];
    for (const fresh of makersOf(t).nodes) {
      const node = fresh();
      node.id = prefix + node.id;
      node.group = host;
      ids.push(node.id);
      out.push(node);
    }
    placedIds.set(k, ids);
  };
  const links = (k, out) => {
    const [host, t] = hosts[k];
    const prefix = `${host}/`;
    const ids = placedIds.get(k);
    const { links: made, ends } = makersOf(t);
    for (let i = 0; i < made.length; i += 1) {
      const link = made[i]();
      const [a, b] = ends[i];
      link.id = prefix + link.id;
      link.a = ids && a !== undefined ? ids[a] : prefix + link.a;
      link.b = ids && b !== undefined ? ids[b] : prefix + link.b;
      out.push(link);
    }
  };
  return { nodes, links };
}

/** The document a compact form stands for (any other value is returned as it is). */
export function expandDocument(raw) {
  if (!raw || raw.format !== COMPACT_FORMAT) return raw;
  const doc = raw.document || {};
  const templates = raw.host_templates || [];
  const hosts = raw.hosts || [];
  const out = {};
  for (const key of Object.keys(doc)) put(out, key, doc[key]);
  const expand = hostExpanders(hosts, templates);
  out.nodes = expandList(doc.nodes, raw.node_shapes || [], NODE_NAMES, expand.nodes);
  out.links = expandList(doc.links, raw.link_shapes || [], LINK_NAMES, expand.links);
  return out;
}

/** The document of the editor's document URL, from its text (either form). */
export function parseEditorDocument(text) {
  return expandDocument(JSON.parse(text));
}

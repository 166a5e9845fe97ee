/* Fabricscope result page — the data side of its interactions (DOM-free, unit-tested with node).
 *
 * designer/figures builds every figure; the page embeds them with the compact data the clicks
 * need: the path view's `fabricscope.path_index` (every listed flow) and a collapsed topology's
 * `fabricscope.hosts` (every host's internals). On a click the page posts the slice of that data
 * one figure needs to /figures/<kind>/ (designer/figures/interactive.py) and draws the answer, so
 * no figure is built here. The index format is documented in designer/figures/paths.py
 * (path_index) and topology.py (host_details).
 */

/** A path-index flow row as a readable record (the picker's labels and search text). */
export function flowRecord(ix, row) {
  return {
    id: row[0], pattern: ix.patterns[row[1]], src: ix.nodes[row[2]], dst: ix.nodes[row[3]],
    cls: row[4] >= 0 ? ix.classes[row[4]] : null, ok: !!row[6],
  };
}

/** Picker label of a flow row: `id  src → dst  class` (or `unroutable`). */
export function flowLabel(ix, row) {
  const f = flowRecord(ix, row);
  return `${f.id}  ${f.src} → ${f.dst}${f.ok ? `  ${f.cls || ''}` : '  unroutable'}`;
}

/** One value table of the slice: each value of the full index copied once (through `map`), renumbered. */
class Table {
  constructor(source, map = (v) => v) {
    this.source = source; this.map = map; this.items = []; this.from = []; this.index = new Map();
  }
  take(i) {
    if (!this.index.has(i)) {
      this.index.set(i, this.items.length);
      this.from.push(i);
      this.items.push(this.map(this.source[i]));
    }
    return this.index.get(i);
  }
}

/**
 * The path index of one flow: the row and only the nodes, resources and strings it references,
 * renumbered. `{index, flow}` is the body of POST /figures/path/.
 */
export function pathSlice(ix, row) {
  const t = {};
  ['patterns', 'classes', 'techs', 'tiers'].forEach((k) => { t[k] = new Table(ix[k]); });
  const nodes = new Table(ix.nodes);
  const res = new Table(ix.res, (rec) => [rec[0], t.techs.take(rec[1]), t.tiers.take(rec[2]), rec[3], rec[4], rec[5]]);
  const resource = (r) => (r === undefined || r < 0 ? -1 : res.take(r));
  const ids = row[9].map((i) => nodes.take(i));
  const hops = {}, nodeRes = {};
  for (let k = 0; k + 1 < row[9].length; k++) {
    const r = ix.hops[`${row[9][k]}>${row[9][k + 1]}`];
    if (r !== undefined) hops[`${ids[k]}>${ids[k + 1]}`] = resource(r);
  }
  row[9].forEach((i, k) => {
    const r = (ix.node_res || {})[i];
    if (r !== undefined) nodeRes[ids[k]] = resource(r);
  });
  const flow = [row[0], t.patterns.take(row[1]), nodes.take(row[2]), nodes.take(row[3]),
    row[4] >= 0 ? t.classes.take(row[4]) : -1, row[5], row[6], row[7], resource(row[8]), ids, row[10]];
  return {
    flow: row[0],
    index: {
      nodes: nodes.items, kinds: nodes.from.map((i) => ix.kinds[i]), hosts: nodes.from.map((i) => ix.hosts[i]),
      patterns: t.patterns.items, classes: t.classes.items, techs: t.techs.items, tiers: t.tiers.items,
      flows: [flow], hops, res: res.items, node_res: nodeRes, listed: 1, total: 1,
    },
  };
}

/** The host details of one host (its shape and loads). `{details, host}` is the body of POST /figures/host/. */
export function hostSlice(details, host) {
  const h = details.hosts[host];
  return { host, details: { shapes: [details.shapes[h.s]], hosts: { [host]: { ...h, s: 0 } } } };
}

/** Colour of utilization `u` (0–1, clamped) on a Plotly-style colour scale `[[position, '#rrggbb'], ...]`. */
export function scaleColor(scale, u) {
  const x = Math.min(Math.max(Number(u) || 0, 0), 1);
  const rgb = (c) => [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
  for (let k = 0; k + 1 < scale.length; k++) {
    const [p0, c0] = scale[k], [p1, c1] = scale[k + 1];
    if (x <= p1) {
      const f = (x - p0) / (p1 - p0), a = rgb(c0), b = rgb(c1);
      return `#${a.map((v, i) => Math.round(v + (b[i] - v) * f).toString(16).padStart(2, '0')).join('')}`;
    }
  }
  return scale[scale.length - 1][1];
}

/** `'42%'`, `'—'` for a missing value. */
export function pct(u) {
  return (u === null || u === undefined || !Number.isFinite(u)) ? '—' : `${Math.round(u * 100)}%`;
}

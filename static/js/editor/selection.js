/* Fabricscope editor — the selection on the canvas, read as document ids. */

import { eachLinkRep } from './visible.js';

/** The selected elements by type: document ids of nodes, links and groups, and the bundle
 * elements themselves (a bundle stands for several links). */
export function selection(cy) {
  const out = { nodes: [], links: [], groups: [], aggs: [] };
  cy.$(':selected').forEach((el) => {
    const et = el.data('etype');
    if (et === 'node') out.nodes.push(el.data('ref'));
    else if (et === 'link') out.links.push(el.data('ref'));
    else if (et === 'group') out.groups.push(el.data('ref'));
    else if (et === 'agg') out.aggs.push(el);
  });
  return out;
}

export function selectedNodes(cy) { return selection(cy).nodes; }

/** Select exactly the elements standing for document `ids` of `kind`. */
export function selectIds(ed, kind, ids) {
  ed.cy.$(':selected').unselect();
  for (const id of ids) ed.view.elementFor(kind, id).select();
}

/** Ids of the document links a bundle element stands for. */
export function aggLinks(ed, aggEl) {
  const [ra, rb] = [aggEl.data('source'), aggEl.data('target')];
  const out = [];
  eachLinkRep(ed.model, ed.view.makeRepResolver().nodeRepAt, (l, a, b) => {
    if ((a === ra && b === rb) || (a === rb && b === ra)) out.push(l.id);
  });
  return out;
}

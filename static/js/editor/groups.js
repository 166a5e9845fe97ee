/* Fabricscope editor — collapsing and expanding groups, and the neighbourhood highlight (H).
 * Both are view state: they change what is shown, never the document. */
import { toast } from './chrome.js';
import { selection } from './selection.js';
import { fit, setCollapsed } from './viewport.js';

const EXPAND_WARN_NODES = 3000; // devices above which "expand all" says it may take a moment

/* ================================================================ pure */
/** Groups E toggles: the selected groups, else the hosts (or groups) of the selected devices. */
export function groupsToToggle(model, sel) {
  if (sel.groups.length || !sel.nodes.length) return sel.groups;
  return [...new Set(sel.nodes.map((n) => model.hostOf(n) || model.node(n).group).filter(Boolean))];
}

/** Groups "collapse all" closes (every host) or "expand all" opens (every group). */
export function collapseAllIds(model, collapse) {
  return collapse ? model.doc.groups.filter((g) => g.kind === 'host').map((g) => g.id) : model.doc.groups.map((g) => g.id);
}

/** The collapsed groups at the ends of a bundle ("g:h0" | "n:leaf0"). */
export function bundleGroups(source, target) {
  return [source, target].filter((id) => id.startsWith('g:')).map((id) => id.slice(2));
}

/** Devices within `hops` links of `start` (a Set of device ids), `start` included. */
export function neighbourhood(model, start, hops) {
  let frontier = [...start];
  const seen = new Set(start);
  for (let k = 0; k < hops; k += 1) {
    const next = [];
    for (const id of frontier) {
      for (const l of model.linkObjectsOf(id)) {
        const o = l.a === id ? l.b : l.a;
        if (!seen.has(o)) { seen.add(o); next.push(o); }
      }
    }
    frontier = next;
  }
  return seen;
}

/* ================================================================ commands */
export function toggleCollapse(ed, groupIds) {
  const ids = groupIds.filter((g) => ed.model.group(g));
  if (!ids.length) return;
  const cy = ed.cy;
  const collapse = !ed.viewState.isCollapsed(ids[0]);
  setCollapsed(ed, ids, collapse);
  const el = ed.view.elementFor('group', ids[0]);
  cy.$(':selected').unselect();
  el.select();
  // Collapsing at reading zoom would fill the screen with one block: step back a little.
  if (collapse && el.renderedWidth() > 0.6 * cy.width()) {
    cy.animate({ fit: { eles: el.closedNeighborhood(), padding: 60 } }, { duration: 200 });
  }
}

export function toggleSelectedGroup(ed) { toggleCollapse(ed, groupsToToggle(ed.model, selection(ed.cy))); }

export function collapseAll(ed, collapse) {
  const m = ed.model;
  if (!collapse && m.doc.nodes.length > EXPAND_WARN_NODES) {
    const hosts = collapseAllIds(m, true).length;
    toast(ed, `Expanding ${hosts} hosts (${m.doc.nodes.length.toLocaleString()} devices)…`);
  }
  setCollapsed(ed, collapseAllIds(m, collapse), collapse);
  fit(ed);
}

export function expandAggregate(ed, aggEl) { setCollapsed(ed, bundleGroups(aggEl.data('source'), aggEl.data('target')), false); }

/* ---------------------------------------------------------------- neighbourhood */
/** H: 1, 2, 3 hops around the selection, then off. */
export function cycleHops(ed) {
  ed.hood.hops = (ed.hood.hops + 1) % 4;
  if (ed.hood.hops && !ed.cy.$('node:selected').length) { ed.hood.hops = 0; toast(ed, 'Select a device first.'); }
  applyNeighbourhood(ed);
}

export function clearNeighbourhood(ed) { ed.hood.hops = 0; applyNeighbourhood(ed); }

/** Fade everything outside the neighbourhood of the selection (nothing when hops is 0). */
export function applyNeighbourhood(ed) {
  const cy = ed.cy;
  cy.elements('.faded, .nhood').removeClass('faded nhood');
  if (!ed.hood.hops) return;
  const m = ed.model;
  const sel = selection(cy);
  const start = new Set(sel.nodes);
  for (const g of sel.groups) for (const n of m.descendantNodes(g)) start.add(n);
  if (!start.size) { ed.hood.hops = 0; return; }
  const seen = neighbourhood(m, start, ed.hood.hops);
  const { nodeRep } = ed.view.makeRepResolver();
  const reps = new Set([...seen].map(nodeRep));
  cy.batch(() => {
    cy.elements().forEach((el) => {
      const inSet = el.isNode() ? reps.has(el.id()) || (el.isParent() && el.descendants().some((d) => reps.has(d.id())))
        : reps.has(el.data('source')) && reps.has(el.data('target'));
      el.addClass(inSet ? 'nhood' : 'faded');
    });
  });
  toast(ed, `${ed.hood.hops}-hop neighbourhood: ${seen.size - start.size} devices (H for more, Esc clears)`);
}

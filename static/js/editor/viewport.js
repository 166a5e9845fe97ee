/* Fabricscope editor — what the canvas shows: collapsing, zoom, fit, link labels, and focusing
 * one element. None of it is an edit: it never touches the document or its undo history. */

const GHOST = '#__ghost, #__ghost_edge'; // connect mode's rubber band (connect.js)

/** Collapse or expand groups (view state: not an edit, not undoable). */
export function setCollapsed(ed, groupIds, collapsed) {
  return ed.viewState.setCollapsed(groupIds, collapsed, (id) => !!ed.model.group(id));
}

export function fit(ed) { ed.cy.stop(); ed.cy.fit(ed.cy.elements().not(GHOST), 30); }

export function selectAll(ed) { ed.cy.elements().not(GHOST).select(); }

export function zoomBy(ed, f) {
  const cy = ed.cy;
  cy.zoom({ level: Math.max(cy.minZoom(), Math.min(cy.maxZoom(), cy.zoom() * f)), renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
}

export function setEdgeLabels(ed, on) {
  ed.view.setEdgeLabels(on);
  ed.els.labels.querySelector('input').checked = on;
}

/** The groups to open so the element `type`/`id` shows: its ancestors (both ends' for a link). */
export function hidingGroups(model, type, id) {
  const groupOf = (nodeId) => model.node(nodeId) && model.node(nodeId).group;
  if (type === 'node' && model.node(id)) return model.ancestors(groupOf(id));
  if (type === 'group' && model.group(id)) return model.ancestors(model.group(id).parent);
  if (type === 'link' && model.link(id)) {
    const l = model.link(id);
    return [...model.ancestors(groupOf(l.a)), ...model.ancestors(groupOf(l.b))];
  }
  return [];
}

/** Zoom that shows a group of `bb` (model px) whole in a `w` × `h` canvas, never closer than
 * reading distance. */
export function groupZoom(bb, w, h) {
  return Math.min(2, Math.max(0.3, Math.min(w / (bb.w + 80), h / (bb.h + 80))));
}

/** Expand what hides the element, select it and zoom to it. */
export function focusElement(ed, type, id) {
  const cy = ed.cy;
  setCollapsed(ed, hidingGroups(ed.model, type, id), false);
  const el = ed.view.elementFor(type, id);
  if (el.empty()) return false;
  cy.$(':selected').unselect();
  el.select();
  let zoom = Math.min(Math.max(cy.zoom(), 1.3), 2);
  if (type === 'group' || el.isParent()) zoom = groupZoom(el.boundingBox(), cy.width(), cy.height());
  cy.stop();
  cy.animate({ zoom, center: { eles: el } }, { duration: 250 });
  return true;
}

/** Focus the toolbar's search box. */
export function focusSearch(ed) { ed.els.search.focus(); ed.els.search.select(); }

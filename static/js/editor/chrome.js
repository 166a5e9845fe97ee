/* Fabricscope editor — the chrome around the canvas: the status line, the footer counts, toasts,
 * and the editor's height. */

/**
 * The toolbar's status: a topology never saved (blank) is not "saved": say so until its first
 * revision.
 * @returns {{text: string, title: string}}
 */
export function statusLine({ readonly, dirty, revision }) {
  const rev = revision == null ? 'new' : `rev ${revision}`;
  let text;
  if (readonly) text = `read-only · ${rev}`;
  else if (dirty) text = `● unsaved (${rev})`;
  else text = revision == null ? 'new · not saved yet' : `saved · ${rev}`;
  return { text, title: revision == null ? 'Never saved' : `Based on revision ${revision}` };
}

/** "5,120 devices · … — showing 40 nodes, 12 edges · render 8 ms" */
export function footerText(doc, shownNodes, shownEdges, renderMs) {
  return `${doc.nodes.length.toLocaleString()} devices · ${doc.links.length.toLocaleString()} links · ${doc.groups.length} groups — showing ${shownNodes.toLocaleString()} nodes, ${shownEdges.toLocaleString()} edges · render ${Math.round(renderMs || 0)} ms`;
}

/** Status line, undo/redo buttons, the empty-canvas hint and the footer, from the state. */
export function refreshChrome(ed) {
  const E = ed.els;
  const m = ed.model;
  const dirty = m.isDirty();
  E.name.textContent = m.doc.name || 'untitled';
  const status = statusLine({ readonly: ed.readonly, dirty, revision: ed.server.revision });
  E.status.textContent = status.text;
  E.status.title = status.title;
  E.status.classList.toggle('fs-dirty', dirty && !ed.readonly);
  ed.root.dataset.dirty = dirty ? '1' : '0';
  E.undo.disabled = !m.canUndo();
  E.redo.disabled = !m.canRedo();
  E.empty.hidden = m.doc.nodes.length > 0 || m.doc.groups.length > 0;
  if (ed.cy) E.footer.textContent = footerText(m.doc, ed.cy.nodes().length, ed.cy.edges().length, ed.view.lastRenderMs);
}

/** A short message over the canvas; errors stay longer. */
export function toast(ed, msg, kind) {
  const t = ed.els.toast;
  t.textContent = msg;
  t.className = `fs-toast${kind ? ' fs-toast-' + kind : ''}`;
  t.hidden = false;
  clearTimeout(ed.chrome.toastTimer);
  ed.chrome.toastTimer = setTimeout(() => { t.hidden = true; }, kind === 'error' ? 6000 : 2500);
}

/** The editor fills the window below its top. */
export function fitHeight(ed) {
  const top = ed.root.getBoundingClientRect().top + window.scrollY;
  ed.root.style.height = `${Math.max(420, window.innerHeight - top)}px`;
  if (ed.cy) ed.cy.resize();
}

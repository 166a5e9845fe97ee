/* Fabricscope editor — connecting two devices: connect mode (C: click the source, then the
 * target), the drag handle beside a selected device, and the dashed ghost edge that follows the
 * pointer meanwhile. Owns `ed.connect` (see state.js). */
import { toast } from './chrome.js';
import { openLinkPicker } from './edit.js';
import { selectedNodes } from './selection.js';

/** The device (document id) under rendered point p ({rx, ry}), or null. */
export function nodeAtRendered(cy, p) {
  let found = null;
  cy.nodes('[etype="node"]').forEach((n) => {
    const bb = n.renderedBoundingBox({ includeLabels: false });
    if (p.rx >= bb.x1 && p.rx <= bb.x2 && p.ry >= bb.y1 && p.ry <= bb.y2) found = n.data('ref');
  });
  return found;
}

export function startGhost(ed, srcId) {
  stopGhost(ed);
  const src = ed.view.elementFor('node', srcId);
  const p = ed.pointer || src.position();
  ed.cy.add([{ group: 'nodes', data: { id: '__ghost' }, position: { x: p.x, y: p.y }, selectable: false, grabbable: false },
    { group: 'edges', data: { id: '__ghost_edge', source: src.id(), target: '__ghost' } }]);
  ed.connect.ghost = ed.cy.getElementById('__ghost');
  ed.connect.ghostSource = srcId;
  src.addClass('connect-source');
}

export function stopGhost(ed) {
  ed.cy.remove('#__ghost');
  ed.cy.$('.connect-source').removeClass('connect-source');
  ed.connect.ghost = null; ed.connect.ghostSource = null;
}

/** The ghost edge's loose end follows model point p. */
export function moveGhost(ed, p) {
  if (ed.connect.ghost) ed.connect.ghost.position({ x: p.x, y: p.y });
}

export function setConnectSource(ed, id) {
  ed.connect.source = id;
  const banner = ed.els.modeBanner;
  if (id) { startGhost(ed, id); banner.textContent = `Connect: now click the target device for ${id} (Esc cancels)`; return; }
  stopGhost(ed);
  if (ed.connect.mode === 'connect') banner.textContent = 'Connect: click the source device (Esc cancels)';
}

/** Connect mode on, off (`force`), or toggled. */
export function toggleConnect(ed, force) {
  if (ed.readonly) return;
  const on = force != null ? force : ed.connect.mode !== 'connect';
  ed.connect.mode = on ? 'connect' : null;
  ed.els.connect.setAttribute('aria-pressed', on ? 'true' : 'false');
  ed.els.connect.classList.toggle('fs-active', on);
  ed.els.modeBanner.hidden = !on;
  setConnectSource(ed, null);
  ed.cy.autounselectify(false);
  updateHandle(ed);
}

/** A tap on a node in connect mode: the first picks the source, the second the target. */
export function onTapNode(ed, e) {
  const el = e.target;
  if (ed.connect.mode !== 'connect' || el.id().startsWith('__')) return;
  if (el.data('etype') !== 'node') { toast(ed, 'Expand the group to connect one of its devices.'); return; }
  const id = el.data('ref');
  const src = ed.connect.source;
  if (!src) { setConnectSource(ed, id); return; }
  setConnectSource(ed, null);
  if (id !== src) openLinkPicker(ed, src, id);
}

/** Show the handle beside the one selected device (none in connect mode or read-only). */
export function updateHandle(ed) {
  const hd = ed.els.handle;
  const sel = ed.readonly || ed.connect.mode ? [] : selectedNodes(ed.cy);
  const el = sel.length === 1 ? ed.view.elementFor('node', sel[0]) : null;
  if (!el || el.empty()) { hd.hidden = true; return; }
  const bb = el.renderedBoundingBox({ includeLabels: false });
  hd.hidden = false;
  hd.style.left = `${bb.x2 + 2}px`;
  hd.style.top = `${bb.y1 - 12}px`;
}

/** Handle drag: mousedown on the handle, move, release over a device. `toModel` maps a mouse
 * event to model and rendered points (canvas.js). */
export function bindHandle(ed, toModel) {
  ed.els.handle.addEventListener('mousedown', (ev) => {
    ev.preventDefault(); ev.stopPropagation();
    const sel = selectedNodes(ed.cy);
    if (sel.length !== 1) return;
    startGhost(ed, sel[0]);
    const move = (e2) => moveGhost(ed, toModel(e2));
    const up = (e2) => {
      document.removeEventListener('mousemove', move);
      document.removeEventListener('mouseup', up);
      const target = nodeAtRendered(ed.cy, toModel(e2));
      const src = ed.connect.ghostSource;
      stopGhost(ed);
      if (target && target !== src) openLinkPicker(ed, src, target);
    };
    document.addEventListener('mousemove', move);
    document.addEventListener('mouseup', up);
  });
}

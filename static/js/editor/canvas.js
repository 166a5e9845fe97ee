/* Fabricscope editor — canvas interaction: Cytoscape events, dragging devices and closed groups,
 * the pointer, and dropping palette kinds or files onto the canvas. What a gesture does is a
 * command (commands.js); this module only listens. */
import { bindHandle, moveGhost, onTapNode, setConnectSource } from './connect.js';

const KIND_MIME = 'application/x-fabricscope-kind'; // the palette's drag payload (page.js)

/** Tooltip: "8 × nvlink5x1 (3.2 Tb/s) between h0/nvs0 and h0/tray0" for a bundle; id, tech, ends for a link. */
export function edgeTooltip(el, model) {
  const end = (id) => id.slice(id.indexOf(':') + 1);
  const ends = `${end(el.data('source'))} and ${end(el.data('target'))}`;
  if (el.data('etype') === 'agg') return `${el.data('label')} between ${ends} (double-click to expand)`;
  const l = model.link(el.data('ref'));
  return `${el.data('ref')}: ${(l && l.tech) || '?'} between ${ends}`;
}

/** The line-style key under the speed legend (page.js builds the speed legend itself; this adds
 * the dashed = network row once, next to it). */
function addLineStyleLegend(canvas) {
  const root = canvas.closest('.fs-editor');
  const speeds = root && root.querySelector('.fs-legend');
  if (!speeds || root.querySelector('.fs-legend-styles')) return;
  const ul = document.createElement('ul');
  ul.className = 'fs-legend fs-legend-styles';
  for (const [cls, text] of [['fs-line-solid', 'NVLink, PCIe, UPI, DDR'], ['fs-line-dashed', 'network: Ethernet, IB'],
    ['fs-line-bundle', 'bundle: “8 × nvlink5x1”']]) {
    const li = document.createElement('li');
    const sw = document.createElement('span');
    sw.className = `fs-line ${cls}`;
    li.append(sw, text);
    ul.append(li);
  }
  speeds.after(ul);
}

/** A mouse event's point in model space (x, y) and on the canvas (rx, ry). */
export function toModel(ed, ev) {
  const rect = ed.canvas.getBoundingClientRect();
  const pan = ed.cy.pan(); const z = ed.cy.zoom();
  const rx = ev.clientX - rect.left; const ry = ev.clientY - rect.top;
  return { x: (rx - pan.x) / z, y: (ry - pan.y) / z, rx, ry };
}

/**
 * New positions of the devices under dragged elements: a device where it was released; every
 * device of a closed group by the group's move. Grabbed and released in place (a click, a
 * double-click) is no move.
 * @param {{kind: 'node'|'group', ref: string, x: number, y: number, oy?: number}[]} moved
 *   released devices and closed groups (oy: a group drawn above its footprint, visible.js)
 * @returns {Map<string, number[]>} device id -> [x, y]
 */
export function dragMoves(model, posOf, groupCentre, moved) {
  const out = new Map();
  for (const { kind, ref, x, y, oy } of moved) {
    if (kind === 'node') {
      const q = posOf(ref);
      if (Math.abs(x - q[0]) >= 0.5 || Math.abs(y - q[1]) >= 0.5) out.set(ref, [x, y]);
      continue;
    }
    const c = groupCentre(ref);
    const dx = x - c[0]; const dy = y - c[1] - (oy || 0);
    if (Math.abs(dx) < 0.5 && Math.abs(dy) < 0.5) continue;
    for (const id of model.descendantNodes(ref)) { const q = posOf(id); out.set(id, [q[0] + dx, q[1] + dy]); }
  }
  return out;
}

/** The devices and closed groups a drag of `els` released (an open group: what is inside). */
function releasedLeaves(els) {
  const moved = [];
  const visit = (el) => {
    const et = el.data('etype');
    const p = el.position();
    if (et === 'node') moved.push({ kind: 'node', ref: el.data('ref'), x: p.x, y: p.y });
    else if (et === 'group' && el.data('collapsed')) moved.push({ kind: 'group', ref: el.data('ref'), x: p.x, y: p.y, oy: el.data('oy') });
  };
  for (const el of els) {
    if (el.removed()) continue;
    if (el.isParent()) el.descendants().filter((d) => !d.isParent()).forEach(visit); else visit(el);
  }
  return moved;
}

function commitDrag(ed, els) {
  if (ed.readonly) return;
  const m = ed.model;
  const moves = dragMoves(m, (id) => ed.view.posOf(id), (id) => ed.view.groupCentre(id), releasedLeaves(els));
  m.apply([...moves].map(([id, p]) => m.opPos(id, p)), 'move');
}

/** Cytoscape's events: taps, double-taps, hover tooltips, drags; the pointer; the handle. */
export function bindCy(ed, cmd) {
  const cy = ed.cy;
  cy.on('tap', 'node', (e) => onTapNode(ed, e));
  cy.on('tap', (e) => { if (e.target === cy && ed.connect.mode === 'connect' && ed.connect.source) setConnectSource(ed, null); });
  cy.on('dbltap', 'node[etype="group"]', (e) => cmd.toggleCollapse([e.target.data('ref')]));
  cy.on('dbltap', 'edge[etype="agg"]', (e) => cmd.expandAggregate(e.target));
  cy.on('pan zoom position', () => cmd.updateHandle());
  // A link's or bundle's tooltip: the browser's own, from the canvas title.
  cy.on('mouseover', 'edge[etype="agg"], edge[etype="link"]', (e) => { ed.canvas.title = edgeTooltip(e.target, ed.model); });
  cy.on('mouseout', 'edge', () => { ed.canvas.removeAttribute('title'); });
  addLineStyleLegend(ed.canvas);
  // One transaction for everything released together (a box-selected group of devices).
  const pending = new Set();
  cy.on('dragfree', 'node', (e) => {
    pending.add(e.target);
    if (pending.size === 1) queueMicrotask(() => { const els = [...pending]; pending.clear(); commitDrag(ed, els); });
  });
  ed.canvas.addEventListener('mousemove', (ev) => {
    ed.pointer = toModel(ed, ev);
    moveGhost(ed, ed.pointer);
  });
  ed.canvas.addEventListener('mouseleave', () => { ed.pointer = null; });
  bindHandle(ed, (ev) => toModel(ed, ev));
}

/** Drop a palette kind (a new device there) or a file (an import) onto the canvas. */
export function bindDrop(ed, cmd) {
  const wrap = ed.canvasWrap;
  wrap.addEventListener('dragover', (e) => {
    if (ed.readonly) return;
    const types = [...e.dataTransfer.types];
    if (types.includes(KIND_MIME)) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; }
    else if (types.includes('Files')) { e.preventDefault(); ed.els.dropHint.hidden = false; }
  });
  wrap.addEventListener('dragleave', () => { ed.els.dropHint.hidden = true; });
  wrap.addEventListener('drop', (e) => {
    ed.els.dropHint.hidden = true;
    if (ed.readonly) return;
    const kind = e.dataTransfer.getData(KIND_MIME);
    e.preventDefault();
    if (kind) { const p = toModel(ed, e); cmd.placeNode(kind, { x: p.x, y: p.y }); return; }
    const file = e.dataTransfer.files && e.dataTransfer.files[0];
    if (file) cmd.importFile(file);
  });
}

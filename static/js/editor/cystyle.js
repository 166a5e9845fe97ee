/* Fabricscope editor — the Cytoscape stylesheet, built from the page's colours.
 *
 * Colour is a link's speed class (SPEED_BUCKETS, the sidebar legend), except NVLink, which has one
 * colour of its own whatever its width (NVLINK_COLOR); device kinds take their
 * shape and colour from #fs-style (designer/figures/style.py style_json(): one palette and one
 * set of shapes for the editor and every result view).
 *
 * Pure apart from readColors() and sharedKinds(), which read the page they are handed.
 */

export const SPEED_BUCKETS = [ // upper bound Gb/s (per direction), CSS variable, legend text
  [100, '--fs-speed-1', '≤ 100 Gb/s'],
  [200, '--fs-speed-2', '≤ 200 Gb/s'],
  [400, '--fs-speed-3', '≤ 400 Gb/s'],
  [800, '--fs-speed-4', '≤ 800 Gb/s (PCIe5 x16)'],
  [2000, '--fs-speed-5', '≤ 2 Tb/s (UPI); every NVLink'],
  [Infinity, '--fs-speed-6', '> 2 Tb/s (DDR)'],
];
// Every NVLink (x1 to x18, C2C) is drawn in this legend colour: by speed alone an NVLink 4 x4
// (659 Gb/s) would take the PCIe class's colour; its width still grows with its capacity.
export const NVLINK_COLOR = '--fs-speed-5';
export const KIND_STYLE = { // fallback shape, width, height (shape and colour come from #fs-style)
  gpu: ['round-rectangle', 34, 26], cpu: ['hexagon', 36, 30], memory: ['pentagon', 28, 28],
  pcie_switch: ['triangle', 32, 30], nvswitch: ['diamond', 36, 32], nic: ['ellipse', 28, 24],
  nvme: ['vee', 26, 24], switch: ['round-octagon', 44, 30], storage: ['star', 36, 36],
};
// The CSS variable of each kind's colour: #fs-style's colours are copied there, so the palette
// chips match the canvas.
export const CSS_KIND = { gpu: '--fs-gpu', cpu: '--fs-cpu', memory: '--fs-memory', pcie_switch: '--fs-pcie',
  nvswitch: '--fs-nvswitch', nic: '--fs-nic', nvme: '--fs-nvme', storage: '--fs-storage', switch: '--fs-switch-leaf' };
const ROLE_COLOR = { tor: '--fs-switch-tor', leaf: '--fs-switch-leaf', spine: '--fs-switch-spine', core: '--fs-switch-core' };
export const COLOR_NAMES = ['--fs-text', '--fs-muted', '--fs-bg', '--fs-accent', '--fs-danger', '--fs-group', '--fs-group-border',
  '--fs-gpu', '--fs-cpu', '--fs-memory', '--fs-pcie', '--fs-nvswitch', '--fs-nic', '--fs-nvme', '--fs-storage',
  '--fs-switch-tor', '--fs-switch-leaf', '--fs-switch-spine', '--fs-switch-core', '--fs-node-border',
  ...SPEED_BUCKETS.map((b) => b[1])];

/** The `kinds` of #fs-style ({kind: {shape, color, ...}}), {} without one. */
export function sharedKinds(doc = (typeof document !== 'undefined' ? document : null)) {
  const el = doc && doc.getElementById('fs-style');
  try { return (el && JSON.parse(el.textContent).kinds) || {}; } catch { return {}; }
}

/** The editor's colours: COLOR_NAMES read from `container`'s computed style ('#888' if unset). */
export function readColors(container) {
  const cs = getComputedStyle(container);
  const out = {};
  for (const n of COLOR_NAMES) out[n] = (cs.getPropertyValue(n) || '').trim() || '#888';
  return out;
}

/** Colour of a link of `gbps` per direction: its speed bucket's. */
export function speedColor(colors, gbps) {
  for (const [max, v] of SPEED_BUCKETS) if (gbps <= max + 1e-9) return colors[v];
  return colors[SPEED_BUCKETS[SPEED_BUCKETS.length - 1][1]];
}

function deviceStyles(c, kinds, large) {
  const kindColor = {
    gpu: c['--fs-gpu'], cpu: c['--fs-cpu'], memory: c['--fs-memory'], pcie_switch: c['--fs-pcie'],
    nvswitch: c['--fs-nvswitch'], nic: c['--fs-nic'], nvme: c['--fs-nvme'], storage: c['--fs-storage'],
    switch: (kinds.switch || {}).color || c['--fs-switch-leaf'],
  };
  const s = [{ selector: 'node', style: {
    label: 'data(label)', 'font-size': 10, color: c['--fs-text'], 'text-valign': 'bottom',
    'text-margin-y': 3, 'text-max-width': 64, 'text-wrap': 'ellipsis', 'font-family': 'system-ui, sans-serif',
    'border-width': 1, 'border-color': c['--fs-node-border'], 'min-zoomed-font-size': large ? 7 : 5,
    'text-background-color': c['--fs-bg'], 'text-background-opacity': 0.7, 'text-background-padding': 1,
    'background-color': '#999',
  } }];
  for (const [kind, [fallback, w, h]] of Object.entries(KIND_STYLE)) {
    const shape = (kinds[kind] || {}).shape || fallback;
    s.push({ selector: `node[kind="${kind}"]`, style: { shape, width: w, height: h, 'background-color': kindColor[kind] } });
  }
  // Switch roles keep their own shades only without the shared palette (results draw one switch colour).
  if (!kinds.switch) {
    for (const [role, v] of Object.entries(ROLE_COLOR)) {
      s.push({ selector: `node[kind="switch"][role="${role}"]`, style: { 'background-color': c[v] } });
    }
  }
  s.push(
    { selector: 'node[kind="switch"][role="spine"]', style: { width: 52, height: 32, shape: 'octagon' } },
    { selector: 'node[kind="switch"][role="core"]', style: { width: 56, height: 34, shape: 'octagon' } });
  return s;
}

function groupStyles(c) {
  return [
    { selector: 'node[etype="group"]', style: {
      shape: 'round-rectangle', 'background-color': c['--fs-group'], 'background-opacity': 0.5,
      'border-width': 1, 'border-style': 'dashed', 'border-color': c['--fs-group-border'],
      'text-valign': 'top', 'text-halign': 'center', 'text-margin-y': -4, 'font-size': 12, 'font-weight': 'bold',
      'text-max-width': 400, padding: 14, 'text-background-opacity': 0,
    } },
    { selector: 'node[etype="group"][gkind="host"]', style: { 'border-style': 'solid' } },
    { selector: 'node[etype="group"][?collapsed]', style: {
      width: 'data(w)', height: 'data(h)', 'background-opacity': 1, 'border-width': 2, 'border-style': 'double',
      'border-color': c['--fs-group-border'], 'text-valign': 'center', 'text-wrap': 'wrap',
      'text-max-width': 'data(w)', 'font-size': 'data(fs)', 'font-weight': 'normal', 'text-margin-y': 0,
      'text-background-opacity': 0,
    } },
    { selector: 'node[etype="group"][?collapsed][gkind="rack"]', style: { shape: 'rectangle' } },
    // Devices and closed groups over the links, also links that only pass by (a tray's
    // uplink crossing the trays above it); an open group's box stays below.
    { selector: 'node[etype="node"], node[etype="group"][?collapsed]', style: { 'z-compound-depth': 'top' } },
  ];
}

function edgeStyles(c, large) {
  return [
    { selector: 'edge', style: {
      width: 'data(width)', 'line-color': 'data(color)', 'curve-style': large ? 'haystack' : 'bezier',
      opacity: large ? 0.35 : 0.85, 'haystack-radius': 0, 'font-size': 9, color: c['--fs-text'],
      'text-background-color': c['--fs-bg'], 'text-background-opacity': 0.85, 'text-background-padding': 1,
      'min-zoomed-font-size': 7, 'text-rotation': 'autorotate',
    } },
    { selector: 'edge[etype="agg"]', style: { 'line-style': 'solid', opacity: large ? 0.3 : 0.7 } },
    { selector: 'edge[?net]', style: { 'line-style': 'dashed', 'line-dash-pattern': [7, 4] } },
  ];
}

/** Selection, neighbourhood, problems and the connect ghost. */
function markStyles(c) {
  return [
    { selector: 'node:selected', style: { 'border-width': 3, 'border-color': c['--fs-accent'], 'border-style': 'solid' } },
    { selector: 'edge:selected', style: { 'line-color': c['--fs-accent'], width: 4, opacity: 1, 'z-index': 10 } },
    { selector: '.faded', style: { opacity: 0.12 } },
    { selector: 'node.nhood', style: { 'border-width': 3, 'border-color': c['--fs-accent'] } },
    { selector: 'edge.nhood', style: { opacity: 1, width: 3 } },
    { selector: 'node.problem', style: { 'border-width': 4, 'border-color': c['--fs-danger'], 'border-style': 'solid' } },
    { selector: 'edge.problem', style: { 'line-color': c['--fs-danger'], width: 5, 'line-style': 'dashed', opacity: 1 } },
    { selector: 'node.connect-source', style: { 'border-width': 4, 'border-color': c['--fs-accent'], 'border-style': 'double' } },
    { selector: '#__ghost', style: { width: 1, height: 1, opacity: 0, label: '', events: 'no' } },
    { selector: '#__ghost_edge', style: { 'line-style': 'dashed', 'line-color': c['--fs-accent'], width: 2, 'curve-style': 'straight', events: 'no' } },
  ];
}

/**
 * The stylesheet.
 * @param {object} o
 * @param {Object<string, string>} o.colors COLOR_NAMES -> colour (readColors)
 * @param {object} o.kinds #fs-style kinds (sharedKinds)
 * @param {boolean} o.large many elements shown: cheaper edges
 * @param {boolean} o.edgeLabels link labels on
 */
export function buildStyle({ colors, kinds, large, edgeLabels }) {
  const s = [...deviceStyles(colors, kinds, large), ...groupStyles(colors), ...edgeStyles(colors, large), ...markStyles(colors)];
  // Dashes in proportion to the line: a pod's bundle, thickened to be seen from afar, would
  // otherwise read as hatching.
  for (const w of [16, 64, 256, 1024]) s.push({ selector: `edge[?net][width >= ${w}]`, style: { 'line-dash-pattern': [2 * w, 1.2 * w] } });
  if (edgeLabels) {
    // A GPU's NVLinks into NVSwitches are labelled once, on the GPU ("NV18 3T"), not on
    // each crossing link (visible.js nvlinkFans).
    s.push({ selector: 'edge', style: { label: 'data(label)' } },
      { selector: 'edge[?fan]', style: { label: '' } },
      { selector: 'node[fanlabel]', style: { label: 'data(fanlabel)', 'text-wrap': 'wrap', 'text-max-width': 64 } });
  }
  return s;
}

// A stand-in editor state (static/js/editor/state.js shape) for unit tests of the commands: a real
// Model, ViewState and layout, and just enough of Cytoscape and the page for the commands to run
// and for the test to see what they selected and said (test-only).
import { Catalog } from '../../static/js/editor/catalog.js';
import { autoLayout } from '../../static/js/editor/layout.js';
import { Model } from '../../static/js/editor/model.js';
import { makeRepResolver } from '../../static/js/editor/visible.js';
import { ViewState } from '../../static/js/editor/viewstate.js';

export const CATALOG = new Catalog({ techs: {
  pcie5x16: { family: 'pcie', raw_gbps: 504, effective_gbps: 384, latency_ns: 100 },
  nvlink4x4: { family: 'nvlink', raw_gbps: 800, effective_gbps: 659.2 },
  'ib-ndr': { family: 'infiniband', raw_gbps: 400, effective_gbps: 400 },
  'upi-spr': { family: 'inter_socket', raw_gbps: 1000, effective_gbps: 900 },
  ddr5x8: { family: 'memory', raw_gbps: 2400, effective_gbps: 2000 },
} });

/**
 * @param {object} doc a fabricscope.topology/1 document
 * @param {[string, string][]} selected [etype, ref] of the selected canvas elements
 * @returns the state, with `selected` (what the commands select, as [kind, id]) and
 *   `toasts` (what they said)
 */
export function fakeEditor(doc, selected = [], { readonly = false } = {}) {
  const model = new Model(doc);
  const viewState = new ViewState();
  let auto = autoLayout(model);
  const picked = selected.map(([etype, ref]) => ({ data: (k) => ({ etype, ref })[k] }));
  const ed = {
    readonly, model, viewState, catalog: CATALOG, pointer: null,
    clip: { items: null, pastes: 0, placed: 0 }, hood: { hops: 0 },
    chrome: { toastTimer: null },
    selected: [], toasts: [],
  };
  ed.els = { toast: { set textContent(t) { ed.toasts.push(t); } } };
  ed.view = {
    posOf: (id) => model.position(id) || auto.get(id) || [0, 0],
    makeRepResolver: () => makeRepResolver(model, viewState),
    elementFor: (kind, id) => ({ select: () => ed.selected.push([kind, id]) }),
    relayout: () => { auto = autoLayout(model); },
    render: () => {},
  };
  ed.cy = {
    $: () => ({ forEach: (f) => picked.forEach(f), unselect: () => { picked.length = 0; }, length: picked.length }),
    extent: () => ({ x1: 0, x2: 1000, y1: 0, y2: 600 }),
    nodes: () => ({ forEach: () => {} }),
    elements: () => ({ not: () => ({}) }),
    stop: () => {},
    fit: () => {},
  };
  return ed;
}

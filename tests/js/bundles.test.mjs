// Unit tests of the link bundles of static/js/editor/view.js: the parallel links between two
// visible ends, one of them a collapsed group, draw as one edge labelled "8 × nvlink5x1 (…)";
// bundles follow the view state (viewstate.js) and never touch the document.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { Catalog } from '../../static/js/editor/catalog.js';
import { autoLayout } from '../../static/js/editor/layout.js';
import { Model } from '../../static/js/editor/model.js';
import { View } from '../../static/js/editor/view.js';
import { bundleLabel, bundleWidth, groupBox } from '../../static/js/editor/visible.js';
import { ViewState } from '../../static/js/editor/viewstate.js';
import { cluster } from './fixtures.mjs';
import { domain } from './fixtures_domain.mjs';

const CATALOG = new Catalog({ techs: {
  nvlink5x1: { family: 'nvlink', raw_gbps: 400, effective_gbps: 400 },
  'ib-ndr': { family: 'infiniband', raw_gbps: 400, effective_gbps: 400 },
  pcie5x16: { family: 'pcie', raw_gbps: 504, effective_gbps: 384 },
} });

/** The View's visible-set computation without Cytoscape or a DOM (computeVisible needs neither). */
function viewOf(doc, collapsed) {
  const model = new Model(doc);
  const viewState = new ViewState();
  viewState.setCollapsed(collapsed, true, (id) => !!model.group(id));
  const view = Object.assign(Object.create(View.prototype), { model, catalog: CATALOG, viewState, auto: autoLayout(model), colors: {}, kinds: {} });
  return { model, viewState, view };
}

const edges = (want) => [...want.values()].filter((w) => w.group === 'edges').map((w) => w.data);

describe('bundleLabel and bundleWidth', () => {
  it('names the one technology and the summed capacity', () => {
    assert.equal(bundleLabel(new Map([['nvlink5x1', 8]]), 3200), '8 × nvlink5x1 (3.2 Tb/s)');
    assert.equal(bundleLabel(new Map([['eth400', 1]]), 400), '1 × eth400 (400 Gb/s)');
  });

  it('lists mixed technologies, most first, and says the total', () => {
    assert.equal(bundleLabel(new Map([['pcie5x16', 2], ['nvlink5x1', 4]]), 2368), '6 links: 4 × nvlink5x1, 2 × pcie5x16 (2.4 Tb/s)');
    assert.equal(bundleLabel(new Map([['a', 1], ['b', 1], ['c', 1], ['d', 1]]), 400), '4 links: 1 × a, 1 × b, 1 × c, … (400 Gb/s)');
  });

  it('grows with the count, and stops growing', () => {
    assert.ok(bundleWidth(400, 8) > bundleWidth(400, 2) && bundleWidth(400, 2) > bundleWidth(400, 1));
    assert.equal(bundleWidth(400, 1e6), bundleWidth(400, 1e7));
  });
});

describe('View bundles', () => {
  const trays = ['d/t0', 'd/t1', 'd/t2', 'd/t3'];
  const switchTrays = ['d/s0', 'd/s1'];

  it('draws the 32 NVLinks of closed hosts and switch trays as 4 × 2 bundles of 4', () => {
    const { model, view } = viewOf(domain(), [...trays, ...switchTrays]);
    const es = edges(view.computeVisible());
    assert.equal(es.length, 8);                             // the PCIe links stay inside their host
    for (const e of es) {
      assert.equal(e.etype, 'agg');
      assert.equal(e.count, 4);                             // 2 GPUs × 2 chips
      assert.equal(e.label, '4 × nvlink5x1 (1.6 Tb/s)');
      assert.equal(e.net, 0);                               // NVLink: solid
      assert.equal(e.links.split(' ').length, 4);
    }
    assert.ok(!model.isDirty() && model.undoStack.length === 0);
  });

  it('bundles a closed host with an open switch tray per chip, and gives the links back when open', () => {
    const { viewState, view } = viewOf(domain(), ['d/t0']);
    let es = edges(view.computeVisible()).filter((e) => e.source === 'g:d/t0' || e.target === 'g:d/t0');
    assert.equal(es.length, 4);                             // one bundle per chip, 2 GPUs each
    assert.ok(es.every((e) => e.count === 2));
    viewState.setCollapsed(['d/t0'], false);
    es = edges(view.computeVisible());
    assert.ok(es.every((e) => e.etype === 'link'));
    assert.equal(es.filter((e) => e.tech === 'nvlink5x1').length, 32);
  });

  it('dashes network bundles (InfiniBand NIC → leaf) and thickens with the count', () => {
    const { view } = viewOf(cluster(2), ['h0', 'h1']);
    const es = edges(view.computeVisible());
    const toLeaf = es.filter((e) => e.etype === 'agg');
    assert.equal(toLeaf.length, 16);                        // 2 hosts × 8 rails, one NIC each
    assert.ok(toLeaf.every((e) => e.net === 1 && e.label === '1 × ib-ndr (400 Gb/s)'));
    const leafSpine = es.filter((e) => e.etype === 'link');
    assert.ok(leafSpine.length === 16 && leafSpine.every((e) => e.net === 1));
  });

  it('draws a closed one-row layer (no height laid out) growing upward, not over the row below', () => {
    const doc = { format: 'fabricscope.topology/1', name: 'row', groups: [{ id: 'top', kind: 'other' }], nodes: [], links: [] };
    for (let i = 0; i < 400; i += 1) doc.nodes.push({ id: `core${i}`, kind: 'switch', group: 'top', attrs: { role: 'core' } });
    const { view } = viewOf(doc, ['top']);
    const box = view.computeVisible().get('g:top');
    const y = view.auto.get('core0')[1];
    assert.ok(box.data.h > 1000, `${box.data.h}: a big box, its label read from afar`);
    assert.ok(box.position[1] + box.data.h / 2 <= y + 50, 'its bottom at most 50 px under the row');
    // The offset is in the data, so a drag released in place (canvas.js commitDrag) moves nothing.
    assert.equal(box.position[1] - view.groupCentre('top')[1], box.data.oy);
  });

  it('sizes a closed host with a device placed by hand from its devices, the others from their blocks', () => {
    const { model, view } = viewOf(cluster(3), ['h0', 'h1', 'h2']);
    const ids = (h) => model.childNodes.get(h);
    assert.ok(view.scene().blockBounds('h0/', ids('h0')));
    model.apply([model.opPos('h0/gpu0', [5000, 5000])], 'move');
    const scene = view.scene();
    assert.equal(scene.blockBounds('h0/', ids('h0')), null);
    assert.ok(scene.blockBounds('h1/', ids('h1')));
    const want = view.computeVisible();
    for (const h of ['h0', 'h1', 'h2']) {
      const box = groupBox(model, (id) => view.posOf(id), h);   // device by device
      assert.deepEqual(want.get(`g:${h}`).position, [box.cx, box.cy + (want.get(`g:${h}`).data.oy || 0)]);
    }
    model.undo();
    assert.ok(view.scene().blockBounds('h0/', ids('h0')));
  });
});

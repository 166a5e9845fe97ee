// Unit tests of static/js/results/slices.js (the data the result page posts to /figures/<kind>/).
// Run: node --test tests/js/   (no DOM). The server side of the same contract, with real engine
// results, is tests/designer/test_figure_slices.py.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { flowLabel, hostSlice, pathSlice, pct, scaleColor } from '../../static/js/results/slices.js';

/**
 * A path index of two flows (format: designer/figures/paths.py path_index):
 *
 *   f0: h0/gpu0 --pcie--> h0/sw0 --pcie--> h0/nic0 ==eth400==> leaf0   (bottleneck: the nic0 hop)
 *   f1: h1/gpu0 --pcie--> h1/nic0                                      (unroutable elsewhere: ok here)
 *
 * h0/sw0 is a capacity-bearing node (node_res). Tables hold strings f1 never uses, so a slice of
 * f0 must leave them out and renumber the rest.
 */
const INDEX = {
  nodes: ['h1/gpu0', 'h1/nic0', 'h0/gpu0', 'h0/sw0', 'h0/nic0', 'leaf0'],
  kinds: ['gpu', 'nic', 'gpu', 'pcie_switch', 'nic', 'switch'],
  hosts: ['h1', 'h1', 'h0', 'h0', 'h0', ''],
  patterns: ['other', 'ar'], classes: ['pcie-only', 'nic-fabric'], techs: ['pcie4x16', 'pcie5x16', 'eth400'],
  tiers: ['pcie', 'nic-leaf'],
  flows: [
    ['f1', 0, 0, 1, 0, 50.0, 1, null, -1, [0, 1], 1],
    ['f0', 1, 2, 5, 1, 100.0, 1, null, 3, [2, 3, 4, 5], 2],
  ],
  hops: { '0>1': 0, '2>3': 1, '3>4': 2, '4>5': 3 },
  res: [['h1/gpu0-nic0', 0, 0, 0.1, 50, 500], ['h0/gpu0-sw0', 1, 0, 0.2, 100, 500],
    ['h0/sw0-nic0', 1, 0, 0.2, 100, 500], ['h0/nic0-leaf0', 2, 1, 1.0, 400, 400], ['h0/sw0', 0, 0, 0.5, 50, 100]],
  node_res: { 3: 4 },
  listed: 2, total: 2,
};

/** Decode hop i of a (sliced) index's flow row into names, as the server's path_hops does. */
function hops(ix, row) {
  const ids = row[9];
  return ids.slice(1).map((v, k) => {
    const rec = ix.res[ix.hops[`${ids[k]}>${v}`]];
    return [ix.nodes[ids[k]], ix.nodes[v], rec[0], ix.techs[rec[1]], ix.tiers[rec[2]], rec[3]];
  });
}

describe('pathSlice', () => {
  it('keeps exactly what the flow references, renumbered, and decodes to the same hops', () => {
    const { flow, index } = pathSlice(INDEX, INDEX.flows[1]);
    assert.equal(flow, 'f0');
    assert.deepEqual(index.nodes, ['h0/gpu0', 'h0/sw0', 'h0/nic0', 'leaf0']);
    assert.deepEqual(index.kinds, ['gpu', 'pcie_switch', 'nic', 'switch']);
    assert.deepEqual(index.hosts, ['h0', 'h0', 'h0', '']);
    assert.deepEqual(index.patterns, ['ar']);
    assert.deepEqual(index.classes, ['nic-fabric']);
    assert.deepEqual([...index.techs].sort(), ['eth400', 'pcie4x16', 'pcie5x16']);
    assert.equal(index.flows.length, 1);
    assert.deepEqual(hops(index, index.flows[0]), hops(INDEX, INDEX.flows[1]));
    const [row] = index.flows;
    assert.equal(index.res[row[8]][0], 'h0/nic0-leaf0'); // the bottleneck survives renumbering
    assert.equal(index.res[index.node_res[1]][0], 'h0/sw0'); // node 1 of the slice is h0/sw0
    assert.equal(index.res.length, 4); // f1's resource is left out
  });

  it('keeps -1 (no class, no bottleneck) as -1', () => {
    const row = ['f2', 0, 0, 1, -1, 1.0, 0, 'no path', -1, [], 0];
    const { index } = pathSlice({ ...INDEX, flows: [row] }, row);
    assert.deepEqual(index.flows[0].slice(4, 10), [-1, 1.0, 0, 'no path', -1, []]);
    assert.deepEqual(index.classes, []);
  });
});

describe('hostSlice', () => {
  it('sends one host and its shape, re-indexed to shape 0', () => {
    const details = { shapes: [{ nodes: [['a', 'gpu', 0, 0]], links: [] }, { nodes: [['b', 'nic', 1, 0]], links: [] }],
      hosts: { h0: { s: 0, l: [], f: [] }, h1: { s: 1, l: [], f: ['b'] } } };
    assert.deepEqual(hostSlice(details, 'h1'),
      { host: 'h1', details: { shapes: [details.shapes[1]], hosts: { h1: { s: 0, l: [], f: ['b'] } } } });
  });
});

describe('labels and colours', () => {
  it('labels a flow for the picker', () => {
    assert.equal(flowLabel(INDEX, INDEX.flows[1]), 'f0  h0/gpu0 → leaf0  nic-fabric');
    assert.equal(flowLabel(INDEX, ['f3', 0, 0, 1, -1, 0, 0, 'x', -1, [], 0]), 'f3  h1/gpu0 → h1/nic0  unroutable');
  });

  it('interpolates the colour scale and clamps to it', () => {
    const scale = [[0, '#000000'], [0.5, '#ff0000'], [1, '#ffffff']];
    assert.equal(scaleColor(scale, 0), '#000000');
    assert.equal(scaleColor(scale, 0.25), '#800000');
    assert.equal(scaleColor(scale, 0.75), '#ff8080');
    assert.equal(scaleColor(scale, 7), '#ffffff');
    assert.equal(scaleColor(scale, null), '#000000');
  });

  it('formats utilization', () => {
    assert.equal(pct(0.42), '42%');
    assert.equal(pct(null), '—');
    assert.equal(pct(undefined), '—');
  });
});

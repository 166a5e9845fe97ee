// Unit tests of static/js/editor/layout.js (automatic positions): deterministic, every node placed,
// no two devices of a host on top of each other, host boxes disjoint, fabric tiers above the hosts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { autoLayout, DX, DY, hostBlock, hostTree } from '../../static/js/editor/layout.js';
import { Model } from '../../static/js/editor/model.js';
import { Positions } from '../../static/js/editor/positions.js';
import { groupBox } from '../../static/js/editor/visible.js';
import { cluster, host, tiny } from './fixtures.mjs';
import { domain } from './fixtures_domain.mjs';

const ROW_OF_KIND = ['nic', 'nvswitch', 'gpu', 'pcie_switch', 'cpu', 'memory'];

function boxOf(positions, ids) {
  const xs = ids.map((id) => positions.get(id)[0]);
  const ys = ids.map((id) => positions.get(id)[1]);
  return { x0: Math.min(...xs), x1: Math.max(...xs), y0: Math.min(...ys), y1: Math.max(...ys) };
}

/** No two positions closer than `min` px (Chebyshev distance: rows and columns are axis-aligned). */
function assertSpread(positions, ids, min) {
  for (let i = 0; i < ids.length; i += 1) {
    for (let j = i + 1; j < ids.length; j += 1) {
      const p = positions.get(ids[i]); const q = positions.get(ids[j]);
      const d = Math.max(Math.abs(p[0] - q[0]), Math.abs(p[1] - q[1]));
      assert.ok(d >= min, `${ids[i]} ${p} and ${ids[j]} ${q} are ${d} px apart (< ${min})`);
    }
  }
}

describe('hostBlock', () => {
  it('draws a host as its PCIe tree: rows NIC, NVSwitch, GPU + NVMe, PCIe, CPU, memory, DY apart', () => {
    const m = new Model(host('h0'));
    const { pos, width, height } = hostBlock(m, m.doc.nodes.map((n) => n.id));
    const rowY = (kind) => new Set(m.doc.nodes.filter((n) => n.kind === kind).map((n) => pos.get(n.id)[1]));
    ROW_OF_KIND.forEach((kind, r) => assert.deepEqual([...rowY(kind)], [r * DY], kind));
    assert.deepEqual([...rowY('nvme')], [2 * DY]);
    assert.equal(height, 5 * DY);
    // One column per leaf of the tree: each of the 4 switches serves 2 GPUs, 1 NVMe and 2 NICs.
    assert.equal(width, 20 * DX);
    assertSpread(pos, [...pos.keys()], Math.min(DX, DY));
  });

  it('centres the block on x = 0 and puts every switch over its devices, every CPU over its switches', () => {
    const m = new Model(host('h0'));
    const { pos } = hostBlock(m, m.doc.nodes.map((n) => n.id));
    const x = (id) => pos.get(`h0/${id}`)[0];
    const mean = (ids) => ids.reduce((a, id) => a + x(id), 0) / ids.length;
    // leaves in tree order: gpu0 gpu1 nvme0 nic0 nic1 | gpu2 gpu3 nvme1 nic2 nic3 | ... (20 columns)
    assert.deepEqual(['gpu0', 'gpu1', 'nvme0', 'nic0', 'nic1'].map(x), [-9.5, -8.5, -7.5, -6.5, -5.5].map((k) => k * DX));
    for (let p = 0; p < 4; p += 1) {
      assert.equal(x(`pcie${p}`), mean([`gpu${2 * p}`, `gpu${2 * p + 1}`, `nvme${p}`, `nic${2 * p}`, `nic${2 * p + 1}`]));
    }
    assert.equal(x('cpu0'), mean(['pcie0', 'pcie1']));
    assert.equal(x('cpu1'), mean(['pcie2', 'pcie3']));
    assert.equal(x('gpu0') + x('nic7'), 0); // symmetric about x = 0
  });

  it('draws each switch over the GPUs it serves, not in id order', () => {
    /*  gpu0  gpu1  gpu2  gpu3
     *    \  /        \  /
     *   pcie9       pcie1        (no CPU: each switch is the root of its own tree) */
    const m = new Model({
      nodes: [0, 1, 2, 3].map((g) => ({ id: `gpu${g}`, kind: 'gpu' }))
        .concat([{ id: 'pcie1', kind: 'pcie_switch' }, { id: 'pcie9', kind: 'pcie_switch' }]),
      links: [['gpu0', 'pcie9'], ['gpu1', 'pcie9'], ['gpu2', 'pcie1'], ['gpu3', 'pcie1']].map(([a, b]) => ({ id: `${a}-${b}`, a, b })),
    });
    const { pos } = hostBlock(m, m.doc.nodes.map((n) => n.id));
    const x = (id) => pos.get(id)[0];
    assert.equal(x('pcie9'), (x('gpu0') + x('gpu1')) / 2);
    assert.equal(x('pcie1'), (x('gpu2') + x('gpu3')) / 2);
  });

  it('puts each memory under the CPU socket it hangs off', () => {
    const m = new Model(host('h0'));
    const { pos } = hostBlock(m, m.doc.nodes.map((n) => n.id));
    assert.equal(pos.get('h0/mem0')[0], pos.get('h0/cpu0')[0]);
    assert.equal(pos.get('h0/mem1')[0], pos.get('h0/cpu1')[0]);
  });

  it('keeps NVSwitches off a NIC\'s PCIe link crossing their row (the H200 NCCL XML import)', () => {
    // tests/engine/data/import/dgx-h200-nccl-topo.xml, as hostlayout.py's test:
    //   [nic0]        [nic1]           row 0
    //   4 NVSwitches                   row 1, spread at 0.75 2.25 3.75 5.25
    //   gpu0 gpu1 | gpu2 gpu3          row 2
    //     [sw0]       [sw1]            row 3: nic0 (2.5) to sw0 (1.5) crosses row 1 at 2.17,
    //     [cpu0]──────[cpu1]           row 4  nic1 (5.5) to sw1 (4.5) at 5.17
    const kinds = new Map(Object.entries({ cpu0: 'cpu', cpu1: 'cpu', sw0: 'pcie_switch', sw1: 'pcie_switch',
      gpu0: 'gpu', gpu1: 'gpu', gpu2: 'gpu', gpu3: 'gpu', nic0: 'nic', nic1: 'nic',
      nvs0: 'nvswitch', nvs1: 'nvswitch', nvs2: 'nvswitch', nvs3: 'nvswitch' }));
    const links = [['sw0', 'cpu0'], ['gpu0', 'sw0'], ['gpu1', 'sw0'], ['nic0', 'sw0'], ['sw1', 'cpu1'], ['gpu2', 'sw1'],
      ['gpu3', 'sw1'], ['nic1', 'sw1'], ['cpu0', 'cpu1']];
    for (const g of ['gpu0', 'gpu1', 'gpu2', 'gpu3']) for (const n of ['nvs0', 'nvs1', 'nvs2', 'nvs3']) links.push([g, n]);
    const { pos, width } = hostTree(kinds, links);
    assert.deepEqual(['nvs0', 'nvs1', 'nvs2', 'nvs3'].map((n) => pos.get(n)), [[0.75, 1], [2.75, 1], [3.75, 1], [5.75, 1]]);
    assert.equal(width, 6);
    for (const [nic, sw] of [['nic0', 'sw0'], ['nic1', 'sw1']]) {
      const [xa, ra] = pos.get(nic); const [xb, rb] = pos.get(sw);
      const x = xa + ((xb - xa) * (1 - ra)) / (rb - ra);
      for (const n of ['nvs0', 'nvs1', 'nvs2', 'nvs3']) assert.ok(Math.abs(pos.get(n)[0] - x) >= 0.4, `${nic} through ${n}`);
    }
  });

  it('gives the same columns and rows as the result views (designer/figures/hostlayout.py)', () => {
    // The host of tests/designer/test_hostlayout.py, with its hand-checked numbers.
    const kinds = new Map(Object.entries({ cpu0: 'cpu', mem0: 'memory', sw0: 'pcie_switch', gpu0: 'gpu', gpu1: 'gpu',
      nic0: 'nic', nic1: 'nic', nvme0: 'nvme' }));
    const links = [['cpu0', 'mem0'], ['cpu0', 'sw0'], ['sw0', 'gpu0'], ['sw0', 'gpu1'], ['sw0', 'nic0'],
      ['cpu0', 'nvme0'], ['cpu0', 'nic1']];
    const { pos, width, rows } = hostTree(kinds, links);
    assert.deepEqual(Object.fromEntries(pos), {
      gpu0: [0.5, 1], gpu1: [1.5, 1], nic0: [2.5, 0], nvme0: [3.5, 1], nic1: [4.5, 0], sw0: [1.5, 2],
      cpu0: [(1.5 + 3.5 + 4.5) / 3, 3], mem0: [(1.5 + 3.5 + 4.5) / 3, 4],
    });
    assert.equal(width, 5);
    assert.equal(rows, 5);
    // DGX style: a socket under the root complexes it links.
    const dgx = hostTree(new Map(Object.entries({ cpu0: 'cpu', rc0: 'cpu', rc1: 'cpu', sw0: 'pcie_switch',
      sw1: 'pcie_switch', gpu0: 'gpu', gpu1: 'gpu' })),
    [['cpu0', 'rc0'], ['cpu0', 'rc1'], ['rc0', 'sw0'], ['rc1', 'sw1'], ['sw0', 'gpu0'], ['sw1', 'gpu1']],
    new Map([['cpu0', 'socket'], ['rc0', 'root_complex'], ['rc1', 'root_complex']]));
    assert.deepEqual([dgx.pos.get('gpu0'), dgx.pos.get('sw0'), dgx.pos.get('rc0'), dgx.pos.get('cpu0')],
      [[0.5, 0], [0.5, 1], [0.5, 2], [1, 3]]);
  });

  it('gives an empty host a zero-size block', () => {
    const m = new Model({});
    assert.deepEqual(hostBlock(m, []), { pos: new Map(), width: DX, height: 0 });
  });
});

describe('autoLayout', () => {
  it('places every node, on whole pixels', () => {
    const m = new Model(cluster(4));
    const pos = autoLayout(m);
    assert.equal(pos.size, m.doc.nodes.length);
    for (const [id, [x, y]] of pos) assert.ok(Number.isInteger(x) && Number.isInteger(y), `${id}: ${x}, ${y}`);
  });

  it('is deterministic: the same document gives the same positions, run after run', () => {
    const a = autoLayout(new Model(cluster(6)));
    const b = autoLayout(new Model(cluster(6)));
    assert.deepEqual([...a], [...b]);
    const m = new Model(cluster(6));
    assert.deepEqual([...autoLayout(m)], [...autoLayout(m)]);
  });

  it('ignores hand-placed positions (they are the view\'s business)', () => {
    const doc = cluster(2);
    const placed = { ...doc, layout: { positions: { 'h0/gpu0': [9999, -9999], leaf0: [1, 1] } } };
    assert.deepEqual([...autoLayout(new Model(placed))], [...autoLayout(new Model(doc))]);
  });

  it('keeps the devices of a host apart and host boxes disjoint', () => {
    const m = new Model(cluster(10));
    const pos = autoLayout(m);
    const boxes = [];
    for (const g of m.doc.groups) {
      const ids = m.descendantNodes(g.id);
      assertSpread(pos, ids, Math.min(DX, DY));
      boxes.push([g.id, boxOf(pos, ids)]);
    }
    for (let i = 0; i < boxes.length; i += 1) {
      for (let j = i + 1; j < boxes.length; j += 1) {
        const [ga, a] = boxes[i]; const [gb, b] = boxes[j];
        const apart = a.x1 < b.x0 || b.x1 < a.x0 || a.y1 < b.y0 || b.y1 < a.y0;
        assert.ok(apart, `host boxes ${ga} and ${gb} overlap`);
      }
    }
  });

  it('wraps many hosts into rows instead of one ribbon', () => {
    const m = new Model(cluster(32));
    const pos = autoLayout(m);
    const hostTops = new Set(m.doc.groups.map((g) => boxOf(pos, m.descendantNodes(g.id)).y0));
    // ceil(sqrt(2 * 32)) = 8 hosts per row -> 4 rows.
    assert.equal(hostTops.size, 4);
  });

  it('puts spines above leaves above the hosts', () => {
    const m = new Model(cluster(4, 3));
    const pos = autoLayout(m);
    const ys = (prefix) => new Set(m.doc.nodes.filter((n) => n.id.startsWith(prefix)).map((n) => pos.get(n.id)[1]));
    const [spineY] = ys('spine'); const [leafY] = ys('leaf');
    assert.equal(ys('spine').size, 1);
    assert.equal(ys('leaf').size, 1);
    const hostTop = Math.min(...m.doc.nodes.filter((n) => n.group).map((n) => pos.get(n.id)[1]));
    assert.ok(spineY < leafY && leafY < hostTop, `spine ${spineY}, leaf ${leafY}, hosts from ${hostTop}`);
    assertSpread(pos, m.doc.nodes.filter((n) => !n.group).map((n) => n.id), 90);
  });

  it('lays out a rack with its host, and a lone fabric switch above it', () => {
    const m = new Model(tiny());
    const pos = autoLayout(m);
    assert.equal(pos.size, 3);
    assert.ok(pos.get('leaf0')[1] < pos.get('h0/gpu0')[1]);
    assert.equal(pos.get('h0/gpu0')[1], pos.get('h0/gpu1')[1]);
    assert.equal(pos.get('h0/gpu1')[0] - pos.get('h0/gpu0')[0], DX);
  });

  it('lays out nothing for an empty document', () => {
    assert.equal(autoLayout(new Model({})).size, 0);
  });
});


describe('autoLayout host shapes', () => {
  it('lays every host of one shape out as hostBlock would, and a changed host its own way', () => {
    const doc = cluster(6);
    // h5 loses a GPU: another shape, laid out on its own.
    doc.nodes = doc.nodes.filter((n) => n.id !== 'h5/gpu7');
    doc.links = doc.links.filter((l) => l.a !== 'h5/gpu7' && l.b !== 'h5/gpu7');
    const m = new Model(doc);
    const pos = autoLayout(m);
    for (const h of ['h0', 'h3', 'h5']) {
      const ids = m.doc.nodes.filter((n) => n.group === h).map((n) => n.id);
      const block = hostBlock(m, ids);
      const [x0, y0] = pos.get(ids[0]);
      const [bx, by] = block.pos.get(ids[0]);
      for (const id of ids) {
        const [bx1, by1] = block.pos.get(id);
        const [x, y] = pos.get(id); // positions are rounded to whole px: within 1 px
        assert.ok(Math.abs(x - (x0 - bx + bx1)) <= 1 && Math.abs(y - (y0 - by + by1)) <= 1, `${h}: ${id}`);
      }
    }
  });
});

describe('Positions', () => {
  const block = { ids: ['h1/a', 'h1/b'], pts: [[-10, 0], [10.4, 5]], prefix: 'h1/', local: ['a', 'b'], index: new Map([['a', 0], ['b', 1]]) };

  it('reads like the Map of every position, in the order things were placed', () => {
    const pos = new Positions().set('leaf0', [0, -100]);
    pos.setBlock(block, 100, 50);
    pos.set('spine0', [5, -200]);
    const eager = new Map([['leaf0', [0, -100]], ['h1/a', [90, 50]], ['h1/b', [110, 55]], ['spine0', [5, -200]]]);
    assert.deepEqual([...pos], [...eager]);
    assert.equal(pos.size, 4);
    assert.deepEqual(pos.get('h1/b'), [110, 55]);
    assert.ok(pos.has('h1/a') && !pos.has('h1/c') && !pos.has('h2/a') && !pos.has('x'));
    assert.equal(pos.blocks.size, 1); // kept whole: no position built until asked
  });

  it('lets a device of a block be placed again, keeping its place, as a Map does', () => {
    const pos = new Positions();
    pos.setBlock(block, 0, 0);
    pos.set('h1/b', [7, 7]);
    assert.deepEqual([...pos], [['h1/a', [-10, 0]], ['h1/b', [7, 7]]]);
    assert.equal(pos.size, 2);
  });

  it('places a block without local ids, or a second one of a prefix, device by device', () => {
    const pos = new Positions();
    pos.setBlock({ ids: ['x', 'y'], pts: [[0, 0], [1, 1]] }, 0, 0);
    pos.setBlock(block, 0, 0);
    pos.setBlock(block, 100, 0);
    assert.equal(pos.blocks.size, 1);
    assert.deepEqual(pos.get('x'), [0, 0]);
    assert.deepEqual(pos.get('h1/a'), [90, 0]); // the later placement wins, as a Map's set
  });

  it('finds the devices of a host whose id starts with "/" or holds one', () => {
    const pos = new Positions();
    for (const prefix of ['/h0/', 'pod0/h1/']) pos.setBlock({ ...block, ids: ['a', 'b'].map((x) => prefix + x), prefix }, 0, 0);
    assert.deepEqual(pos.get('/h0/b'), [10, 5]);
    assert.deepEqual(pos.get('pod0/h1/a'), [-10, 0]);
  });

  it('answers nothing, without throwing, for an id that is no string (an unchecked import)', () => {
    const pos = new Positions();
    pos.setBlock(block, 0, 0);
    assert.equal(pos.get(undefined), undefined);
    assert.equal(pos.has(7), false);
  });

  it('places a block device by device when one of its devices was placed already', () => {
    const pos = new Positions().set('h1/b', [1, 1]);
    pos.setBlock(block, 0, 0);
    assert.equal(pos.blocks.size, 0);
    assert.deepEqual([...pos], [['h1/b', [10, 5]], ['h1/a', [-10, 0]]]); // a Map's order and values
  });

  it('reads a block\'s bounds at once, as its devices\' rounded positions give them', () => {
    const pos = new Positions();
    pos.setBlock(block, 100.3, 50.5);
    const each = ['h1/a', 'h1/b'].map((id) => pos.get(id));
    assert.deepEqual(pos.blockBounds('h1/', ['h1/a', 'h1/b']), {
      x0: Math.min(...each.map((p) => p[0])), x1: Math.max(...each.map((p) => p[0])),
      y0: Math.min(...each.map((p) => p[1])), y1: Math.max(...each.map((p) => p[1])) });
    assert.equal(pos.blockBounds('h1/', ['h1/b', 'h1/a']), null);   // not the block's devices
    assert.equal(pos.blockBounds('h1/', ['h1/a']), null);
    assert.equal(pos.blockBounds('h2/', ['h1/a', 'h1/b']), null);
    pos.set('h1/b', [1000, 1000]);                                  // placed again on its own
    assert.equal(pos.blockBounds('h1/', ['h1/a', 'h1/b']), null);
  });

  it('reads a nested host\'s block one by one when an outer host\'s block answers for its ids', () => {
    const pos = new Positions();
    const inner = { ids: ['a/b/c'], pts: [[0, 0]], prefix: 'a/b/', local: ['c'], index: new Map([['c', 0]]) };
    const outer = { ids: ['a/b/c'], pts: [[500, 500]], prefix: 'a/', local: ['b/c'], index: new Map([['b/c', 0]]) };
    pos.setBlock(inner, 0, 0);
    assert.deepEqual(pos.blockBounds('a/b/', ['a/b/c']), { x0: 0, x1: 0, y0: 0, y1: 0 });
    pos.setBlock(outer, 0, 0);
    assert.deepEqual(pos.get('a/b/c'), [500, 500]);                 // the outer block answers first
    assert.equal(pos.blockBounds('a/b/', ['a/b/c']), null);
  });

  it('gives a collapsed group the same box from its hosts\' blocks as device by device', () => {
    const model = new Model(cluster(6));
    const pos = autoLayout(model);
    const posOf = (id) => pos.get(id) || [0, 0];
    const blockBounds = (prefix, ids) => pos.blockBounds(prefix, ids);
    let fast = 0;
    for (const g of model.doc.groups) {
      assert.deepEqual(groupBox(model, posOf, g.id, undefined, blockBounds), groupBox(model, posOf, g.id));
      if (g.kind === 'host' && blockBounds(`${g.id}/`, model.childNodes.get(g.id))) fast += 1;
    }
    assert.equal(fast, 6);
  });

  it('keeps the hosts of a generated cluster as blocks', () => {
    const pos = autoLayout(new Model(cluster(6)));
    assert.equal(pos.blocks.size, 6);
    for (const [id, p] of pos) assert.deepEqual(pos.get(id), p);
  });
});

describe('autoLayout of an NVLink-switched domain', () => {
  const m = new Model(domain());
  const pos = autoLayout(m);
  const box = (g) => boxOf(pos, m.descendantNodes(g));
  const centreX = (g) => { const b = box(g); return (b.x0 + b.x1) / 2; };

  it('puts the hosts in two columns flanking a column of switch trays', () => {
    assert.equal(pos.size, m.doc.nodes.length);
    assert.equal(centreX('d/t0'), centreX('d/t1'));       // left column: the first half, in order
    assert.equal(centreX('d/t2'), centreX('d/t3'));       // right column
    assert.ok(box('d/t0').y1 < box('d/t1').y0);           // t1 under t0
    for (const s of ['d/s0', 'd/s1']) {
      assert.ok(box(s).x0 > box('d/t0').x1 + 200 && box(s).x1 < box('d/t2').x0 - 200, `${s} between the columns, room for the links`);
      assert.equal(centreX(s), (centreX('d/t0') + centreX('d/t2')) / 2);
    }
  });

  it('sets switch tray i level with host row i and spreads its chips across the column', () => {
    for (let i = 0; i < 2; i += 1) {
      const row = box(`d/t${i}`);
      const s = box(`d/s${i}`);
      assert.equal(s.y0, s.y1);                            // the chips of a tray side by side
      assert.equal(s.y0, Math.round((row.y0 + row.y1) / 2));
      assert.ok(s.x1 - s.x0 >= 2 * DX, `${s.x1 - s.x0} px: a collapsed tray is wide enough to label`);
    }
  });

  it('keeps each host drawn as its PCIe tree (hostBlock), moved as a whole', () => {
    const ids = m.descendantNodes('d/t3');
    const block = hostBlock(m, ids);
    const [dx, dy] = [pos.get(ids[0])[0] - block.pos.get(ids[0])[0], pos.get(ids[0])[1] - block.pos.get(ids[0])[1]];
    for (const id of ids) assert.deepEqual(pos.get(id), [block.pos.get(id)[0] + dx, block.pos.get(id)[1] + dy], id);
  });

  it('leaves a group with any other kind of subgroup in the ordinary row of hosts', () => {
    const other = new Model(domain('storage'));
    const p = autoLayout(other);
    const ys = ['d/t0', 'd/t1', 'd/t2', 'd/t3'].map((h) => boxOf(p, other.descendantNodes(h)).y0);
    assert.deepEqual(new Set(ys).size, 1);
  });
});

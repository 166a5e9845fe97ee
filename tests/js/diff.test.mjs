// Unit tests of static/js/editor/diff.js: the patch a save sends instead of the whole document,
// computed from real Model edits, and applyPatch() (the server's result order).
// Run: node --test tests/js/
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { applyPatch, diffDocuments, sameJSON, saveBody } from '../../static/js/editor/diff.js';
import { clone, Model } from '../../static/js/editor/model.js';
import { cluster, host } from './fixtures.mjs';

const ids = (items) => items.map((x) => x.id).sort();

/** Same items by id and same top-level fields, whatever the order of the items. */
function assertSameDocument(a, b) {
  for (const key of ['nodes', 'links', 'groups']) {
    const byId = (d) => new Map((d[key] || []).map((x) => [x.id, x]));
    const [ma, mb] = [byId(a), byId(b)];
    assert.deepEqual([...ma.keys()].sort(), [...mb.keys()].sort(), key);
    for (const [id, item] of ma) assert.ok(sameJSON(item, mb.get(id)), `${key} ${id}`);
  }
  const rest = (d) => Object.fromEntries(Object.entries(d).filter(([k]) => !['nodes', 'links', 'groups'].includes(k)));
  assert.deepEqual(rest(a), rest(b));
}

/** A model on a 2-host cluster (h0, h1; leaf0..7; spine0..1) and its saved form. */
function edited() {
  const m = new Model(cluster(2));
  return { m, base: m.toJSON() };
}

describe('diffDocuments', () => {
  it('a no-op gives an empty patch, also after an edit and its undo', () => {
    const { m, base } = edited();
    assert.deepEqual(diffDocuments(base, m.toJSON()), {});
    m.apply(m.opsDelete({ nodes: ['h0/nvme0'] }), 'delete');
    m.undo();
    assert.deepEqual(diffDocuments(base, m.toJSON()), {});
  });

  it('key order inside an item is not a change', () => {
    const base = { name: 'a', nodes: [{ id: 'g', kind: 'gpu', attrs: { x: 1, y: 2 } }], links: [], groups: [] };
    const cur = { groups: [], links: [], nodes: [{ attrs: { y: 2, x: 1 }, kind: 'gpu', id: 'g' }], name: 'a' };
    assert.deepEqual(diffDocuments(base, cur), {});
  });

  it('adding an NVMe and its link: two adds, nothing else', () => {
    const { m, base } = edited();
    const nvme = { id: 'h0/nvme9', kind: 'nvme', group: 'h0' };
    const link = { id: 'h0/nvme9-pcie0', a: 'h0/nvme9', b: 'h0/pcie0', tech: 'pcie4x4' };
    m.apply([m.opAdd('node', nvme), m.opAdd('link', link)], 'add nvme');
    assert.deepEqual(diffDocuments(base, m.toJSON()), { nodes: { add: [nvme] }, links: { add: [link] } });
  });

  it('deleting a device removes it and its links by id', () => {
    const { m, base } = edited();
    m.apply(m.opsDelete({ nodes: ['h1/nvme2'] }), 'delete');
    assert.deepEqual(diffDocuments(base, m.toJSON()), { nodes: { remove: ['h1/nvme2'] }, links: { remove: ['h1/nvme2-pcie2'] } });
  });

  it('an attribute edit is one whole-item update', () => {
    const { m, base } = edited();
    const before = m.node('h0/gpu3');
    const after = { ...clone(before), attrs: { ...before.attrs, model: 'H200' } };
    m.apply([m.opUpdate('node', before, after)], 'edit');
    assert.deepEqual(diffDocuments(base, m.toJSON()), { nodes: { update: [after] } });
  });

  it('renaming a node: remove old id, add new one, update its links; groups and fields too', () => {
    const { m, base } = edited();
    m.apply(m.opsRenameNode('h1/gpu0', 'h1/gpuX'), 'rename');
    const extra = host('h2');
    m.apply([...extra.groups.map((g) => m.opAdd('group', g))], 'add group');
    m.doc.name = 'renamed';
    const cur = m.toJSON();
    const patch = diffDocuments(base, cur);
    assert.deepEqual(patch.nodes.remove, ['h1/gpu0']);
    assert.deepEqual(ids(patch.nodes.add), ['h1/gpuX']);
    // the GPU's 4 NVLinks and 1 PCIe link keep their ids and change an end
    assert.equal(patch.links.update.length, 5);
    assert.ok(patch.links.update.every((l) => l.a === 'h1/gpuX' || l.b === 'h1/gpuX'));
    assert.deepEqual(patch.groups, { add: [extra.groups[0]] });
    assert.equal(patch.name, 'renamed');
    assertSameDocument(applyPatch(base, patch), cur);
  });

  it('a top-level field that disappears is sent as null; an item without id gives no patch', () => {
    const base = { name: 'a', fabric: { kind: 'rail' }, nodes: [], links: [], groups: [] };
    assert.deepEqual(diffDocuments(base, { name: 'a', nodes: [], links: [], groups: [] }), { fabric: null });
    assert.equal(diffDocuments(base, { ...base, links: [{ a: 'x', b: 'y' }] }), null);
    assert.equal(diffDocuments(base, { ...base, nodes: [{ id: 'g' }, { id: 'g' }] }), null);
  });
});

describe('applyPatch', () => {
  it('keeps the base order, appends adds, leaves the base untouched', () => {
    const base = { name: 'a', nodes: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], links: [], groups: [] };
    const frozen = clone(base);
    const out = applyPatch(base, { nodes: { remove: ['a'], update: [{ id: 'c', kind: 'gpu' }], add: [{ id: 'd' }] }, name: null });
    assert.deepEqual(out.nodes, [{ id: 'b' }, { id: 'c', kind: 'gpu' }, { id: 'd' }]);
    assert.equal('name' in out, false);
    assert.deepEqual(base, frozen);
  });
});

describe('saveBody', () => {
  it('a one-device edit of a 64-host cluster posts a patch far smaller than the document', () => {
    const m = new Model(cluster(64));
    const base = m.toJSON();
    m.apply([m.opAdd('node', { id: 'h5/nvme9', kind: 'nvme', group: 'h5' })], 'add');
    const out = saveBody(base, m.toJSON(), 3, 'one nvme');
    assert.equal(out.kind, 'patch');
    assert.deepEqual(out.body, { patch: { nodes: { add: [{ id: 'h5/nvme9', kind: 'nvme', group: 'h5' }] } }, base_revision: 3, message: 'one nvme' });
    assert.equal(out.bytes, JSON.stringify(out.body).length);
    assert.ok(out.bytes * 1000 < JSON.stringify(base).length, `${out.bytes} bytes`);
  });

  it('sends the whole document when the patch would be larger, or there is no base revision', () => {
    // everything replaced: the patch lists every removed id on top of the new document's items
    const big = cluster(2);
    const other = { format: 'fabricscope.topology/1', name: 'other', ...host('x') };
    const replaced = saveBody(big, other, 4);
    assert.equal(replaced.kind, 'document');
    assert.deepEqual(replaced.body.document, other);
    assert.ok(JSON.stringify({ patch: diffDocuments(big, other), base_revision: 4, message: '' }).length > replaced.bytes);
    assert.equal(saveBody(null, big, 0).kind, 'document');
    assert.equal(saveBody(big, big, 0).kind, 'document');
    assert.equal(saveBody(big, { ...big, links: [{ a: 'x', b: 'y' }] }, 2).kind, 'document');
  });
});

describe('snapshots share items, and the diff of two snapshots is the diff of two copies', () => {
  /** A run of edits of every kind, each followed by a check: the patch between the last saved
   * snapshot and the current one equals the patch between deep copies of both. */
  it('over renames, deletes, adds, attribute edits, moves, undo and redo', () => {
    const m = new Model(cluster(3));
    let saved = m.snapshot();
    let savedCopy = m.toJSON();
    const steps = [
      () => m.apply([m.opAdd('node', { id: 'h0/nvme9', kind: 'nvme', group: 'h0' })], 'add'),
      () => m.apply(m.opsDelete({ nodes: ['h1/nvme2'] }), 'delete'),
      () => { const b = m.node('h2/gpu1'); m.apply([m.opUpdate('node', b, { ...clone(b), attrs: { label: 'x' } })], 'edit'); },
      () => m.apply(m.opsRenameNode('h0/gpu0', 'h0/gpuZ'), 'rename'),
      () => m.apply([m.opPos('h0/gpu1', [5, 6])], 'move'),
      () => m.undo(),
      () => m.redo(),
      () => m.apply(m.opsDelete({ nodes: ['h2/gpu7'] }), 'delete last host gpu'),
    ];
    for (const [n, step] of steps.entries()) {
      step();
      const shared = diffDocuments(saved, m.snapshot());
      assert.deepEqual(shared, diffDocuments(savedCopy, m.toJSON()), `step ${n}`);
      assert.deepEqual(JSON.parse(JSON.stringify(saved)), savedCopy, `the saved snapshot is unchanged after step ${n}`);
      if (n % 3 === 2) { saved = m.snapshot(); savedCopy = m.toJSON(); }   // a save now and then
    }
  });

  it('a snapshot holds the model items (no copy), toJSON copies them', () => {
    const m = new Model(cluster(1));
    assert.equal(m.snapshot().nodes[0], m.doc.nodes[0]);
    assert.notEqual(m.toJSON().nodes[0], m.doc.nodes[0]);
    assert.deepEqual(m.toJSON(), JSON.parse(JSON.stringify(m.snapshot())));
  });
});

// Unit tests of static/js/editor/model.js (document <-> model, edits, undo/redo, dirty state)
// and of its separation from the view state (viewstate.js): collapsing is not an edit.
// Run: node --test tests/js/   (no DOM: the model is plain JS).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { clone, ID_PREFIX, KINDS, Model, naturalCompare, normalizeDocument } from '../../static/js/editor/model.js';
import { ViewState } from '../../static/js/editor/viewstate.js';
import { cluster, host, tiny } from './fixtures.mjs';

/** Every edit's invariant: undo restores the document exactly, redo re-applies it exactly. */
function assertUndoRedo(m, ops, label) {
  const before = clone(m.doc);
  assert.equal(m.apply(ops, label), true);
  const after = clone(m.doc);
  assert.equal(m.undo(), label);
  assert.deepEqual(m.doc, before);
  assert.equal(m.redo(), label);
  assert.deepEqual(m.doc, after);
}

describe('normalizeDocument', () => {
  it('fills the format, name, collections and layout without touching its input', () => {
    const input = { nodes: [{ id: 'a', kind: 'gpu' }] };
    const doc = normalizeDocument(input);
    assert.deepEqual(doc, {
      format: 'fabricscope.topology/1', name: 'untitled', groups: [], nodes: [{ id: 'a', kind: 'gpu' }], links: [],
      layout: { positions: {}, collapsed: [] },
    });
    assert.deepEqual(input, { nodes: [{ id: 'a', kind: 'gpu' }] });
    doc.nodes[0].id = 'b';
    assert.equal(input.nodes[0].id, 'a');
  });

  it('replaces malformed parts (null document, non-list collections, non-object layout)', () => {
    assert.deepEqual(normalizeDocument(null).nodes, []);
    const doc = normalizeDocument({ name: '', nodes: 'x', links: {}, groups: 3, layout: { positions: [], collapsed: 'h0' } });
    assert.equal(doc.name, '');
    assert.deepEqual([doc.nodes, doc.links, doc.groups], [[], [], []]);
    assert.deepEqual(doc.layout.collapsed, []);
    assert.equal(typeof doc.layout.positions, 'object');
  });
});

describe('constants and helpers', () => {
  it('has an id prefix for every node kind', () => {
    for (const k of KINDS) assert.ok(ID_PREFIX[k], k);
  });

  it('compares ids naturally (gpu2 before gpu10)', () => {
    assert.deepEqual(['h0/gpu10', 'h0/gpu2', 'h0/gpu1'].sort(naturalCompare), ['h0/gpu1', 'h0/gpu2', 'h0/gpu10']);
  });
});

describe('Model queries', () => {
  it('indexes nodes, links, groups and the group tree', () => {
    const m = new Model(tiny());
    assert.equal(m.node('h0/gpu0').kind, 'gpu');
    assert.equal(m.link('h0/gpu0-gpu1').a, 'h0/gpu0');
    assert.deepEqual(m.linksOf('h0/gpu1'), ['h0/gpu0-gpu1']);
    assert.deepEqual(m.linksOf('leaf0'), []);
    assert.deepEqual(m.ancestors('h0'), ['h0', 'r0']);
    assert.deepEqual(m.descendantGroups('r0'), ['h0']);
    assert.deepEqual(m.descendantNodes('r0').sort(), ['h0/gpu0', 'h0/gpu1']);
    assert.equal(m.hostOf('h0/gpu0'), 'h0');
    assert.equal(m.hostOf('leaf0'), null);
    assert.equal(m.hostOf('nope'), null);
  });

  it('survives a group cycle in the document (ancestors stop)', () => {
    const m = new Model({ groups: [{ id: 'a', parent: 'b' }, { id: 'b', parent: 'a' }] });
    assert.deepEqual(m.ancestors('a'), ['a', 'b']);
  });

  it('counts a DGX-like host as 32 nodes and 59 links', () => {
    const m = new Model(host('h0'));
    assert.equal(m.doc.nodes.length, 32);
    assert.equal(m.doc.links.length, 59);
    assert.equal(m.linksOf('h0/gpu0').length, 4 + 1);
  });
});

describe('ids', () => {
  it('gives the next free id shaped like the base, among nodes and groups', () => {
    const m = new Model(tiny());
    assert.equal(m.uniqueId('h0/gpu0'), 'h0/gpu2');
    assert.equal(m.uniqueId('h0'), 'h1');
    assert.equal(m.uniqueId('r0'), 'r1');
    assert.equal(m.uniqueId('free'), 'free');
    assert.equal(m.uniqueId('leaf'), 'leaf');
    assert.equal(m.uniqueId('h0/gpu0', new Set(['h0/gpu2'])), 'h0/gpu3');
  });

  it('names new nodes by kind (or switch role) inside their group', () => {
    const m = new Model(tiny());
    assert.equal(m.newNodeId('gpu', 'h0'), 'h0/gpu2');
    assert.equal(m.newNodeId('pcie_switch', 'h0'), 'h0/pcie0');
    assert.equal(m.newNodeId('switch', null, 'leaf'), 'leaf1');
    assert.equal(m.newNodeId('switch', null), 'sw0');
  });

  it('names links "a-b" without b\'s group prefix when both share a group (docs/FORMATS.md, Topology document)', () => {
    const m = new Model(tiny());
    assert.equal(m.newLinkId('h0/gpu0', 'h0/gpu1'), 'h0/gpu0-gpu1~2');
    assert.equal(m.newLinkId('h0/gpu1', 'leaf0'), 'h0/gpu1-leaf0');
    assert.equal(m.uniqueLinkId('x', new Set(['x', 'x~2'])), 'x~3');
  });
});

describe('edits, undo and redo', () => {
  it('adds a node with its position as one undoable step', () => {
    const m = new Model(tiny());
    const events = [];
    m.on((e) => events.push(e));
    const node = { id: 'h0/nic0', kind: 'nic', group: 'h0' };
    assertUndoRedo(m, [m.opAdd('node', node), m.opPos('h0/nic0', [10.4, 20.6])], 'add h0/nic0');
    assert.deepEqual(m.node('h0/nic0'), node);
    assert.deepEqual(m.position('h0/nic0'), [10, 21]);
    assert.deepEqual(m.descendantNodes('h0').sort(naturalCompare), ['h0/gpu0', 'h0/gpu1', 'h0/nic0']);
    assert.deepEqual(events.map((e) => [e.type, e.label, !!e.undo, !!e.redo]),
      [['change', 'add h0/nic0', false, false], ['change', 'add h0/nic0', true, false], ['change', 'add h0/nic0', false, true]]);
  });

  it('ignores empty steps and clears redo on a new edit', () => {
    const m = new Model(tiny());
    assert.equal(m.apply([null, undefined], 'nothing'), false);
    assert.equal(m.canUndo(), false);
    m.apply([m.opAdd('node', { id: 'a', kind: 'gpu' })], 'a');
    m.undo();
    assert.equal(m.canRedo(), true);
    m.apply([m.opAdd('node', { id: 'b', kind: 'gpu' })], 'b');
    assert.equal(m.canRedo(), false);
    assert.equal(m.redo(), null);
    assert.equal(m.undo(), 'b');
    assert.equal(m.undo(), null);
  });

  it('deletes a node with its links and position; undo puts it back at its index', () => {
    const m = new Model(tiny());
    m.apply([m.opPos('h0/gpu0', [5, 5])], 'place');
    const ops = m.opsDelete({ nodes: ['h0/gpu0'] });
    assert.deepEqual(ops.map((op) => [op.t, op.id]), [['link', 'h0/gpu0-gpu1'], ['node', 'h0/gpu0'], ['pos', 'h0/gpu0']]);
    assertUndoRedo(m, ops, 'delete');
    assert.equal(m.node('h0/gpu0'), undefined);
    assert.equal(m.doc.links.length, 0);
    assert.equal(m.position('h0/gpu0'), null);
    m.undo();
    assert.equal(m.doc.nodes[0].id, 'h0/gpu0');
  });

  it('deletes a group with everything inside it, children before parents', () => {
    const m = new Model(tiny());
    const ops = m.opsDelete({ groups: ['r0', 'missing'] });
    const groupOps = ops.filter((op) => op.t === 'group').map((op) => op.id);
    assert.deepEqual(groupOps, ['h0', 'r0']);
    assertUndoRedo(m, ops, 'delete rack');
    assert.deepEqual(m.doc.groups, []);
    assert.deepEqual(m.doc.nodes.map((n) => n.id), ['leaf0']);
  });

  it('renames a node; its links and position follow', () => {
    const m = new Model(tiny());
    m.apply([m.opPos('h0/gpu1', [1, 2])], 'place');
    assertUndoRedo(m, m.opsRenameNode('h0/gpu1', 'h0/gpu7'), 'rename');
    assert.equal(m.node('h0/gpu1'), undefined);
    assert.equal(m.doc.nodes[1].id, 'h0/gpu7');
    assert.equal(m.link('h0/gpu0-gpu1').b, 'h0/gpu7');
    assert.deepEqual(m.linksOf('h0/gpu7'), ['h0/gpu0-gpu1']);
    assert.deepEqual(m.position('h0/gpu7'), [1, 2]);
    assert.equal(m.position('h0/gpu1'), null);
  });

  it('updates a link and document metadata', () => {
    const m = new Model(tiny());
    const l = m.link('h0/gpu0-gpu1');
    assertUndoRedo(m, [m.opUpdate('link', l, { ...l, capacity_gbps: 256 })], 'capacity');
    assert.equal(m.link('h0/gpu0-gpu1').capacity_gbps, 256);
    assertUndoRedo(m, [{ t: 'meta', key: 'name', before: m.doc.name, after: 'renamed' }], 'rename document');
    assert.equal(m.doc.name, 'renamed');
  });

  it('replaces the whole document as one step ("doc" op)', () => {
    const m = new Model(tiny());
    const next = normalizeDocument(host('h9'));
    assertUndoRedo(m, [{ t: 'doc', id: '', before: clone(m.doc), after: next }], 'import');
    assert.equal(m.doc.nodes.length, 32);
    assert.equal(m.hostOf('h9/gpu3'), 'h9');
  });

  it('refuses to update something that is not there', () => {
    const m = new Model(tiny());
    assert.throws(() => m.apply([m.opUpdate('node', { id: 'ghost' }, { id: 'ghost', kind: 'gpu' })], 'x'), /model: no node ghost/);
  });

  it('makes no position op for an unchanged or absent position', () => {
    const m = new Model(tiny());
    assert.equal(m.opPos('h0/gpu0', null), null);
    m.apply([m.opPos('h0/gpu0', [3, 4])], 'place');
    assert.equal(m.opPos('h0/gpu0', [3, 4]), null);
    assert.deepEqual(m.opPos('h0/gpu0', [3.6, 4]).after, [4, 4]);
  });

  it('keeps at most 500 undo steps', () => {
    const m = new Model(tiny());
    for (let i = 0; i < 510; i += 1) m.apply([m.opPos('leaf0', [i, 0])], `move ${i}`);
    assert.equal(m.undoStack.length, 500);
    assert.equal(m.undoStack[0].label, 'move 10');
  });
});

describe('collapse is not an edit', () => {
  it('collapses known groups without dirtying the document or adding an undo step', () => {
    const m = new Model(cluster(3));
    const vs = new ViewState();
    const docBefore = clone(m.doc);
    let collapses = 0;
    let modelEvents = 0;
    vs.on((e) => { if (e.type === 'collapse') collapses += 1; });
    m.on(() => { modelEvents += 1; });
    const known = (id) => !!m.group(id);
    assert.equal(vs.setCollapsed(['h2', 'h0', 'nope'], true, known), true);
    assert.deepEqual([...vs.collapsed].sort(), ['h0', 'h2']);
    assert.ok(vs.isCollapsed('h2') && !vs.isCollapsed('h1') && !vs.isCollapsed('nope'));
    assert.equal(vs.setCollapsed(['h0'], true, known), false);
    assert.equal(vs.setCollapsed(['h0', 'h2'], false, known), true);
    assert.equal(collapses, 2);
    // The document, its undo history and its dirty flag did not see any of it.
    assert.equal(modelEvents, 0);
    assert.deepEqual(m.doc, docBefore);
    assert.equal(m.isDirty(), false);
    assert.equal(m.canUndo(), false);
    assert.equal(m.toJSON().layout, undefined);
  });

  it('undo after collapsing undoes the last edit, not the collapse', () => {
    const m = new Model(tiny());
    const vs = new ViewState();
    m.apply([m.opPos('leaf0', [5, 5])], 'move');
    vs.setCollapsed(['h0'], true);
    assert.equal(m.undo(), 'move');
    assert.ok(vs.isCollapsed('h0'));
    assert.equal(m.canUndo(), false);
    assert.equal(m.isDirty(), false);
  });

  it('is clean after load and markSaved, dirty after an edit, clean again when undone to the save', () => {
    const m = new Model(tiny());
    assert.equal(m.isDirty(), false);
    m.apply([m.opPos('leaf0', [1, 1])], 'move');
    assert.equal(m.isDirty(), true);
    m.markSaved();
    assert.equal(m.isDirty(), false);
    m.apply([m.opPos('leaf0', [2, 2])], 'move');
    m.undo();
    assert.equal(m.isDirty(), false);
    m.undo();
    assert.equal(m.isDirty(), true);
  });

  it('an edit made while a save was on its way stays unsaved', () => {
    const m = new Model(tiny());
    m.apply([m.opPos('leaf0', [1, 1])], 'move');
    const sent = m.top();                      // the save takes its snapshot and its top here
    m.apply([m.opPos('leaf0', [3, 3])], 'move during the request');
    m.markSaved(sent);                         // the answer arrives
    assert.equal(m.isDirty(), true);
    m.undo();
    assert.equal(m.isDirty(), false);
  });
});

describe('toJSON', () => {
  it('round-trips a document and drops an empty layout', () => {
    const doc = tiny();
    assert.deepEqual(new Model(doc).toJSON(), doc);
  });

  it('keeps positions of existing elements only, and drops the legacy collapsed hint (view state)', () => {
    const m = new Model({ ...tiny(), layout: { positions: { 'h0/gpu0': [1, 2], gone: [0, 0] }, collapsed: ['h0'] } });
    assert.deepEqual(m.toJSON().layout, { positions: { 'h0/gpu0': [1, 2] } });
    const again = new Model(m.toJSON());
    assert.deepEqual(again.toJSON(), m.toJSON());
  });
});

describe('Model index at open', () => {
  it('indexes links by id only when first asked, and again after an edit', () => {
    const m = new Model(cluster(2), { own: true });
    assert.equal(m.byIdOfLinks, null); // opening draws from the link ends alone
    assert.deepEqual(m.linkObjectsOf('h0/gpu1').map((l) => l.id), m.linksOf('h0/gpu1'));
    assert.equal(m.byIdOfLinks, null);
    assert.equal(m.link('leaf0-spine0').b, 'spine0');
    assert.ok(m.byIdOfLinks instanceof Map);
    const added = { id: 'leaf1-spine0~2', a: 'leaf1', b: 'spine0', tech: 'ib-ndr' };
    m.apply([m.opAdd('link', added)], 'add');
    assert.equal(m.byIdOfLinks, null);
    assert.deepEqual(m.link(added.id), added);
    assert.ok(m.linksOf('spine0').includes(added.id));
    assert.equal(m.uniqueLinkId(added.id), `${added.id}~2`);
  });

  it('finds each device\'s links in document order: a loop twice, an unknown end, a duplicated id', () => {
    const m = new Model({
      nodes: [{ id: 'a' }, { id: 'b' }, { id: 'a', kind: 'gpu' }],
      links: [{ id: 'l0', a: 'a', b: 'b' }, { id: 'loop', a: 'b', b: 'b' }, { id: 'l2', a: 'ghost', b: 'a' },
        { id: 'l3', a: 'b', b: 'ghost' }],
    });
    assert.deepEqual(m.linksOf('b'), ['l0', 'loop', 'loop', 'l3']);
    assert.deepEqual([m.degree('b'), m.degree('a'), m.degree('ghost'), m.degree('nope')], [4, 2, 2, 0]);
    assert.deepEqual(m.linksOf('a'), ['l0', 'l2']);       // the last device of a duplicated id
    assert.equal(m.node('a').kind, 'gpu');
    assert.deepEqual(m.linksOf('ghost'), ['l2', 'l3']);    // an end naming no device
    assert.deepEqual([...m.linkEndPositions()], [2, 1, 1, 1, -1, 2, 1, -1]);
    m.apply([m.opRemove('node', m.doc.nodes[0])], 'remove');
    assert.deepEqual([...m.linkEndPositions()], [1, 0, 0, 0, -1, 1, 0, -1]);
    assert.deepEqual(m.linksOf('a'), ['l0', 'l2']);
  });

  it('answers hand-placed positions in a design that had none', () => {
    const m = new Model(cluster(1), { own: true });
    assert.equal(m.position('leaf0'), null);
    m.apply([m.opPos('leaf0', [10, 20])], 'move');
    assert.deepEqual(m.position('leaf0'), [10, 20]);
    m.undo();
    assert.equal(m.position('leaf0'), null);
    m.redo();
    assert.deepEqual(new Model(m.toJSON()).position('leaf0'), [10, 20]);
  });
});

describe('kinds inside a group', () => {
  /** What kindCounts answers, counted the long way: every device below the group by id. */
  const byIds = (m, gid) => {
    const out = new Map();
    for (const id of m.descendantNodes(gid)) { const k = m.node(id).kind; out.set(k, (out.get(k) || 0) + 1); }
    return out;
  };

  it('counts a group and everything inside it, like its devices listed one by one', () => {
    const doc = cluster(3);
    doc.groups.push({ id: 'rackA', kind: 'rack' });
    for (const g of doc.groups) if (g.kind === 'host' && g.id !== 'h2') g.parent = 'rackA';
    const m = new Model(doc, { own: true });
    for (const g of m.doc.groups) assert.deepEqual(new Map([...m.kindCounts(g.id)].sort()), new Map([...byIds(m, g.id)].sort()), g.id);
    assert.equal(m.kindCounts('rackA').get('gpu'), 2 * m.kindCounts('h0').get('gpu'));
    assert.equal(m.kindCounts('nowhere').size, 0);
  });

  it('is counted again after an edit', () => {
    const m = new Model(cluster(1), { own: true });
    const gpus = m.kindCounts('h0').get('gpu');
    m.apply([m.opAdd('node', { id: 'h0/gpu99', kind: 'gpu', group: 'h0' })], 'add');
    assert.equal(m.kindCounts('h0').get('gpu'), gpus + 1);
    m.undo();
    assert.equal(m.kindCounts('h0').get('gpu'), gpus);
  });
});

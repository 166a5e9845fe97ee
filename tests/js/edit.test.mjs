// Unit tests of the editing commands (static/js/editor/edit.js, groups.js, canvas.js dragMoves):
// the transactions they build from the model, and the commands run on a stand-in editor state.
import assert from 'node:assert/strict';
import { beforeEach, afterEach, describe, it, mock } from 'node:test';

import { dragMoves } from '../../static/js/editor/canvas.js';
import {
  copy, copyItems, deleteSelection, linkFromForm, newNodeOps, nudge, nudgeOps, paste, pasteOps, placeNode, plural,
  redo, staggered, suggestTech, undo,
} from '../../static/js/editor/edit.js';
import { bundleGroups, collapseAllIds, groupsToToggle, neighbourhood } from '../../static/js/editor/groups.js';
import { Model } from '../../static/js/editor/model.js';
import { aggLinks } from '../../static/js/editor/selection.js';
import { CATALOG, fakeEditor } from './fake_editor.mjs';
import { cluster, host, tiny } from './fixtures.mjs';

const oneHost = () => ({ format: 'fabricscope.topology/1', name: 'h', ...host('h0') });
const posOf = (m) => (id) => m.position(id) || [10, 20];

// The commands' toasts hide after a few seconds: fake timers keep the test run from waiting.
beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
afterEach(() => mock.timers.reset());

describe('suggestTech', () => {
  it('proposes what the design already uses between the two kinds', () => {
    const m = new Model(oneHost());
    assert.equal(suggestTech(m, CATALOG, 'h0/gpu0', 'h0/nvsw1'), 'nvlink4x4');
    assert.equal(suggestTech(m, CATALOG, 'h0/nic0', 'h0/pcie3'), 'pcie5x16');
  });

  it('falls back to a default for the kinds, among the catalog\'s technologies', () => {
    const m = new Model(tiny());
    assert.equal(suggestTech(m, CATALOG, 'h0/gpu0', 'leaf0'), 'ib-ndr');
    m.apply([m.opAdd('node', { id: 'c0', kind: 'cpu' }), m.opAdd('node', { id: 'c1', kind: 'cpu' }), m.opAdd('node', { id: 'm0', kind: 'memory' })]);
    assert.equal(suggestTech(m, CATALOG, 'c0', 'c1'), 'upi-spr');
    assert.equal(suggestTech(m, CATALOG, 'c0', 'm0'), 'ddr5x8');
  });
});

describe('newNodeOps, staggered, linkFromForm', () => {
  it('adds a device with a free id in its group; a switch starts as a leaf', () => {
    const m = new Model(tiny());
    const { id, ops } = newNodeOps(m, 'gpu', 'h0', { x: 10.4, y: 20.6 });
    assert.equal(id, 'h0/gpu2');
    m.apply(ops, 'add');
    assert.deepEqual(m.node(id), { id, kind: 'gpu', group: 'h0' });
    assert.deepEqual(m.position(id), [10, 21]);
    const sw = newNodeOps(m, 'switch', null, { x: 0, y: 0 });
    assert.equal(sw.id, 'leaf1');
    assert.deepEqual(sw.ops[0].after.attrs, { role: 'leaf' });
  });

  it('spreads devices placed without a pointer', () => {
    const spots = new Set([1, 2, 3, 9].map((n) => JSON.stringify(staggered({ x: 0, y: 0 }, n))));
    assert.equal(spots.size, 4);
  });

  it('builds a link from the dialog\'s values, leaving out what is blank', () => {
    const m = new Model(tiny());
    assert.deepEqual(linkFromForm(m, 'h0/gpu1', 'leaf0', { tech: 'ib-ndr', capacity: '', latency: '', basis: 'effective' }),
      { id: 'h0/gpu1-leaf0', a: 'h0/gpu1', b: 'leaf0', tech: 'ib-ndr' });
    assert.deepEqual(linkFromForm(m, 'h0/gpu0', 'h0/gpu1', { tech: 'pcie5x16', capacity: '504', latency: '90', basis: 'raw' }),
      { id: 'h0/gpu0-gpu1~2', a: 'h0/gpu0', b: 'h0/gpu1', tech: 'pcie5x16', capacity_gbps: 504, latency_ns: 90, capacity_basis: 'raw' });
  });
});

describe('copyItems and pasteOps', () => {
  it('copies a group with everything inside and the links among its devices', () => {
    const m = new Model(cluster(2));
    const cb = copyItems(m, { nodes: [], groups: ['h0'] }, posOf(m));
    assert.equal(cb.groups.length, 1);
    assert.equal(cb.nodes.length, 32);
    assert.equal(cb.links.length, 59);           // the host's own; its NIC uplinks leave the copy
    assert.deepEqual(cb.pos['h0/gpu0'], [10, 20]);
    assert.equal(copyItems(m, { nodes: [], groups: [] }, posOf(m)), null);
  });

  it('pastes a host as a new host: its devices and links follow the new group id', () => {
    const m = new Model(cluster(2));
    const cb = copyItems(m, { nodes: [], groups: ['h1'] }, posOf(m));
    const { ops, gmap, nmap } = pasteOps(m, cb, 1);
    assert.equal(gmap.get('h1'), 'h2');
    assert.equal(nmap.get('h1/gpu3'), 'h2/gpu3');
    m.apply(ops, 'paste');
    assert.equal(m.descendantNodes('h2').length, 32);
    assert.ok(m.link('h2/gpu0-nvsw0'));
    assert.deepEqual(m.position('h2/gpu0'), [58, 68]);  // 48 px down-right of the copy
    assert.equal(m.doc.links.length, 2 * 59 + 16 + 16 + 59);
  });

  it('gives loose devices free ids and drops a group that is gone', () => {
    const m = new Model(tiny());
    const cb = copyItems(m, { nodes: ['h0/gpu0', 'h0/gpu1'], groups: [] }, posOf(m));
    m.apply(m.opsDelete({ groups: ['h0'] }), 'delete');
    const { ops, nmap } = pasteOps(m, cb, 2);
    m.apply(ops, 'paste');
    assert.deepEqual([...nmap.values()], ['h0/gpu0', 'h0/gpu1']);
    assert.equal(m.node('h0/gpu0').group, undefined);   // h0 was deleted: the copy is loose
    assert.deepEqual(m.position('h0/gpu1'), [106, 116]); // the second paste: 2 × 48 px off
    assert.ok(m.link('h0/gpu0-gpu1'));
  });

  it('pastes the same clipboard twice without an id clash', () => {
    const m = new Model(tiny());
    const cb = copyItems(m, { nodes: ['h0/gpu0', 'h0/gpu1'], groups: [] }, posOf(m));
    m.apply(pasteOps(m, cb, 1).ops, 'paste');
    m.apply(pasteOps(m, cb, 2).ops, 'paste');
    assert.equal(m.doc.nodes.length, 7);
    assert.equal(new Set(m.doc.nodes.map((n) => n.id)).size, 7);
    assert.equal(new Set(m.doc.links.map((l) => l.id)).size, 3);
  });
});

describe('nudgeOps and dragMoves', () => {
  it('moves the selected devices and those of selected groups', () => {
    const m = new Model(tiny());
    const ops = nudgeOps(m, { nodes: ['leaf0'], groups: ['h0'] }, posOf(m), 5, -5);
    assert.deepEqual(ops.map((op) => [op.id, op.after]).sort(), [['h0/gpu0', [15, 15]], ['h0/gpu1', [15, 15]], ['leaf0', [15, 15]]]);
  });

  it('moves a dropped device, and every device of a closed group by the group\'s move', () => {
    const m = new Model(tiny());
    const centre = () => [10, 20];
    const moves = dragMoves(m, posOf(m), centre, [
      { kind: 'node', ref: 'leaf0', x: 40, y: 20 },
      { kind: 'group', ref: 'r0', x: 15, y: 20 + 7, oy: 7 },  // drawn 7 px lower: moved 5 px right only
    ]);
    assert.deepEqual([...moves], [['leaf0', [40, 20]], ['h0/gpu0', [15, 20]], ['h0/gpu1', [15, 20]]]);
  });

  it('takes a device released in place (a click) for no move', () => {
    const m = new Model(tiny());
    assert.equal(dragMoves(m, posOf(m), () => [0, 0], [{ kind: 'node', ref: 'leaf0', x: 10.3, y: 19.8 }]).size, 0);
  });
});

describe('groups: which to toggle, collapse all, bundles, neighbourhood', () => {
  it('toggles the selected groups, else the hosts of the selected devices', () => {
    const m = new Model(tiny());
    assert.deepEqual(groupsToToggle(m, { groups: ['r0'], nodes: ['h0/gpu0'] }), ['r0']);
    assert.deepEqual(groupsToToggle(m, { groups: [], nodes: ['h0/gpu0', 'h0/gpu1', 'leaf0'] }), ['h0']);
    assert.deepEqual(groupsToToggle(m, { groups: [], nodes: [] }), []);
  });

  it('collapses every host, expands every group', () => {
    const m = new Model(tiny());
    assert.deepEqual(collapseAllIds(m, true), ['h0']);
    assert.deepEqual(collapseAllIds(m, false), ['r0', 'h0']);
  });

  it('opens the collapsed ends of a bundle', () => {
    assert.deepEqual(bundleGroups('g:h0', 'n:leaf0'), ['h0']);
    assert.deepEqual(bundleGroups('g:h0', 'g:h1'), ['h0', 'h1']);
  });

  it('grows the neighbourhood one hop at a time', () => {
    const m = new Model(cluster(2));
    const one = neighbourhood(m, new Set(['h0/nic0']), 1);
    assert.deepEqual([...one].sort(), ['h0/nic0', 'h0/pcie0', 'leaf0']);
    const two = neighbourhood(m, new Set(['h0/nic0']), 2);
    assert.ok(two.has('h1/nic0') && two.has('spine1') && two.has('h0/cpu0'));
    assert.equal(neighbourhood(m, new Set(['h0/nic0']), 0).size, 1);
  });
});

describe('edit commands on an editor state', () => {
  it('places a palette kind in the one selected, expanded group', () => {
    const ed = fakeEditor(tiny(), [['group', 'h0']]);
    const id = placeNode(ed, 'nic', null);
    assert.equal(id, 'h0/nic0');
    assert.equal(ed.model.node(id).group, 'h0');
    assert.deepEqual(ed.selected, [['node', 'h0/nic0']]);
    assert.equal(ed.clip.placed, 1);
    ed.viewState.setCollapsed(['h0'], true);
    assert.equal(ed.model.node(placeNode(ed, 'nic', null)).group, undefined); // a closed group is not "in"
  });

  it('places nothing on a viewer\'s page', () => {
    const ed = fakeEditor(tiny(), [], { readonly: true });
    assert.equal(placeNode(ed, 'gpu', { x: 0, y: 0 }), undefined);
    assert.equal(ed.model.doc.nodes.length, 3);
  });

  it('deletes the selection, a bundle\'s links included, as one undoable step', () => {
    const ed = fakeEditor(tiny(), [['node', 'h0/gpu0']]);
    deleteSelection(ed);
    assert.equal(ed.model.node('h0/gpu0'), undefined);
    assert.equal(ed.model.doc.links.length, 0);
    assert.equal(ed.toasts.at(-1), 'Deleted 1 item (Ctrl+Z to undo)');
    undo(ed);
    assert.ok(ed.model.node('h0/gpu0') && ed.model.link('h0/gpu0-gpu1'));
    assert.equal(ed.toasts.at(-1), 'Undid: delete 1 item');
    redo(ed);
    assert.equal(ed.toasts.at(-1), 'Redid: delete 1 item');
  });

  it('copies and pastes, selecting what was pasted', () => {
    const ed = fakeEditor(tiny(), [['group', 'h0']]);
    copy(ed);
    assert.equal(ed.toasts.at(-1), 'Copied 2 devices, 1 links, 1 groups');
    paste(ed);
    assert.deepEqual(ed.selected, [['group', 'h1']]);
    assert.ok(ed.model.node('h1/gpu0') && ed.model.link('h1/gpu0-gpu1'));
    assert.equal(ed.model.group('h1').parent, 'r0');
    assert.equal(ed.toasts.at(-1), 'Pasted 2 devices');
    assert.equal(ed.model.undoStack.length, 1);
  });

  it('nudges the selection, and nothing without one', () => {
    const ed = fakeEditor(tiny(), [['node', 'leaf0']]);
    const [x, y] = ed.view.posOf('leaf0');
    nudge(ed, 10, 0);
    assert.deepEqual(ed.model.position('leaf0'), [Math.round(x + 10), Math.round(y)]);
    const none = fakeEditor(tiny());
    nudge(none, 10, 0);
    assert.equal(none.model.undoStack.length, 0);
  });

  it('says "1 device", "2 devices"', () => {
    assert.equal(plural(1, 'device'), '1 device');
    assert.equal(plural(2, 'device'), '2 devices');
  });
});

describe('aggLinks', () => {
  it('lists the links a bundle between two closed groups stands for, read by end position', () => {
    const ed = fakeEditor(cluster(2));
    ed.viewState.setCollapsed(['h0', 'h1'], true, (id) => !!ed.model.group(id));
    const { nodeRep } = ed.view.makeRepResolver();
    const expected = ed.model.doc.links.filter((l) => {
      const [a, b] = [nodeRep(l.a), nodeRep(l.b)];
      return (a === 'g:h0' && b === 'n:leaf0') || (a === 'n:leaf0' && b === 'g:h0');
    }).map((l) => l.id);
    assert.ok(expected.length > 0);
    const bundle = { data: (k) => ({ source: 'n:leaf0', target: 'g:h0' })[k] };
    assert.deepEqual(aggLinks(ed, bundle), expected);
  });
});

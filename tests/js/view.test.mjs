// Unit tests of what the canvas shows (static/js/editor/visible.js computeVisible and friends,
// cystyle.js, viewport.js's pure parts), the status line (chrome.js) and search (search.js).
// Bundles have their own tests (bundles.test.mjs).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { footerText, statusLine } from '../../static/js/editor/chrome.js';
import { buildStyle, COLOR_NAMES, NVLINK_COLOR, speedColor, SPEED_BUCKETS } from '../../static/js/editor/cystyle.js';
import { autoLayout } from '../../static/js/editor/layout.js';
import { Model } from '../../static/js/editor/model.js';
import { matchScore, searchItems } from '../../static/js/editor/search.js';
import { groupZoom, hidingGroups } from '../../static/js/editor/viewport.js';
import {
  bundleKey, collapsedBox, computeVisible, edgeWidth, fmtGbps, groupBox, groupCentre, groupLabel, labelOf, linkCapacity,
  makeRepResolver, shortGbps,
} from '../../static/js/editor/visible.js';
import { ViewState } from '../../static/js/editor/viewstate.js';
import { CATALOG } from './fake_editor.mjs';
import { cluster, tiny } from './fixtures.mjs';

/** A scene (visible.js) of `doc` with `collapsed` groups closed; colours are the speed bucket's name. */
function sceneOf(doc, collapsed = []) {
  const model = new Model(doc);
  const viewState = new ViewState();
  viewState.setCollapsed(collapsed, true);
  const auto = autoLayout(model);
  const colors = Object.fromEntries(SPEED_BUCKETS.map(([, v]) => [v, v]));
  return { model, viewState, catalog: CATALOG, posOf: (id) => model.position(id) || auto.get(id) || [0, 0],
    speedColor: (g) => speedColor(colors, g), nvlinkColor: NVLINK_COLOR };
}

const ids = (want, group) => [...want.values()].filter((w) => !group || w.group === group).map((w) => w.data.id);

describe('computeVisible', () => {
  it('shows every group, device and link of an expanded document, parents first', () => {
    const want = computeVisible(sceneOf(tiny()));
    assert.deepEqual(ids(want), ['g:r0', 'g:h0', 'n:h0/gpu0', 'n:h0/gpu1', 'n:leaf0', 'l:h0/gpu0-gpu1']);
    const gpu = want.get('n:h0/gpu0').data;
    assert.equal(gpu.parent, 'g:h0');
    assert.equal(gpu.label, 'gpu0');
    assert.equal(want.get('g:h0').data.parent, 'g:r0');
    const link = want.get('l:h0/gpu0-gpu1').data;
    assert.deepEqual([link.source, link.target, link.label, link.net], ['n:h0/gpu0', 'n:h0/gpu1', 'pcie5x16 504G', 0]);
    assert.equal(link.color, '--fs-speed-4');                 // 504 Gb/s: the ≤ 800 Gb/s bucket
    for (const w of want.values()) assert.equal(w.data.sig, JSON.stringify({ ...w.data, sig: undefined }));
  });

  it('draws the devices of open groups, in no group and in an unknown group; none inside a closed one', () => {
    const doc = tiny();
    doc.nodes.push({ id: 'lost0', kind: 'nic', group: 'no-such-group' });
    assert.deepEqual(ids(computeVisible(sceneOf(doc)), 'nodes').filter((id) => id.startsWith('n:')),
      ['n:h0/gpu0', 'n:h0/gpu1', 'n:leaf0', 'n:lost0']);
    assert.deepEqual(ids(computeVisible(sceneOf(doc, ['h0'])), 'nodes').filter((id) => id.startsWith('n:')),
      ['n:leaf0', 'n:lost0']);
  });

  it('draws a collapsed group as one box and hides what is inside it, its subgroups too', () => {
    const want = computeVisible(sceneOf(tiny(), ['r0']));
    assert.deepEqual(ids(want), ['g:r0', 'n:leaf0']);
    const box = want.get('g:r0');
    assert.equal(box.data.collapsed, 1);
    assert.equal(box.data.label, 'r0\nrack\n2 GPUs · 2 devices');
    assert.ok(box.data.w >= 76 && box.data.h >= 44 && box.data.fs >= 10);
    assert.equal(box.position.length, 2);
  });

  it('keeps an expanded group inside a collapsed one closed away (the outermost closed group shows)', () => {
    const want = computeVisible(sceneOf(tiny(), ['r0', 'h0']));
    assert.deepEqual(ids(want, 'nodes'), ['g:r0', 'n:leaf0']);
  });

  it('bundles a collapsed host\'s network links per leaf and keeps the fabric\'s own links', () => {
    const want = computeVisible(sceneOf(cluster(2), ['h0']));
    const edges = [...want.values()].filter((w) => w.group === 'edges').map((w) => w.data);
    const aggs = edges.filter((e) => e.etype === 'agg');
    assert.equal(aggs.length, 8);                              // h0's 8 NICs, one to each leaf
    assert.ok(aggs.every((e) => e.source === 'g:h0' || e.target === 'g:h0'));
    assert.ok(aggs.every((e) => e.net === 1 && e.id === 'agg:' + bundleKey(e.source, e.target)));
    assert.equal(edges.filter((e) => e.etype === 'link' && e.ref.startsWith('h0/')).length, 0);
    assert.equal(edges.filter((e) => e.etype === 'link' && e.ref.startsWith('h1/')).length, 59 + 8);
  });

  it('never touches the document', () => {
    const scene = sceneOf(cluster(2), ['h0', 'h1']);
    const before = JSON.stringify(scene.model.doc);
    computeVisible(scene);
    assert.equal(JSON.stringify(scene.model.doc), before);
    assert.ok(!scene.model.isDirty());
  });

  it('places an empty group where the document put it', () => {
    const doc = { ...tiny(), groups: [...tiny().groups, { id: 'empty', kind: 'other' }], layout: { positions: { empty: [7, 9] } } };
    assert.deepEqual(computeVisible(sceneOf(doc)).get('g:empty').position, [7, 9]);
  });
});

describe('representatives, boxes and labels', () => {
  it('resolves a device to its outermost collapsed group, else itself', () => {
    const s = sceneOf(tiny(), ['h0']);
    const { groupRep, nodeRep } = makeRepResolver(s.model, s.viewState);
    assert.equal(nodeRep('h0/gpu0'), 'g:h0');
    assert.equal(nodeRep('leaf0'), 'n:leaf0');
    assert.equal(nodeRep('nope'), null);
    s.viewState.setCollapsed(['r0'], true);
    assert.equal(makeRepResolver(s.model, s.viewState).nodeRep('h0/gpu0'), 'g:r0');
    assert.equal(groupRep(null), null);
  });

  it('measures a group by its laid-out devices', () => {
    const m = new Model({ ...tiny(), layout: { positions: { 'h0/gpu0': [0, 0], 'h0/gpu1': [100, 40] } } });
    const posOf = (id) => m.position(id) || [0, 0];
    assert.deepEqual(groupBox(m, posOf, 'r0'), { cx: 50, cy: 20, w: 100, h: 40 });
    assert.deepEqual(groupCentre(m, posOf, 'h0'), [50, 20]);
  });

  it('sizes collapsed boxes: a host near its footprint, a pod big, a flat layer growing upward', () => {
    const host = collapsedBox({ w: 300, h: 200 });
    assert.deepEqual([host.w, host.h, host.big, host.oy], [240, 160, false, undefined]);
    assert.equal(collapsedBox({ w: 10, h: 10 }).w, 76);        // never smaller than a label
    const pod = collapsedBox({ w: 20000, h: 5000 });
    assert.ok(pod.big && pod.w === 16000 && pod.fs > 40);
    const layer = collapsedBox({ w: 30000, h: 0 });
    assert.ok(layer.oy < 0 && layer.oy + layer.h / 2 <= 50); // its bottom at most 50 px under the row
  });

  it('labels devices without their group\'s prefix and groups by what they are', () => {
    assert.equal(labelOf({ id: 'h0/gpu3', group: 'h0' }), 'gpu3');
    assert.equal(labelOf({ id: 'leaf0' }), 'leaf0');
    assert.equal(groupLabel({ id: 'h0', kind: 'host', template: 'dgx' }, false, 0), 'h0 · dgx');
    assert.equal(groupLabel({ id: 'r0', kind: 'rack' }, false, 0), 'r0 · rack');
    assert.equal(groupLabel({ id: 'h0', kind: 'host' }, false, 0), 'h0');
    assert.equal(groupLabel({ id: 'h0', kind: 'host', template: 'dgx' }, true, 32), 'h0\ndgx\n32 devices');
    // Collapsed: one short line each, racks/trays/chips said as such.
    const tray = groupLabel({ id: 'h0/tray0', kind: 'host', template: 'gb200-compute-tray' }, true, 14, new Map([['gpu', 4], ['nic', 6]]));
    assert.equal(tray, 'h0/tray0\ngb200-compute-tray\n4 GPUs · 14 devices');
    assert.equal(groupLabel({ id: 'h0/nvs0', kind: 'nvlink_switch_tray' }, true, 2, new Map([['nvswitch', 2]])), 'h0/nvs0\nNVSwitch tray\n2 chips');
    assert.equal(groupLabel({ id: 'pod3', kind: 'pod' }, true, 9, new Map([['gpu', 8]])), 'pod3\n8 GPUs · 9 devices'); // not "pod3 / pod"
  });

  it('fits a collapsed box\'s font to its longest label line and makes room for every line', () => {
    // A 400 px NVSwitch tray: "NVSwitch tray" (13 characters) at 0.68 em: (400 × 0.8 - 12) / (0.68 × 13) = 34 px.
    const label = 'h0/nvs0\nNVSwitch tray\n2 chips';
    const box = collapsedBox({ w: 400, h: 0 }, label);
    assert.equal(box.fs, Math.floor((400 * 0.8 - 12) / (0.68 * 13)));
    assert.ok(box.h >= box.fs * 1.2 * 3);            // three lines inside
    const long = collapsedBox({ w: 400, h: 0 }, 'h0/tray0\ngb200-compute-tray\n4 GPUs · 14 devices');
    assert.ok(long.fs < box.fs && long.fs * 0.68 * 19 <= long.w - 12); // the longest line still fits
    assert.equal(collapsedBox({ w: 20, h: 0 }, label).fs, 10);        // never below 10 px
    // A pod (16,000 × 4,000 px box): three lines of up to 23 characters stay inside it too.
    const podLabel = 'pod0\npod\n1024 GPUs · 6400 devices';
    const pod = collapsedBox({ w: 20000, h: 5000 }, podLabel);
    assert.ok(pod.big && pod.fs * 0.68 * 23 <= pod.w - 12 && pod.fs * (1.2 * 3 + 0.4) <= pod.h);
  });

  it('stacks a pod-sized box\'s counts on lines of their own when that reads larger', () => {
    const doc = { groups: [{ id: 'pod0', kind: 'pod' }, { id: 'h0', kind: 'host', parent: 'pod0' }],
      nodes: [{ id: 'g0', kind: 'gpu', group: 'h0' }, { id: 'g1', kind: 'gpu', group: 'h0' }, { id: 'n0', kind: 'nic', group: 'h0' }],
      links: [], layout: { positions: { g0: [0, 0], g1: [20000, 20000], n0: [10000, 100] } } };
    const pod = computeVisible(sceneOf(doc, ['pod0'])).get('g:pod0').data;
    assert.equal(pod.label, 'pod0\n2 GPUs\n3 devices');
    assert.ok(pod.fs > collapsedBox({ w: 20000, h: 20000 }, 'pod0\n2 GPUs · 3 devices').fs);
    const host = computeVisible(sceneOf(doc, ['h0'])).get('g:h0').data; // the same footprint
    assert.equal(host.label, 'h0\nhost\n2 GPUs\n3 devices');
    doc.layout.positions = { g0: [0, 0], g1: [200, 100], n0: [100, 0] }; // a host's size: one line
    assert.equal(computeVisible(sceneOf(doc, ['h0'])).get('g:h0').data.label, 'h0\nhost\n2 GPUs · 3 devices');
  });

  it('labels a GPU\'s NVLinks into NVSwitches once, on the GPU, in nvidia-smi\'s NV# (the H200: NV18)', () => {
    // [gpu0]==nvlink4x4 (824 Gb/s set)==[nvs0], ==nvlink4x4==[nvs1]: NV8, 824 + 659 Gb/s; gpu1 has none.
    const doc = tiny();
    doc.nodes.push({ id: 'h0/nvs0', kind: 'nvswitch', group: 'h0' }, { id: 'h0/nvs1', kind: 'nvswitch', group: 'h0' });
    doc.links.push({ id: 'a', a: 'h0/gpu0', b: 'h0/nvs0', tech: 'nvlink4x4', capacity_gbps: 824 },
      { id: 'b', a: 'h0/nvs1', b: 'h0/gpu0', tech: 'nvlink4x4' });
    const want = computeVisible(sceneOf(doc));
    assert.equal(want.get('n:h0/gpu0').data.fanlabel, 'gpu0\nNV8 1.5T');
    assert.equal(want.get('n:h0/gpu1').data.fanlabel, undefined);
    assert.deepEqual([want.get('l:a').data.fan, want.get('l:b').data.fan, want.get('l:h0/gpu0-gpu1').data.fan], [1, 1, undefined]);
  });

  it('draws every NVLink in the NVLink colour, whatever its speed; other links by speed', () => {
    // [gpu0]==nvlink4x4 (659 Gb/s)==[nvswitch0]; [gpu0]--pcie5x16 (504 Gb/s, set)--[gpu1]: same ≤ 800 Gb/s class.
    const doc = tiny();
    doc.nodes.push({ id: 'h0/nvs0', kind: 'nvswitch', group: 'h0' });
    doc.links.push({ id: 'nv', a: 'h0/gpu0', b: 'h0/nvs0', tech: 'nvlink4x4' });
    const want = computeVisible(sceneOf(doc));
    assert.equal(want.get('l:nv').data.color, NVLINK_COLOR);
    assert.equal(want.get('l:h0/gpu0-gpu1').data.color, '--fs-speed-4');
    // Collapsed into a bundle with the PCIe link it is not all NVLink: coloured by speed.
    doc.nodes.push({ id: 'x', kind: 'nvswitch' });
    doc.links.push({ id: 'nv2', a: 'h0/gpu1', b: 'x', tech: 'nvlink4x4' });
    const closed = computeVisible(sceneOf(doc, ['h0']));
    assert.equal(closed.get('agg:g:h0|n:x').data.color, NVLINK_COLOR);
  });

  it('reads a link\'s capacity from itself, else its technology and basis', () => {
    assert.equal(linkCapacity(CATALOG, { tech: 'pcie5x16', capacity_gbps: 100 }), 100);
    assert.equal(linkCapacity(CATALOG, { tech: 'pcie5x16' }), 384);
    assert.equal(linkCapacity(CATALOG, { tech: 'pcie5x16', capacity_basis: 'raw' }), 504);
    assert.equal(linkCapacity(CATALOG, { tech: 'nope' }), null);
  });

  it('formats rates and widths', () => {
    assert.deepEqual([fmtGbps(400), fmtGbps(3200), fmtGbps(12800), fmtGbps(null)], ['400 Gb/s', '3.2 Tb/s', '13 Tb/s', '?']);
    assert.deepEqual([shortGbps(504), shortGbps(3200), shortGbps(null)], ['504G', '3.2T', '']);
    assert.deepEqual([edgeWidth(0), edgeWidth(100), edgeWidth(400), edgeWidth(1e6)], [1, 1, 3, 6]);
  });
});

describe('stylesheet', () => {
  const colors = Object.fromEntries(COLOR_NAMES.map((n) => [n, n]));

  it('colours a link by its speed bucket', () => {
    assert.equal(speedColor(colors, 100), '--fs-speed-1');
    assert.equal(speedColor(colors, 400), '--fs-speed-3');
    assert.equal(speedColor(colors, 5000), '--fs-speed-6');
  });

  it('takes shapes and the switch colour from #fs-style, cheap edges when large, labels when asked', () => {
    const style = buildStyle({ colors, kinds: { gpu: { shape: 'square' }, switch: { color: '#123' } }, large: false, edgeLabels: false });
    const rule = (sel) => style.filter((r) => r.selector === sel).map((r) => r.style);
    assert.equal(rule('node[kind="gpu"]')[0].shape, 'square');
    assert.equal(rule('node[kind="switch"]')[0]['background-color'], '#123');
    assert.equal(rule('node[kind="switch"][role="tor"]').length, 0);   // one switch colour with the shared palette
    assert.equal(rule('edge')[0]['curve-style'], 'bezier');
    assert.equal(rule('edge').length, 1);
    const large = buildStyle({ colors, kinds: {}, large: true, edgeLabels: true });
    assert.equal(large.find((r) => r.selector === 'edge').style['curve-style'], 'haystack');
    assert.ok(large.some((r) => r.selector === 'node[kind="switch"][role="tor"]'));
    assert.deepEqual(large.at(-3), { selector: 'edge', style: { label: 'data(label)' } });
    assert.deepEqual(large.at(-2), { selector: 'edge[?fan]', style: { label: '' } }); // labelled on their GPU
  });
});

describe('viewport helpers', () => {
  it('opens the groups hiding an element: a device\'s, a group\'s parents, both ends of a link', () => {
    const m = new Model(cluster(1));
    assert.deepEqual(hidingGroups(m, 'node', 'h0/gpu0'), ['h0']);
    assert.deepEqual(hidingGroups(m, 'group', 'h0'), []);
    assert.deepEqual(hidingGroups(m, 'link', 'h0/nic0-leaf0'), ['h0']);
    assert.deepEqual(hidingGroups(m, 'node', 'nope'), []);
  });

  it('fits a group, never closer than reading distance nor further than 0.3', () => {
    assert.equal(groupZoom({ w: 20, h: 20 }, 1000, 800), 2);
    assert.equal(groupZoom({ w: 1920, h: 100 }, 1000, 800), 0.5);
    assert.equal(groupZoom({ w: 1e6, h: 1e6 }, 1000, 800), 0.3);
  });
});

describe('status line and search', () => {
  it('says what state the document is in', () => {
    assert.equal(statusLine({ readonly: false, dirty: false, revision: null }).text, 'new · not saved yet');
    assert.equal(statusLine({ readonly: false, dirty: true, revision: null }).text, '● unsaved (new)');
    assert.equal(statusLine({ readonly: false, dirty: false, revision: 4 }).text, 'saved · rev 4');
    assert.equal(statusLine({ readonly: true, dirty: true, revision: 4 }).text, 'read-only · rev 4');
    assert.equal(statusLine({ readonly: false, dirty: false, revision: 4 }).title, 'Based on revision 4');
    assert.match(footerText(cluster(1), 3, 2, 7.6), /^42 devices · 83 links · 1 groups — showing 3 nodes, 2 edges · render 8 ms$/);
  });

  it('ranks exact, prefix, last-part and anywhere matches, links by exact id only', () => {
    assert.deepEqual(['gpu3', 'gpu30', 'h0/gpu3', 'xgpu3', 'nic'].map((id) => matchScore(id, 'gpu3')), [0, 1, 2, 3, -1]);
    const m = new Model(cluster(2));
    const found = searchItems(m, 'GPU1');
    assert.deepEqual(found.map((f) => f.id), ['h0/gpu1', 'h1/gpu1']);
    assert.equal(searchItems(m, '  ').length, 0);
    assert.deepEqual(searchItems(m, 'leaf0-spine1').map((f) => [f.type, f.id]), [['link', 'leaf0-spine1']]);
    assert.equal(searchItems(m, 'h').length, 12);
  });
});

// Unit tests of static/js/editor/viewstate.js: the view state a document opens with, and its
// per-topology persistence (a Map stands in for sessionStorage).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { normalizeDocument } from '../../static/js/editor/model.js';
import { AUTO_COLLAPSE_NODES, autoCollapsed, BIG_HOST_LINKS, bigGroups, ViewState, viewStateKey } from '../../static/js/editor/viewstate.js';
import { cluster, tiny } from './fixtures.mjs';
import { domain } from './fixtures_domain.mjs';

/** sessionStorage's getItem/setItem over a Map; `fail` makes setItem throw like a full quota. */
function memoryStorage({ fail = false } = {}) {
  const map = new Map();
  return {
    map,
    getItem: (k) => (map.has(k) ? map.get(k) : null),
    setItem: (k, v) => { if (fail) throw new Error('QuotaExceededError'); map.set(k, String(v)); },
  };
}

describe('ViewState.initFor', () => {
  it('opens a large document (> 400 devices) with every host collapsed, a small one expanded', () => {
    // cluster(13): 13 hosts x 32 devices + 8 leaves + 2 spines = 426 devices > 400.
    const big = normalizeDocument(cluster(13));
    assert.ok(big.nodes.length > AUTO_COLLAPSE_NODES);
    const vs = new ViewState();
    assert.equal(vs.initFor(big), 'auto');
    assert.equal(vs.collapsed.size, 13);
    const small = normalizeDocument(cluster(12)); // 394 devices
    assert.equal(vs.initFor(small), 'none');
    assert.equal(vs.collapsed.size, 0);
  });

  it('opens the trays of an NVLink domain collapsed however small the document (an NVL72 is 276 devices)', () => {
    // mini-nvl: 4 compute trays + 2 switch trays under d, 18 devices: far below 400, yet closed.
    const doc = normalizeDocument(domain());
    assert.ok(doc.nodes.length < AUTO_COLLAPSE_NODES);
    const vs = new ViewState();
    assert.equal(vs.initFor(doc), 'auto');
    assert.deepEqual([...vs.collapsed].sort(), ['d/s0', 'd/s1', 'd/t0', 'd/t1', 'd/t2', 'd/t3']);
  });

  it('opens a host with more than BIG_HOST_LINKS links inside collapsed, the others open', () => {
    // big: 1 CPU, 16 GPUs, 12 NVSwitches, every GPU to every chip: 16 PCIe + 192 NVLinks = 208 > 128.
    const doc = tiny();
    doc.groups.push({ id: 'big', kind: 'host' });
    doc.nodes.push({ id: 'big/cpu0', kind: 'cpu', group: 'big' });
    for (let s = 0; s < 12; s += 1) doc.nodes.push({ id: `big/nvs${s}`, kind: 'nvswitch', group: 'big' });
    for (let g = 0; g < 16; g += 1) {
      doc.nodes.push({ id: `big/gpu${g}`, kind: 'gpu', group: 'big' });
      doc.links.push({ id: `big/p${g}`, a: `big/gpu${g}`, b: 'big/cpu0', tech: 'pcie5x16' });
      for (let s = 0; s < 12; s += 1) doc.links.push({ id: `big/n${g}-${s}`, a: `big/gpu${g}`, b: `big/nvs${s}`, tech: 'nvlink4x1' });
    }
    const norm = normalizeDocument(doc);
    assert.deepEqual(bigGroups(norm), ['big']);
    assert.deepEqual(bigGroups(norm, 16 + 192), []); // exactly at the bound: open
    assert.ok(BIG_HOST_LINKS < 208);
    const vs = new ViewState();
    assert.equal(vs.initFor(norm), 'auto');
    assert.deepEqual([...vs.collapsed], ['big']);
    assert.deepEqual(bigGroups(norm, BIG_HOST_LINKS, new Set(['big'])), []); // closed anyway: not counted
  });

  it('reads no link when every host opens closed (a 100,000-GPU design: 1.26M links not counted)', () => {
    const doc = normalizeDocument(cluster(60)); // 60 hosts > AUTO_COLLAPSE_NODES devices: all closed
    let reads = 0;
    const links = doc.links;
    Object.defineProperty(doc, 'links', { get: () => { reads += 1; return links; } });
    const vs = new ViewState();
    assert.equal(vs.initFor(doc), 'auto');
    assert.equal(vs.collapsed.size, 60);
    assert.equal(reads, 0);
    bigGroups(doc, BIG_HOST_LINKS, new Set(['h0'])); // one host left open: its links are counted
    assert.equal(reads, 1);
  });

  it('reads a document\'s legacy layout.collapsed hint, dropping unknown groups', () => {
    const vs = new ViewState();
    assert.equal(vs.initFor(normalizeDocument({ ...tiny(), layout: { collapsed: ['h0', 'gone'] } })), 'document');
    assert.deepEqual([...vs.collapsed], ['h0']);
  });

  it('prefers the stored view of the same topology, unless told not to', () => {
    const storage = memoryStorage();
    const key = viewStateKey(7);
    const first = new ViewState({ storage, key });
    first.initFor(normalizeDocument(tiny()));
    first.setCollapsed(['r0'], true);
    first.setViewport(1.5, { x: 10, y: -20 });
    first.setSelection(['n:leaf0']);
    first.setSearch('leaf');
    const again = new ViewState({ storage, key });
    assert.equal(again.initFor(normalizeDocument(tiny())), 'stored');
    assert.deepEqual(again.toJSON(), { collapsed: ['r0'], viewport: { zoom: 1.5, pan: { x: 10, y: -20 } }, selection: ['n:leaf0'], search: 'leaf' });
    assert.equal(again.initFor(normalizeDocument(tiny()), { useStored: false }), 'none');
    // Another topology does not see it.
    assert.equal(new ViewState({ storage, key: viewStateKey(8) }).initFor(normalizeDocument(tiny())), 'none');
  });

  it('survives a failing or garbled storage and ignores a page without a topology id', () => {
    const bad = new ViewState({ storage: memoryStorage({ fail: true }), key: viewStateKey(1) });
    bad.initFor(normalizeDocument(tiny()));
    assert.equal(bad.setCollapsed(['h0'], true), true);
    const garbled = memoryStorage();
    garbled.map.set(viewStateKey(2), '{not json');
    assert.equal(new ViewState({ storage: garbled, key: viewStateKey(2) }).initFor(normalizeDocument(tiny())), 'none');
    assert.equal(viewStateKey(null), null);
    const storage = memoryStorage();
    new ViewState({ storage, key: viewStateKey('') }).setCollapsed(['h0'], true);
    assert.equal(storage.map.size, 0);
  });

  it('rejects a non-finite viewport', () => {
    const vs = new ViewState();
    vs.setViewport(NaN, { x: 0, y: 0 });
    vs.setViewport(1, { x: Infinity, y: 0 });
    assert.equal(vs.viewport, null);
  });
});


/** pods × racks × hosts × devices, `fabric` ungrouped switches: pod{p} > rack{p}-{r} > h{p}-{r}-{i}. */
function nested(pods, racks, hosts, devices, fabric = 0) {
  const doc = { groups: [], nodes: [], links: [] };
  for (let p = 0; p < pods; p += 1) {
    doc.groups.push({ id: `pod${p}`, kind: 'pod' });
    for (let r = 0; r < racks; r += 1) {
      doc.groups.push({ id: `rack${p}-${r}`, kind: 'rack', parent: `pod${p}` });
      for (let i = 0; i < hosts; i += 1) {
        const h = `h${p}-${r}-${i}`;
        doc.groups.push({ id: h, kind: 'host', parent: `rack${p}-${r}` });
        for (let d = 0; d < devices; d += 1) doc.nodes.push({ id: `${h}/gpu${d}`, kind: 'gpu', group: h });
      }
    }
  }
  for (let s = 0; s < fabric; s += 1) doc.nodes.push({ id: `core${s}`, kind: 'switch' });
  return normalizeDocument(doc);
}

describe('autoCollapsed (any nesting of groups)', () => {
  it('opens a 32k-GPU-shaped design at its pods: racks and hosts inside stay closed', () => {
    // 8 pods x 128 racks x 4 hosts x 8 GPUs + 256 cores: the pods level shows 8 + 256 = 264
    // items; opening the pods would add 8 x 128 racks (> 400), so every group stays collapsed.
    const doc = nested(8, 128, 4, 8, 256);
    const ids = autoCollapsed(doc);
    assert.equal(ids.length, 8 + 8 * 128 + 8 * 128 * 4);
    const vs = new ViewState();
    assert.equal(vs.initFor(doc), 'auto');
    assert.ok(vs.isCollapsed('pod0') && vs.isCollapsed('rack0-0') && vs.isCollapsed('h0-0-0'));
  });

  it('opens the levels that fit: pods and racks open, hosts closed', () => {
    // 2 pods x 4 racks x 4 hosts x 32 devices (1,024 devices): pods 2, + racks 8, + hosts 32
    // = 42 items; opening the hosts would add 1,024 devices.
    const doc = nested(2, 4, 4, 32);
    const ids = new Set(autoCollapsed(doc));
    assert.ok(!ids.has('pod1') && !ids.has('rack1-3'));
    assert.equal(ids.size, 32);
    assert.ok([...ids].every((id) => id.startsWith('h')));
  });

  it('serves an NVL72-like rack: trays and NVLink-switch trays inside the rack group', () => {
    // rack0 > h0 (18 trays of 14 devices, 9 switch trays of 2): rack 1 + h0 1 + 27 trays = 29
    // items; opening every tray would add 18 x 14 + 9 x 2 = 270 devices -> 299 <= 400: all open.
    const doc = { groups: [{ id: 'rack0', kind: 'rack' }, { id: 'h0', kind: 'host', parent: 'rack0' }], nodes: [], links: [] };
    for (let t = 0; t < 18; t += 1) {
      doc.groups.push({ id: `h0/tray${t}`, kind: 'host', parent: 'h0' });
      for (let d = 0; d < 14; d += 1) doc.nodes.push({ id: `h0/tray${t}/d${d}`, kind: 'gpu', group: `h0/tray${t}` });
    }
    for (let s = 0; s < 9; s += 1) {
      doc.groups.push({ id: `h0/nvs${s}`, kind: 'other', parent: 'h0' });
      for (let d = 0; d < 2; d += 1) doc.nodes.push({ id: `h0/nvs${s}/c${d}`, kind: 'nvswitch', group: `h0/nvs${s}` });
    }
    assert.deepEqual(autoCollapsed(normalizeDocument(doc)), []);
    assert.deepEqual(autoCollapsed(normalizeDocument(doc), 100).sort(),
      [...Array.from({ length: 9 }, (_, s) => `h0/nvs${s}`), ...Array.from({ length: 18 }, (_, t) => `h0/tray${t}`)].sort());
  });
});

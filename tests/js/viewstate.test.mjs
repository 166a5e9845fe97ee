// Unit tests of static/js/editor/viewstate.js: the view state a document opens with, and its
// per-topology persistence (a Map stands in for sessionStorage).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { normalizeDocument } from '../../static/js/editor/model.js';
import { AUTO_COLLAPSE_NODES, ViewState, viewStateKey } from '../../static/js/editor/viewstate.js';
import { cluster, tiny } from './fixtures.mjs';

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

// Every editor module loads under Node, i.e. touches no DOM at module top level, and the editor's
// methods, split over several modules, all land on Editor.prototype exactly once.
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { describe, it } from 'node:test';

const EDITOR_DIR = new URL('../../static/js/editor/', import.meta.url);

describe('editor modules', () => {
  it('import without a DOM', async () => {
    const files = readdirSync(EDITOR_DIR).filter((f) => f.endsWith('.js'));
    assert.ok(files.length >= 12, files.join(' '));
    for (const f of files) await import(new URL(f, EDITOR_DIR));
  });

  it('give Editor the methods the page and its test hooks call', async () => {
    const { Editor } = await import(new URL('app.js', EDITOR_DIR));
    const names = Object.getOwnPropertyNames(Editor.prototype);
    assert.equal(names.length, 77);
    for (const n of ['getDocument', 'load', 'stats', 'focusElement', 'selectIds', 'toggleCollapse', 'fit',
      'setEdgeLabels', 'buildDom', 'bindKeys', 'bindSearch', 'updateProps', 'save', 'validate', 'generate']) {
      assert.equal(typeof Editor.prototype[n], 'function', n);
    }
    // Mixed-in methods are not enumerable, as class methods are not.
    assert.deepEqual(Object.keys(Editor.prototype), []);
  });
});

describe('Catalog', () => {
  it('reads the engine\'s catalog_as_dict() shape and picks the capacity basis', async () => {
    const { Catalog } = await import(new URL('catalog.js', EDITOR_DIR));
    const cat = new Catalog({
      basis_default: 'raw',
      techs: {
        pcie5x16: { family: 'pcie', raw_gbps: 504, effective_gbps: 384, latency_ns: 100 },
        nvlink4x4: { family: 'nvlink', raw_gbps: 800, effective_gbps: 659.2 },
        pcie4x4: { family: 'pcie', raw_gbps: 63, effective_gbps: 48 },
      },
    });
    assert.equal(cat.capacity('pcie5x16'), 504);
    assert.equal(cat.capacity('pcie5x16', 'effective'), 384);
    assert.equal(cat.capacity('nope'), null);
    assert.equal(cat.tech('nvlink4x4').latency, 0);
    assert.deepEqual(cat.grouped().map(([fam, techs]) => [fam, techs.map((t) => t.name)]),
      [['NVLink', ['nvlink4x4']], ['PCIe', ['pcie4x4', 'pcie5x16']]]);
    assert.ok(cat.nodeKinds.includes('nvswitch'));
  });
});

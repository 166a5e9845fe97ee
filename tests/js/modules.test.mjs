// Every editor module loads under Node, i.e. touches no DOM at module top level; the editor has
// no shared `this`: its modules export functions of the state, and every action a shortcut
// names is a command of the one command table.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';

const EDITOR_DIR = new URL('../../static/js/editor/', import.meta.url);
const files = readdirSync(EDITOR_DIR).filter((f) => f.endsWith('.js'));

describe('editor modules', () => {
  it('import without a DOM', async () => {
    assert.ok(files.length >= 20, files.join(' '));
    for (const f of files) await import(new URL(f, EDITOR_DIR));
  });

  it('share no `this` bag: no method mixins, only small classes with their own state', () => {
    for (const f of files) {
      const src = readFileSync(new URL(f, EDITOR_DIR), 'utf8');
      assert.ok(!/Methods\s*=\s*\{/.test(src) && !/\bmixin\(/.test(src), `${f} mixes methods into a class`);
      if (!/^export class /m.test(src)) assert.ok(!/\bthis\./.test(src), `${f} uses \`this\` outside a class`);
    }
  });

  it('give the page and its test hooks the Editor methods they call', async () => {
    const { Editor } = await import(new URL('app.js', EDITOR_DIR));
    for (const n of ['getDocument', 'load', 'stats', 'focusElement', 'selectIds', 'toggleCollapse', 'setCollapsed', 'fit', 'setEdgeLabels']) {
      assert.equal(typeof Editor.prototype[n], 'function', n);
    }
    for (const n of ['view', 'cy', 'canvas', 'model']) {
      assert.equal(typeof Object.getOwnPropertyDescriptor(Editor.prototype, n).get, 'function', n);
    }
  });

  it('have a command for every shortcut, toolbar button and panel button', async () => {
    const { editorCommands } = await import(new URL('commands.js', EDITOR_DIR));
    const { keyAction } = await import(new URL('keyboard.js', EDITOR_DIR));
    const cmd = editorCommands({});
    const keys = ['z', 'Z', 'y', 'c', 'v', 's', 'a', 'f', '?', '/', 'Escape', 'Delete', 'Backspace', 'c', 'e', 'Enter',
      '[', ']', 'h', 'l', 'f', '+', '=', '-', '_', 'ArrowLeft', 'ArrowUp', '1', '9'];
    const named = new Set();
    for (const key of keys) {
      for (const mod of [false, true]) {
        const act = keyAction({ key, ctrlKey: mod, shiftKey: key === 'Z' }, { paletteSize: 9 });
        if (act && act.command) named.add(act.command);
      }
    }
    for (const name of named) assert.equal(typeof cmd[name], 'function', name);
    // The page's controls call these (page.js, dialogs.js, properties.js).
    for (const src of ['page.js', 'dialogs.js', 'properties.js']) {
      const text = readFileSync(new URL(src, EDITOR_DIR), 'utf8');
      for (const [, name] of text.matchAll(/\bcmd\.(\w+)\(/g)) assert.equal(typeof cmd[name], 'function', `${src}: cmd.${name}`);
    }
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

describe('createEditorState', () => {
  it('owns the page\'s parsed document (no copy) and starts every part empty', async () => {
    const { createEditorState, templateChoices } = await import(new URL('state.js', EDITOR_DIR));
    const doc = { name: 'x', nodes: [{ id: 'a', kind: 'gpu' }], links: [], groups: [] };
    const config = { document: doc, readDocument: () => doc, revision: 3, readonly: true, templates: ['dgx', { id: 'hgx', title: 'HGX' }] };
    const ed = createEditorState(null, config);
    assert.equal(ed.model.doc, doc);
    assert.equal(config.document, null);
    assert.equal(ed.server.revision, 3);
    assert.equal(ed.readonly, true);
    assert.deepEqual(ed.connect, { mode: null, source: null, ghost: null, ghostSource: null });
    assert.deepEqual(templateChoices(config.templates), [{ name: 'dgx', label: 'dgx' }, { name: 'hgx', label: 'HGX' }]);
    assert.equal(createEditorState(null, {}).server.revision, null);
  });
});

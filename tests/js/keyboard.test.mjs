// Unit tests of the keyboard shortcuts (static/js/editor/keyboard.js): the key -> command mapping
// (keyAction, a pure function of the key and the editor's mode), what counts as typing, and the
// help rows a viewer sees.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { helpRows, isTyping, keyAction, SHORTCUTS } from '../../static/js/editor/keyboard.js';

const EDITOR = { readonly: false, paletteSize: 9 };
const VIEWER = { readonly: true, paletteSize: 9 };
const act = (key, mods = {}, ctx = EDITOR) => keyAction({ key, ...mods }, ctx);
const cmd = (key, mods, ctx) => { const a = act(key, mods, ctx); return a && [a.command, ...a.args]; };

describe('keyAction: Ctrl (or ⌘) shortcuts', () => {
  it('maps every documented Ctrl shortcut, either case', () => {
    for (const [key, want] of [['z', 'undo'], ['y', 'redo'], ['c', 'copy'], ['v', 'paste'], ['s', 'openSave'], ['a', 'selectAll'], ['f', 'focusSearch']]) {
      assert.deepEqual(cmd(key, { ctrlKey: true }), [want], key);
      assert.deepEqual(cmd(key.toUpperCase(), { ctrlKey: true }), [want], key.toUpperCase());
      assert.deepEqual(cmd(key, { metaKey: true }), [want], `⌘${key}`);
    }
  });

  it('redoes with Ctrl+Shift+Z', () => {
    assert.deepEqual(cmd('Z', { ctrlKey: true, shiftKey: true }), ['redo']);
    assert.deepEqual(cmd('z', { ctrlKey: true, shiftKey: false }), ['undo']);
  });

  it('takes undo, redo and save from a viewer without running them (no browser save dialog)', () => {
    for (const key of ['z', 'y', 's']) assert.deepEqual(act(key, { ctrlKey: true }, VIEWER), { command: null, args: [] }, key);
    assert.deepEqual(cmd('c', { ctrlKey: true }, VIEWER), ['copy']);
    assert.deepEqual(cmd('a', { ctrlKey: true }, VIEWER), ['selectAll']);
  });

  it('leaves other Ctrl keys to the browser (reload, print, tabs)', () => {
    for (const key of ['r', 'p', 't', 'w', 'Escape', '1', 'Delete']) assert.equal(act(key, { ctrlKey: true }), null, key);
  });
});

describe('keyAction: plain keys', () => {
  it('maps every documented key', () => {
    const table = [
      ['?', ['toggleHelp']], ['/', ['focusSearch']], ['Escape', ['escape']],
      ['Delete', ['deleteSelection']], ['Backspace', ['deleteSelection']],
      ['c', ['toggleConnect']], ['C', ['toggleConnect']], ['e', ['toggleSelectedGroup']], ['E', ['toggleSelectedGroup']],
      ['Enter', ['toggleSelectedGroup']], ['[', ['collapseAll', true]], [']', ['collapseAll', false]],
      ['h', ['cycleHops']], ['H', ['cycleHops']], ['l', ['toggleEdgeLabels']], ['L', ['toggleEdgeLabels']],
      ['f', ['fit']], ['F', ['fit']], ['+', ['zoomBy', 1.25]], ['=', ['zoomBy', 1.25]], ['-', ['zoomBy', 0.8]], ['_', ['zoomBy', 0.8]],
    ];
    for (const [key, want] of table) assert.deepEqual(cmd(key), want, key);
  });

  it('nudges by 10 px with the arrows, 50 with Shift', () => {
    assert.deepEqual(cmd('ArrowLeft'), ['nudge', -10, 0]);
    assert.deepEqual(cmd('ArrowRight'), ['nudge', 10, 0]);
    assert.deepEqual(cmd('ArrowUp'), ['nudge', 0, -10]);
    assert.deepEqual(cmd('ArrowDown', { shiftKey: true }), ['nudge', 0, 50]);
  });

  it('places the n-th palette kind with 1 … 9, only for an editor and only for kinds that exist', () => {
    assert.deepEqual(cmd('1'), ['placeKind', 0]);
    assert.deepEqual(cmd('9'), ['placeKind', 8]);
    assert.equal(act('0'), null);
    assert.equal(act('5', {}, { readonly: false, paletteSize: 4 }), null);
    assert.equal(act('1', {}, VIEWER), null);
  });

  it('gives viewers what only looks: collapse, search, fit, help', () => {
    assert.deepEqual(cmd('e', {}, VIEWER), ['toggleSelectedGroup']);
    assert.deepEqual(cmd('/', {}, VIEWER), ['focusSearch']);
    // Commands that edit check the mode themselves (delete, connect do nothing for a viewer).
    assert.deepEqual(cmd('Delete', {}, VIEWER), ['deleteSelection']);
  });

  it('leaves Alt combinations and unknown keys to the browser', () => {
    for (const key of ['c', 'f', '?']) assert.equal(act(key, { altKey: true }), null, key);
    for (const key of ['x', 'q', 'Tab', 'Shift', 'F5', ' ', 'constructor', 'toString', undefined]) assert.equal(act(key), null, String(key));
  });
});

describe('isTyping and the help', () => {
  it('lets form controls keep their keys', () => {
    for (const tagName of ['INPUT', 'TEXTAREA', 'SELECT']) assert.ok(isTyping({ tagName }), tagName);
    assert.ok(isTyping({ tagName: 'DIV', isContentEditable: true }));
    assert.ok(!isTyping({ tagName: 'DIV', isContentEditable: false }));
    assert.ok(!isTyping(null));
  });

  it('lists every shortcut for an editor, only those that work read-only for a viewer', () => {
    assert.equal(helpRows(false).length, SHORTCUTS.length);
    const viewer = helpRows(true).map(([k]) => k);
    assert.ok(viewer.includes('?') && viewer.includes('E or double-click') && viewer.includes('Esc'));
    for (const k of ['1 … 9', 'C', 'Delete / Backspace', 'Ctrl+Z', 'Ctrl+S', 'Arrow keys']) assert.ok(!viewer.includes(k), k);
  });

  it('documents a key for every mapped plain key', () => {
    const documented = SHORTCUTS.map(([k]) => k).join(' ');
    for (const key of ['?', '/', 'C', 'E', 'H', 'L', 'F', '[', ']', '+', 'Esc', 'Delete', 'Arrow']) assert.ok(documented.includes(key), key);
  });
});

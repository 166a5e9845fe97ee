/* Fabricscope editor — the commands: every action a key, button, dialog or gesture can run, by
 * name, bound to the editor state `ed`. Keyboard shortcuts (keyboard.js keyAction) name these;
 * the page (page.js, properties.js, dialogs.js) calls them. One table, so what the editor can do
 * is read in one place. */
import { fitHeight, refreshChrome } from './chrome.js';
import { setConnectSource, stopGhost, toggleConnect, updateHandle } from './connect.js';
import * as edit from './edit.js';
import { openGenerate } from './generate.js';
import * as groups from './groups.js';
import { openInsertHost, showImportMatrix } from './hosts.js';
import * as io from './io.js';
import { toggleHelp } from './keyboard.js';
import { updateProps } from './properties.js';
import { selectIds } from './selection.js';
import * as viewport from './viewport.js';

/** @returns {Object<string, Function>} the commands of `ed` */
export function editorCommands(ed) {
  const cmd = {
    // chrome
    refresh: () => { refreshChrome(ed); updateProps(ed, cmd); },
    fitHeight: () => fitHeight(ed),
    updateHandle: () => updateHandle(ed),
    selectionChanged: () => { updateProps(ed, cmd); updateHandle(ed); if (ed.hood.hops) groups.applyNeighbourhood(ed); },
    toggleHelp: () => toggleHelp(ed),
    // editing
    undo: () => edit.undo(ed),
    redo: () => edit.redo(ed),
    copy: () => edit.copy(ed),
    paste: () => edit.paste(ed),
    deleteSelection: () => edit.deleteSelection(ed),
    nudge: (dx, dy) => edit.nudge(ed, dx, dy),
    placeNode: (kind, at) => edit.placeNode(ed, kind, at),
    placeKind: (i) => edit.placeNode(ed, ed.paletteKinds[i], ed.pointer ? { x: ed.pointer.x, y: ed.pointer.y } : null),
    relayoutAll: () => edit.relayoutAll(ed),
    selectIds: (kind, ids) => selectIds(ed, kind, ids),
    // connecting
    toggleConnect: (force) => toggleConnect(ed, force),
    connectFrom: (id) => { toggleConnect(ed, true); setConnectSource(ed, id); },
    // Esc: leave connect mode, clear the highlight and the selection
    escape: () => { toggleConnect(ed, false); stopGhost(ed); groups.clearNeighbourhood(ed); ed.cy.$(':selected').unselect(); },
    // groups and what is shown
    toggleCollapse: (ids) => groups.toggleCollapse(ed, ids),
    toggleSelectedGroup: () => groups.toggleSelectedGroup(ed),
    collapseAll: (collapse) => groups.collapseAll(ed, collapse),
    expandAggregate: (el) => groups.expandAggregate(ed, el),
    cycleHops: () => groups.cycleHops(ed),
    setCollapsed: (ids, collapsed) => viewport.setCollapsed(ed, ids, collapsed),
    fit: () => viewport.fit(ed),
    zoomBy: (f) => viewport.zoomBy(ed, f),
    selectAll: () => viewport.selectAll(ed),
    focusSearch: () => viewport.focusSearch(ed),
    focusElement: (type, id) => viewport.focusElement(ed, type, id),
    setEdgeLabels: (on) => viewport.setEdgeLabels(ed, on),
    toggleEdgeLabels: () => viewport.setEdgeLabels(ed, !ed.view.edgeLabels),
    // files and the server
    importFile: (file) => io.importFile(ed, file),
    exportJSON: (suffix) => io.exportJSON(ed, suffix),
    exportPNG: () => io.exportPNG(ed),
    openSave: () => io.openSave(ed, cmd.save),
    save: async (message) => { await io.save(ed, message); cmd.refresh(); },
    reloadLatest: () => io.reloadLatest(ed),
    validate: () => io.validate(ed),
    openInsertHost: () => openInsertHost(ed),
    showImportMatrix: (hostId) => showImportMatrix(ed, hostId),
    openGenerate: () => openGenerate(ed),
  };
  return cmd;
}

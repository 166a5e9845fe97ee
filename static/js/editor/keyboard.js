/* Fabricscope editor — keyboard shortcuts (document-level keydown) and the help dialog listing them. */

export const SHORTCUTS = [
  ['?', 'Show / hide this help'],
  ['1 … 9', 'Place the n-th palette kind at the pointer (or the view centre)'],
  ['C', 'Connect mode: click source, then target'],
  ['Delete / Backspace', 'Delete the selection'],
  ['Ctrl+C / Ctrl+V', 'Copy / paste (new unique ids)'],
  ['Ctrl+Z', 'Undo'], ['Ctrl+Shift+Z / Ctrl+Y', 'Redo'],
  ['Ctrl+A', 'Select all visible'], ['Ctrl+S', 'Save a revision'],
  ['/ or Ctrl+F', 'Search devices and groups'],
  ['E or double-click', 'Collapse / expand the selected group (or the host of a device)'],
  ['[ / ]', 'Collapse all hosts / expand all hosts'],
  ['H', 'Neighbourhood of the selection: 1, 2, 3 hops, off'],
  ['L', 'Toggle link labels'],
  ['F', 'Fit to screen'], ['+ / −', 'Zoom in / out'],
  ['Arrow keys', 'Nudge the selection (Shift: ×5)'],
  ['Shift+drag', 'Box select; Shift+click adds to the selection'],
  ['Esc', 'Cancel connect mode, clear highlight, close dialogs'],
];

export const keyboardMethods = {
  /* ---------------------------------------------------------------- keyboard */
  bindKeys() {
    document.addEventListener('keydown', (e) => {
      if (document.querySelector('dialog[open]')) return; // dialogs handle their own keys (Esc closes)
      const t = e.target;
      const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
      if (typing) return;
      const mod = e.ctrlKey || e.metaKey;
      const k = e.key;
      const ro = this.readonly;
      const done = () => { e.preventDefault(); e.stopPropagation(); };
      if (mod && (k === 'z' || k === 'Z')) { if (!ro) { if (e.shiftKey) this.redo(); else this.undo(); } return done(); }
      if (mod && (k === 'y' || k === 'Y')) { if (!ro) this.redo(); return done(); }
      if (mod && (k === 'c' || k === 'C')) { this.copy(); return done(); }
      if (mod && (k === 'v' || k === 'V')) { this.paste(); return done(); }
      if (mod && (k === 's' || k === 'S')) { if (!ro) this.openSave(); return done(); }
      if (mod && (k === 'a' || k === 'A')) { this.cy.elements().not('#__ghost, #__ghost_edge').select(); return done(); }
      if (mod && (k === 'f' || k === 'F')) { this.els.search.focus(); this.els.search.select(); return done(); }
      if (mod || e.altKey) return;
      if (k === '?') { this.toggleHelp(); return done(); }
      if (k === '/') { this.els.search.focus(); this.els.search.select(); return done(); }
      if (k === 'Escape') { this.toggleConnect(false); this.stopGhost(); this.hops = 0; this.applyNeighbourhood(); this.cy.$(':selected').unselect(); return done(); }
      if (k === 'Delete' || k === 'Backspace') { this.deleteSelection(); return done(); }
      if (k === 'c' || k === 'C') { this.toggleConnect(); return done(); }
      if (k === 'e' || k === 'E' || k === 'Enter') { this.toggleSelectedGroup(); return done(); }
      if (k === '[') { this.collapseAll(true); return done(); }
      if (k === ']') { this.collapseAll(false); return done(); }
      if (k === 'h' || k === 'H') { this.cycleHops(); return done(); }
      if (k === 'l' || k === 'L') { this.setEdgeLabels(!this.view.edgeLabels); return done(); }
      if (k === 'f' || k === 'F') { this.fit(); return done(); }
      if (k === '+' || k === '=') { this.zoomBy(1.25); return done(); }
      if (k === '-' || k === '_') { this.zoomBy(0.8); return done(); }
      const arrows = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
      if (arrows[k]) { const s = e.shiftKey ? 50 : 10; this.nudge(arrows[k][0] * s, arrows[k][1] * s); return done(); }
      if (/^[1-9]$/.test(k) && !ro) {
        const kind = this.paletteKinds[Number(k) - 1];
        if (kind) { this.placeNode(kind, this.pointer ? { x: this.pointer.x, y: this.pointer.y } : null); return done(); }
      }
    });
  },

  toggleHelp() {
    const d = this.dialogs.help;
    if (d.open) d.close(); else d.showModal();
  }
};

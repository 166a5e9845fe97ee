/* Fabricscope editor — keyboard shortcuts: which key runs which command (keyAction, pure, from
 * the tables below), the document-level listener, and the help dialog's rows. */

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

/** The help rows a viewer sees: only what works read-only. */
export function helpRows(readonly) {
  return SHORTCUTS.filter(([k]) => !readonly || /^(\?|\/|E|\[|H|L|F|\+|Esc|Shift\+drag)/.test(k));
}

// Ctrl (or ⌘) + key, letters in lower case: [command, ...args]; a function of the shift state
// where Shift changes the command.
const MOD_KEYS = {
  z: (shift) => [shift ? 'redo' : 'undo'], y: ['redo'], c: ['copy'], v: ['paste'],
  s: ['openSave'], a: ['selectAll'], f: ['focusSearch'],
};
// Commands a viewer's key does not run; the key is still taken (no browser save dialog).
const EDITS_ONLY = new Set(['undo', 'redo', 'openSave']);
// Plain keys, letters in lower case.
const PLAIN_KEYS = {
  '?': ['toggleHelp'], '/': ['focusSearch'], Escape: ['escape'],
  Delete: ['deleteSelection'], Backspace: ['deleteSelection'],
  c: ['toggleConnect'], e: ['toggleSelectedGroup'], Enter: ['toggleSelectedGroup'],
  '[': ['collapseAll', true], ']': ['collapseAll', false],
  h: ['cycleHops'], l: ['toggleEdgeLabels'], f: ['fit'],
  '+': ['zoomBy', 1.25], '=': ['zoomBy', 1.25], '-': ['zoomBy', 0.8], '_': ['zoomBy', 0.8],
};
const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
const NUDGE_PX = 10;
const NUDGE_SHIFT_PX = 50;

const NOTHING = { command: null, args: [] }; // taken, runs nothing
const run = ([command, ...args]) => ({ command, args });

function modAction(k, shift, readonly) {
  if (!Object.hasOwn(MOD_KEYS, k)) return null;
  const entry = MOD_KEYS[k];
  const act = run(typeof entry === 'function' ? entry(shift) : entry);
  return readonly && EDITS_ONLY.has(act.command) ? NOTHING : act;
}

function plainAction(k, shift, { readonly = false, paletteSize = 0 } = {}) {
  if (Object.hasOwn(PLAIN_KEYS, k)) return run(PLAIN_KEYS[k]);
  if (Object.hasOwn(ARROWS, k)) { const s = shift ? NUDGE_SHIFT_PX : NUDGE_PX; return run(['nudge', ARROWS[k][0] * s, ARROWS[k][1] * s]); }
  if (/^[1-9]$/.test(k) && !readonly && Number(k) <= paletteSize) return run(['placeKind', Number(k) - 1]);
  return null;
}

/**
 * What a key press does.
 * @param {{key: string, ctrlKey?: boolean, metaKey?: boolean, shiftKey?: boolean, altKey?: boolean}} e
 * @param {{readonly?: boolean, paletteSize?: number}} ctx the editor's mode; palette kinds 1…n
 * @returns {{command: string|null, args: any[]}|null} the command to run (null command: the key
 *   is taken but does nothing here), or null: not a shortcut, the browser keeps the key
 */
export function keyAction(e, ctx = {}) {
  const k = e.key && e.key.length === 1 ? e.key.toLowerCase() : e.key;
  if (e.ctrlKey || e.metaKey) return modAction(k, !!e.shiftKey, !!ctx.readonly);
  if (e.altKey) return null;
  return plainAction(k, !!e.shiftKey, ctx);
}

/** Whether the key goes to a form control rather than the canvas. */
export function isTyping(target) {
  return !!target && (target.tagName === 'INPUT' || target.tagName === 'TEXTAREA' || target.tagName === 'SELECT' || !!target.isContentEditable);
}

/** The document-level listener: shortcuts run `cmd`'s commands (commands.js). */
export function bindKeys(ed, cmd) {
  document.addEventListener('keydown', (e) => {
    if (document.querySelector('dialog[open]')) return; // dialogs handle their own keys (Esc closes)
    if (isTyping(e.target)) return;
    const act = keyAction(e, { readonly: ed.readonly, paletteSize: ed.paletteKinds.length });
    if (!act) return;
    if (act.command) cmd[act.command](...act.args);
    e.preventDefault();
    e.stopPropagation();
  });
}

export function toggleHelp(ed) {
  const d = ed.dialogs.help;
  if (d.open) d.close(); else d.showModal();
}

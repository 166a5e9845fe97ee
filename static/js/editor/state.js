/* Fabricscope editor — the editor's state, one plain object passed to every module's functions
 * (`ed` in their signatures). Each part says which module writes it; others only read it.
 *
 * Two kinds of state matter most: `ed.model` is the document (edits, undo, "unsaved"),
 * `ed.viewState` is what the user looks at (collapsed groups, zoom/pan, selection, search;
 * viewstate.js) and never dirties the document.
 *
 * Pure: no DOM (the page parts are filled in by page.js and app.js), so it runs under Node.
 */
import { Catalog } from './catalog.js';
import { Model } from './model.js';
import { ViewState, viewStateKey } from './viewstate.js';

/** Host templates of the config as {name, label} (a bare string names and labels itself). */
export function templateChoices(templates) {
  return (templates || []).map((t) => (typeof t === 'string' ? { name: t, label: t }
    : { name: t.name || t.id, label: t.label || t.title || t.name || t.id }));
}

/**
 * @param {HTMLElement|null} root the element the editor fills
 * @param {object} config #editor-config (see editor.js readConfig)
 * @param {{storage?: Storage|null}} [opts] where the view state persists (sessionStorage)
 */
export function createEditorState(root, config, { storage = null } = {}) {
  config = config || {};
  // Opened from the page (editor.js), the model owns the parsed document: no copy on open. A
  // save's base is the model's snapshot as opened (items shared, never changed: model.snapshot).
  const owned = typeof config.readDocument === 'function';
  const model = new Model(config.document || {}, { own: owned });
  if (owned) config.document = null;
  const viewState = new ViewState({ storage, key: viewStateKey(config.topology_id) });
  viewState.initFor(model.doc);
  return {
    root, config, readonly: !!config.readonly, urls: config.urls || {},
    catalog: new Catalog(config.catalog), templates: templateChoices(config.templates),
    model, viewState,
    view: null, cy: null,                                       // app.js: the View (view.js) and its Cytoscape
    els: null, dialogs: null, canvas: null, canvasWrap: null,  // page.js, dialogs.js
    paletteKinds: [],                                           // page.js: kinds keys 1…9 place
    pointer: null,                                              // canvas.js: last model-space pointer over the canvas
    connect: { mode: null, source: null, ghost: null, ghostSource: null }, // connect.js
    clip: { items: null, pastes: 0, placed: 0 },                // edit.js: clipboard, paste and place counters
    hood: { hops: 0 },                                          // groups.js: neighbourhood highlight
    server: {                                                   // io.js, hosts.js, generate.js
      revision: config.revision == null ? null : config.revision,
      savedDocument: config.revision == null ? undefined : model.snapshot(),
      lastSave: null, problems: [], importMatrices: new Map(),
      buildPreview: null, bypassUnload: false,
    },
    chrome: { toastTimer: null, loadMs: 0 },                    // chrome.js, app.js
  };
}

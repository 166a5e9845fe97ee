/* Fabricscope topology editor — entry point (an ES module; no build step, works with any Django
 * static storage).
 *
 * Page: <script src="vendor/cytoscape.min.js"> (classic, defines the `cytoscape` global), then
 * <script type="module" src="js/editor.js">; this module imports the rest of js/editor/.
 * Inputs: <script type="application/json" id="editor-config"> (see templates/designer/editor.html).
 * Test/debug hook: window.fabricscopeEditor.{getDocument(), load(doc), stats(), editor}, announced
 * by a `fabricscope:editor-ready` event on document.
 */
import { Editor } from './editor/app.js';

function boot() {
  const cfgEl = document.getElementById('editor-config');
  const root = document.getElementById('fabricscope-editor');
  if (!cfgEl || !root || !window.cytoscape) {
    if (root) root.textContent = 'The editor could not start (missing configuration or scripts).';
    return;
  }
  let config;
  try { config = JSON.parse(cfgEl.textContent); } catch (err) {
    root.textContent = `The editor could not read its configuration: ${err.message}`;
    return;
  }
  const editor = new Editor(root, config);
  window.fabricscopeEditor = {
    getDocument: () => editor.getDocument(),
    load: (doc) => editor.load(doc),
    stats: () => editor.stats(),
    editor,
  };
  document.dispatchEvent(new CustomEvent('fabricscope:editor-ready', { detail: window.fabricscopeEditor }));
}

// Module scripts run after the document is parsed; the check keeps boot() safe if this module is
// ever imported earlier (e.g. from an inline module in <head>).
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot); else boot();

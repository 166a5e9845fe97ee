/* Fabricscope topology editor — entry point.
 *
 * Load order (classic scripts, no build step, works with any Django static storage):
 *   vendor/cytoscape.min.js, js/editor/model.js, js/editor/layout.js, js/editor/catalog.js,
 *   js/editor/view.js, js/editor/app.js, js/editor.js
 * Inputs: <script type="application/json" id="editor-config"> (see templates/designer/editor.html).
 * Test/debug hook: window.fabricscopeEditor.{getDocument(), load(doc), stats()}.
 */
(function () {
  'use strict';

  function boot() {
    const NS = window.FabricscopeEditorNS;
    const cfgEl = document.getElementById('editor-config');
    const root = document.getElementById('fabricscope-editor');
    if (!cfgEl || !root || !NS || !NS.Editor || !window.cytoscape) {
      if (root) root.textContent = 'The editor could not start (missing configuration or scripts).';
      return;
    }
    let config;
    try { config = JSON.parse(cfgEl.textContent); } catch (err) {
      root.textContent = `The editor could not read its configuration: ${err.message}`;
      return;
    }
    const editor = new NS.Editor(root, config);
    window.fabricscopeEditor = {
      getDocument: () => editor.getDocument(),
      load: (doc) => editor.load(doc),
      stats: () => editor.stats(),
      editor,
    };
    document.dispatchEvent(new CustomEvent('fabricscope:editor-ready', { detail: window.fabricscopeEditor }));
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot); else boot();
})();

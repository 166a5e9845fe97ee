/* Fabricscope topology editor — entry point (an ES module; no build step, works with any Django
 * static storage).
 *
 * Page: <script src="vendor/cytoscape.min.js"> (classic, defines the `cytoscape` global), then
 * <script type="module" src="js/editor.js">; this module imports the rest of js/editor/.
 * Inputs: <script type="application/json" id="editor-config"> (see templates/designer/editor.html) and,
 * when it names `document_url`, the revision's document fetched from there.
 * Test/debug hook: window.fabricscopeEditor.{getDocument(), load(doc), stats(), editor}, announced
 * by a `fabricscope:editor-ready` event on document.
 */
import { Editor } from './editor/app.js';
import { parseEditorDocument } from './editor/compact.js';

/** The configuration of #editor-config with its `document` in place and `readDocument()` (the
 * stored revision again, parsed anew: the save's base, io.js savedBase). A revision's document
 * comes beside the page (`document_url`, preloaded by editor.html); a blank one is inline. */
async function readConfig(cfgEl) {
  const config = JSON.parse(cfgEl.textContent);
  if (config.document == null && config.document_url) {
    // The same request as the page's <link rel="preload" as="fetch" crossorigin>: served from it.
    const resp = await fetch(config.document_url, { credentials: 'same-origin' });
    if (!resp.ok) throw new Error(`the document did not load (HTTP ${resp.status})`);
    const text = await resp.text();
    performance.mark('fs-editor-fetched');
    // A large design comes with each repeated host interior once (editor/compact.js).
    config.document = parseEditorDocument(text);
    config.readDocument = () => parseEditorDocument(text);
  } else {
    config.readDocument = () => JSON.parse(cfgEl.textContent).document;
  }
  return config;
}

async function boot() {
  // Marks for the open-time figures of docs/PERFORMANCE.md (tests/browser/test_editor_32k.py).
  performance.mark('fs-editor-boot');
  const cfgEl = document.getElementById('editor-config');
  const root = document.getElementById('fabricscope-editor');
  if (!cfgEl || !root || !window.cytoscape) {
    if (root) root.textContent = 'The editor could not start (missing configuration or scripts).';
    return;
  }
  let config;
  try { config = await readConfig(cfgEl); } catch (err) {
    root.textContent = `The editor could not read its configuration: ${err.message}`;
    return;
  }
  performance.mark('fs-editor-config');
  const editor = new Editor(root, config);
  window.fabricscopeEditor = {
    getDocument: () => editor.getDocument(),
    load: (doc) => editor.load(doc),
    stats: () => editor.stats(),
    editor,
  };
  performance.mark('fs-editor-ready');
  document.dispatchEvent(new CustomEvent('fabricscope:editor-ready', { detail: window.fabricscopeEditor }));
}

// Module scripts run after the document is parsed; the check keeps boot() safe if this module is
// ever imported earlier (e.g. from an inline module in <head>).
if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot); else boot();

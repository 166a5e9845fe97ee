/* Fabricscope editor — the page controller: toolbar, palette, properties, dialogs, keyboard. */
(function (NS) {
  'use strict';

  const { clone, naturalCompare } = NS;
  const KIND_LABEL = {
    gpu: 'GPU', cpu: 'CPU socket', memory: 'Memory', pcie_switch: 'PCIe switch', nvswitch: 'NVSwitch',
    nic: 'NIC', nvme: 'NVMe', switch: 'Switch', storage: 'Storage',
  };
  const ROLES = ['tor', 'leaf', 'spine', 'core'];
  const SHORTCUTS = [
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

  function h(tag, attrs, ...children) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v == null || v === false) continue;
      if (k === 'class') el.className = v;
      else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
      else if (k === 'dataset') Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? '' : v);
    }
    for (const c of children.flat()) if (c != null && c !== false) el.append(c.nodeType ? c : document.createTextNode(String(c)));
    return el;
  }

  /** Element.append() would print "null" for the optional parts we leave out. */
  function appendAll(parent, ...children) {
    for (const c of children.flat()) if (c != null && c !== false) parent.append(c);
  }

  function download(name, blob) {
    const a = h('a', { href: URL.createObjectURL(blob), download: name });
    document.body.append(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 5000);
  }

  class Editor {
    constructor(root, config) {
      const t0 = performance.now();
      this.root = root;
      this.config = config || {};
      this.readonly = !!this.config.readonly;
      this.revision = this.config.revision == null ? null : this.config.revision;
      this.urls = this.config.urls || {};
      this.catalog = new NS.Catalog(this.config.catalog);
      this.templates = (this.config.templates || []).map((t) => (typeof t === 'string' ? { name: t, label: t } : { name: t.name || t.id, label: t.label || t.title || t.name || t.id }));
      this.model = new NS.Model(this.config.document || {});
      this.clipboard = null;
      this.pasteCount = 0;
      this.mode = null;          // null | 'connect'
      this.connectSource = null;
      this.hops = 0;
      this.pointer = null;       // last model-space pointer position over the canvas
      this.problems = [];
      this.bypassUnload = false;
      this.buildDom();
      this.view = new NS.View(this.canvas, this.model, this.catalog, { readonly: this.readonly });
      this.cy = this.view.cy;
      this.bindCy();
      this.bindKeys();
      this.bindDrop();
      this.model.on((e) => this.onModel(e));
      this.fitHeight();
      window.addEventListener('resize', () => this.fitHeight());
      window.addEventListener('beforeunload', (e) => {
        if (this.model.isDirty() && !this.bypassUnload && !this.readonly) { e.preventDefault(); e.returnValue = ''; }
      });
      this.initialView();
      this.loadMs = performance.now() - t0;
      this.refreshChrome();
    }

    /* ================================================================ DOM */
    buildDom() {
      const r = this.root;
      r.classList.add('fs-editor');
      if (this.readonly) r.classList.add('fs-readonly');
      r.innerHTML = '';
      const btn = (label, title, onclick, extra = {}) => h('button', { type: 'button', class: 'fs-btn', title, onclick, ...extra }, label);
      this.els = {};
      const E = this.els;
      E.name = h('span', { class: 'fs-docname', title: 'Topology name' }, this.model.doc.name);
      E.status = h('span', { class: 'fs-status', role: 'status', 'aria-live': 'polite' });
      E.undo = btn('↶', 'Undo (Ctrl+Z)', () => this.undo(), { class: 'fs-btn fs-edit', 'data-action': 'undo', 'aria-label': 'Undo' });
      E.redo = btn('↷', 'Redo (Ctrl+Shift+Z / Ctrl+Y)', () => this.redo(), { class: 'fs-btn fs-edit', 'data-action': 'redo', 'aria-label': 'Redo' });
      E.connect = btn('⟷ Connect', 'Connect mode: click source then target (C)', () => this.toggleConnect(), { class: 'fs-btn fs-edit', 'data-action': 'connect', 'aria-pressed': 'false' });
      E.insertHost = btn('+ Host', 'Insert a host from a template', () => this.openInsertHost(), { class: 'fs-btn fs-edit', 'data-action': 'insert-host' });
      E.generate = btn('Generate…', 'Generate a cluster (template × hosts + fabric)', () => this.openGenerate(), { class: 'fs-btn fs-edit', 'data-action': 'generate' });
      E.importBtn = btn('Import', 'Import a topology JSON file, or a server as a new host: NCCL topology XML, nvidia-smi topo -m text, hwloc XML (or drop it on the canvas)', () => E.file.click(), { class: 'fs-btn fs-edit', 'data-action': 'import' });
      E.file = h('input', { type: 'file', accept: '.json,.xml,.txt,application/json,text/xml,application/xml,text/plain', hidden: true, onchange: (e) => this.importFile(e.target.files[0]) });
      E.exportJson = btn('⇩ JSON', 'Export the document as JSON', () => this.exportJSON(), { 'data-action': 'export-json' });
      E.exportPng = btn('⇩ PNG', 'Export the canvas as PNG', () => this.exportPNG(), { 'data-action': 'export-png' });
      E.validate = btn('Validate', 'Check the document on the server', () => this.validate(), { class: 'fs-btn fs-edit', 'data-action': 'validate' });
      E.save = btn('Save', 'Save a new revision (Ctrl+S)', () => this.openSave(), { class: 'fs-btn fs-primary fs-edit', 'data-action': 'save' });
      E.search = h('input', { type: 'search', class: 'fs-search', placeholder: 'Search…  ( / )', 'aria-label': 'Search devices and groups', autocomplete: 'off' });
      E.results = h('ul', { class: 'fs-results', role: 'listbox', hidden: true });
      E.labels = h('label', { class: 'fs-check', title: 'Link labels (L)' }, h('input', { type: 'checkbox', onchange: (e) => this.setEdgeLabels(e.target.checked) }), ' Link labels (L)');
      E.help = btn('?', 'Keyboard shortcuts (?)', () => this.toggleHelp(), { 'data-action': 'help', 'aria-label': 'Keyboard shortcuts' });
      const toolbar = h('div', { class: 'fs-toolbar', role: 'toolbar' },
        h('div', { class: 'fs-tb-group' }, E.name, E.status),
        h('div', { class: 'fs-tb-group fs-edit' }, E.undo, E.redo),
        h('div', { class: 'fs-tb-group fs-edit' }, E.connect, E.insertHost, E.generate),
        h('div', { class: 'fs-tb-group' }, h('span', { class: 'fs-edit' }, E.importBtn), E.file, E.exportJson, E.exportPng),
        h('div', { class: 'fs-tb-group fs-search-wrap' }, E.search, E.results),
        h('div', { class: 'fs-tb-group' }, E.help),
        h('div', { class: 'fs-tb-group fs-tb-end' }, E.validate, E.save));
      this.bindSearch();

      // Palette: kinds (click or drag), groups controls, legend.
      const kinds = this.catalog.nodeKinds.filter((k) => NS.KIND_STYLE[k]);
      this.paletteKinds = kinds;
      const palette = h('aside', { class: 'fs-palette', 'aria-label': 'Palette' },
        h('h3', { class: 'fs-edit' }, 'Add device'),
        h('div', { class: 'fs-kinds fs-edit' }, kinds.map((k, i) => h('button', {
          type: 'button', class: 'fs-kind', draggable: 'true', 'data-kind': k,
          title: `${KIND_LABEL[k] || k} — click to place, or drag onto the canvas (key ${i + 1})`,
          onclick: () => this.placeNode(k, null),
          ondragstart: (e) => { e.dataTransfer.setData('application/x-fabricscope-kind', k); e.dataTransfer.effectAllowed = 'copy'; },
        }, h('span', { class: `fs-swatch fs-k-${k}` }), h('span', {}, KIND_LABEL[k] || k), h('kbd', {}, String(i + 1))))),
        h('h3', {}, 'Groups'),
        h('div', { class: 'fs-row' },
          btn('Collapse all', 'Collapse every host ( [ )', () => this.collapseAll(true), { 'data-action': 'collapse-all' }),
          btn('Expand all', 'Expand every host ( ] )', () => this.collapseAll(false), { 'data-action': 'expand-all' })),
        h('div', { class: 'fs-row fs-edit' }, btn('Re-layout', 'Forget hand-placed positions and lay out automatically', () => this.relayoutAll(), { 'data-action': 'relayout' })),
        h('h3', {}, 'Link speed'),
        h('div', { class: 'fs-row' }, E.labels),
        h('ul', { class: 'fs-legend' }, NS.SPEED_BUCKETS.map(([, v, text]) => h('li', {}, h('span', { class: 'fs-line', style: `background: var(${v})` }), text))),
        h('h3', {}, 'Devices'),
        h('ul', { class: 'fs-legend fs-legend-kinds' }, kinds.map((k) => h('li', {}, h('span', { class: `fs-swatch fs-k-${k}` }), KIND_LABEL[k] || k))));

      this.canvas = h('div', { class: 'fs-canvas', tabindex: '0', 'aria-label': 'Topology canvas' });
      E.handle = h('div', { class: 'fs-handle', title: 'Drag to another device to connect', hidden: true });
      E.toast = h('div', { class: 'fs-toast', role: 'status', 'aria-live': 'polite', hidden: true });
      E.modeBanner = h('div', { class: 'fs-mode', hidden: true });
      E.footer = h('div', { class: 'fs-footer' });
      E.dropHint = h('div', { class: 'fs-drop-hint', hidden: true }, 'Drop a fabricscope.topology/1 JSON file to import it');
      E.empty = h('div', { class: 'fs-empty', hidden: true }, h('strong', {}, 'This topology is empty'),
        h('span', {}, this.readonly ? 'Nothing has been drawn yet.'
          : 'Drag a device from the palette, insert a server with “+ Host”, generate a cluster, or drop a JSON file here.'));
      const zoom = h('div', { class: 'fs-zoom' },
        btn('+', 'Zoom in (+)', () => this.zoomBy(1.25), { 'data-action': 'zoom-in' }),
        btn('−', 'Zoom out (−)', () => this.zoomBy(0.8), { 'data-action': 'zoom-out' }),
        btn('⤢', 'Fit (F)', () => this.fit(), { 'data-action': 'fit' }));
      const canvasWrap = h('div', { class: 'fs-canvas-wrap' }, this.canvas, E.empty, E.handle, zoom, E.modeBanner, E.toast, E.dropHint, E.footer);
      this.canvasWrap = canvasWrap;

      E.props = h('section', { class: 'fs-props', 'aria-label': 'Properties' });
      E.problems = h('section', { class: 'fs-problems', 'aria-label': 'Problems', hidden: true });
      const side = h('aside', { class: 'fs-side' }, E.problems, E.props);

      this.dialogs = this.buildDialogs();
      r.append(toolbar, h('div', { class: 'fs-body' }, palette, canvasWrap, side), ...Object.values(this.dialogs));
    }

    buildDialogs() {
      const D = {};
      const techSelect = () => {
        const sel = h('select', { name: 'tech', required: true });
        for (const [fam, techs] of this.catalog.grouped()) {
          sel.append(h('optgroup', { label: fam }, techs.map((t) => h('option', { value: t.name }, `${t.name} — ${NS.fmtGbps(t.effective)} eff / ${NS.fmtGbps(t.raw)} raw`))));
        }
        return sel;
      };
      this.techSelect = techSelect;
      // Tech picker (new link).
      D.link = h('dialog', { class: 'fs-dialog', 'data-dialog': 'link' },
        h('form', { method: 'dialog' },
          h('h2', {}, 'New link'),
          h('p', { class: 'fs-ends' }),
          h('label', {}, 'Technology', techSelect()),
          h('fieldset', { class: 'fs-basis' }, h('legend', {}, 'Capacity basis'),
            h('label', {}, h('input', { type: 'radio', name: 'basis', value: 'effective', checked: true }), ' effective'),
            h('label', {}, h('input', { type: 'radio', name: 'basis', value: 'raw' }), ' raw line rate')),
          h('label', {}, 'Capacity (Gb/s per direction)', h('input', { type: 'number', name: 'capacity', min: '0', step: 'any' })),
          h('label', {}, 'Latency (ns)', h('input', { type: 'number', name: 'latency', min: '0', step: 'any' })),
          h('p', { class: 'fs-hint' }, 'Filled from the catalog; edit to override.'),
          h('menu', {}, h('button', { value: 'cancel', formnovalidate: true, class: 'fs-btn' }, 'Cancel'), h('button', { value: 'ok', class: 'fs-btn fs-primary' }, 'Add link'))));
      const f = D.link.querySelector('form');
      const fill = () => {
        const t = this.catalog.tech(f.tech.value);
        if (!t) return;
        f.capacity.value = f.basis.value === 'raw' ? t.raw : t.effective;
        f.latency.value = t.latency;
      };
      f.tech.addEventListener('change', fill);
      for (const r of f.querySelectorAll('input[name=basis]')) r.addEventListener('change', fill);
      this.fillTech = fill;

      D.save = h('dialog', { class: 'fs-dialog', 'data-dialog': 'save' },
        h('form', { method: 'dialog' }, h('h2', {}, 'Save revision'),
          h('label', {}, 'Message (optional)', h('input', { type: 'text', name: 'message', placeholder: 'What changed?', maxlength: '200' })),
          h('menu', {}, h('button', { value: 'cancel', formnovalidate: true, class: 'fs-btn' }, 'Cancel'), h('button', { value: 'ok', class: 'fs-btn fs-primary' }, 'Save'))));

      D.conflict = h('dialog', { class: 'fs-dialog fs-danger-dialog', 'data-dialog': 'conflict', role: 'alertdialog' },
        h('form', { method: 'dialog' }, h('h2', {}, 'Someone saved a newer revision'),
          h('p', { class: 'fs-conflict-text' }),
          h('p', {}, 'Your changes were not saved and nothing was overwritten. Download your version first if you want to keep it, then reload the latest revision and re-apply your changes.'),
          h('menu', {},
            h('button', { type: 'button', class: 'fs-btn', 'data-action': 'conflict-export', onclick: () => this.exportJSON('-mine') }, 'Download my version'),
            h('button', { value: 'keep', class: 'fs-btn' }, 'Keep editing'),
            h('button', { type: 'button', class: 'fs-btn fs-primary', 'data-action': 'reload-latest', onclick: () => this.reloadLatest() }, 'Reload latest'))));

      const tplOptions = () => this.templates.map((t) => h('option', { value: t.name }, t.label));
      D.host = h('dialog', { class: 'fs-dialog', 'data-dialog': 'host' },
        h('form', { method: 'dialog' }, h('h2', {}, 'Insert host from template'),
          h('label', {}, 'Template', h('select', { name: 'template', required: true }, tplOptions())),
          h('label', {}, 'Host id', h('input', { type: 'text', name: 'host_id', required: true, pattern: '[^\\s/]+' })),
          h('label', {}, 'Inside group (optional)', h('select', { name: 'parent' })),
          h('p', { class: 'fs-hint fs-dialog-error', hidden: true }),
          h('menu', {}, h('button', { value: 'cancel', formnovalidate: true, class: 'fs-btn' }, 'Cancel'), h('button', { value: 'ok', class: 'fs-btn fs-primary' }, 'Insert'))));

      D.generate = h('dialog', { class: 'fs-dialog', 'data-dialog': 'generate' },
        h('form', { method: 'dialog' }, h('h2', {}, 'Generate cluster'),
          h('div', { class: 'fs-grid2' },
            h('label', {}, 'Host template', h('select', { name: 'template', required: true }, tplOptions())),
            h('label', {}, 'Hosts', h('input', { type: 'number', name: 'hosts', min: '1', max: '4096', value: '4', required: true })),
            h('label', {}, 'Fabric', h('select', { name: 'fabric' },
              h('option', { value: 'rail-optimized' }, 'Rail-optimized leaf/spine'),
              h('option', { value: 'leaf-spine' }, 'Leaf/spine (ToR per rack)'),
              h('option', { value: 'fat-tree' }, '3-tier fat-tree (k)'))),
            h('label', {}, 'Rails', h('input', { type: 'number', name: 'rails', min: '1', max: '64', value: '8' })),
            h('label', {}, 'Spines', h('input', { type: 'number', name: 'spines', min: '1', max: '512', value: '4' })),
            h('label', {}, 'Oversubscription', h('input', { type: 'number', name: 'oversubscription', min: '1', step: 'any', value: '1' })),
            h('label', {}, 'Host link speed', h('select', { name: 'nic_gbps' }, [100, 200, 400, 800].map((g) => h('option', { value: g, selected: g === 400 }, `${g} Gb/s`)))),
            h('label', {}, 'Uplink speed', h('select', { name: 'uplink_gbps' }, [100, 200, 400, 800].map((g) => h('option', { value: g, selected: g === 400 }, `${g} Gb/s`))))),
          h('fieldset', {}, h('legend', {}, 'Into this document'),
            h('label', {}, h('input', { type: 'radio', name: 'merge', value: 'replace', checked: true }), ' replace everything'),
            h('label', {}, h('input', { type: 'radio', name: 'merge', value: 'merge' }), ' merge (keep what is there)')),
          h('p', { class: 'fs-hint fs-dialog-error', hidden: true }),
          h('menu', {}, h('button', { value: 'cancel', formnovalidate: true, class: 'fs-btn' }, 'Cancel'), h('button', { value: 'ok', class: 'fs-btn fs-primary' }, 'Generate'))));

      D.help = h('dialog', { class: 'fs-dialog fs-help', 'data-dialog': 'help' },
        h('form', { method: 'dialog' }, h('h2', {}, 'Keyboard shortcuts'),
          h('table', {}, h('tbody', {}, SHORTCUTS.filter(([k]) => !this.readonly || /^(\?|\/|E|\[|H|L|F|\+|Esc|Shift\+drag)/.test(k)).map(([k, d]) => h('tr', {}, h('th', {}, h('kbd', {}, k)), h('td', {}, d))))),
          h('menu', {}, h('button', { value: 'close', class: 'fs-btn' }, 'Close'))));
      return D;
    }

    fitHeight() {
      const top = this.root.getBoundingClientRect().top + window.scrollY;
      this.root.style.height = `${Math.max(420, window.innerHeight - top)}px`;
      if (this.cy) this.cy.resize();
    }

    /* ================================================================ model events, chrome */
    onModel(e) {
      if (e.type === 'change' && e.ops.some((op) => op.t === 'doc')) { this.view.relayout(); this.clearProblems(); }
      if (e.type === 'load') { this.view.relayout(); }
      if (e.type === 'change' || e.type === 'collapse' || e.type === 'load') {
        this.view.render();
        if (this.hops) this.applyNeighbourhood();
      }
      this.refreshChrome();
    }

    refreshChrome() {
      const E = this.els;
      const dirty = this.model.isDirty();
      E.name.textContent = this.model.doc.name || 'untitled';
      const rev = this.revision == null ? 'new' : `rev ${this.revision}`;
      // A topology never saved (blank) is not "saved": say so until its first revision.
      E.status.textContent = this.readonly ? `read-only · ${rev}` : dirty ? `● unsaved (${rev})` : this.revision == null ? 'new · not saved yet' : `saved · ${rev}`;
      E.status.title = this.revision == null ? 'Never saved' : `Based on revision ${this.revision}`;
      E.status.classList.toggle('fs-dirty', dirty && !this.readonly);
      this.root.dataset.dirty = dirty ? '1' : '0';
      E.undo.disabled = !this.model.canUndo();
      E.redo.disabled = !this.model.canRedo();
      const m = this.model.doc;
      const cy = this.cy;
      E.empty.hidden = m.nodes.length > 0 || m.groups.length > 0;
      if (cy) {
        E.footer.textContent = `${m.nodes.length.toLocaleString()} devices · ${m.links.length.toLocaleString()} links · ${m.groups.length} groups — showing ${cy.nodes().length.toLocaleString()} nodes, ${cy.edges().length.toLocaleString()} edges · render ${Math.round(this.view.lastRenderMs || 0)} ms`;
      }
      this.updateProps();
    }

    toast(msg, kind) {
      const t = this.els.toast;
      t.textContent = msg;
      t.className = `fs-toast${kind ? ' fs-toast-' + kind : ''}`;
      t.hidden = false;
      clearTimeout(this.toastTimer);
      this.toastTimer = setTimeout(() => { t.hidden = true; }, kind === 'error' ? 6000 : 2500);
    }

    initialView() {
      const m = this.model;
      // Big documents with no saved view state open with every host collapsed.
      if (!m.doc.layout.collapsed.length && m.doc.nodes.length > 400 && !this.model.doc.__noAutoCollapse) {
        m.collapsedSet = new Set(m.doc.groups.filter((g) => g.kind === 'host').map((g) => g.id));
        m.doc.layout.collapsed = m.doc.groups.map((g) => g.id).filter((id) => m.collapsedSet.has(id));
      }
      this.view.relayout();
      this.view.render();
      this.cy.fit(undefined, 30);
    }

    /* ================================================================ public hooks */
    load(doc) {
      this.model.load(doc);
      this.clearProblems();
      this.initialView();
      this.refreshChrome();
    }

    getDocument() { return this.model.toJSON(); }

    stats() {
      const m = this.model;
      return {
        nodes: m.doc.nodes.length, links: m.doc.links.length, groups: m.doc.groups.length,
        visibleNodes: this.cy.nodes().length, visibleEdges: this.cy.edges().length,
        collapsed: m.collapsedSet.size, dirty: m.isDirty(), revision: this.revision,
        undo: m.undoStack.length, redo: m.redoStack.length, selected: this.cy.$(':selected').map((e) => e.id()),
        problems: this.cy.elements('.problem').map((e) => e.id()),
        lastRenderMs: this.view.lastRenderMs, loadMs: this.loadMs, zoom: this.cy.zoom(), mode: this.mode,
      };
    }

    /* ================================================================ cytoscape bindings */
    bindCy() {
      const cy = this.cy;
      let selTimer = null;
      cy.on('select unselect', () => {
        clearTimeout(selTimer);
        selTimer = setTimeout(() => { this.updateProps(); this.updateHandle(); if (this.hops) this.applyNeighbourhood(); }, 0);
      });
      cy.on('tap', 'node', (e) => this.onTapNode(e));
      cy.on('tap', (e) => { if (e.target === cy && this.mode === 'connect' && this.connectSource) this.setConnectSource(null); });
      cy.on('dbltap', 'node[etype="group"]', (e) => this.toggleCollapse([e.target.data('ref')]));
      cy.on('dbltap', 'edge[etype="agg"]', (e) => this.expandAggregate(e.target));
      cy.on('pan zoom position', () => this.updateHandle());
      const pending = new Set();
      cy.on('dragfree', 'node', (e) => {
        pending.add(e.target);
        if (pending.size === 1) queueMicrotask(() => { const els = [...pending]; pending.clear(); this.commitDrag(els); });
      });
      const toModel = (ev) => {
        const rect = this.canvas.getBoundingClientRect();
        const pan = cy.pan(); const z = cy.zoom();
        return { x: (ev.clientX - rect.left - pan.x) / z, y: (ev.clientY - rect.top - pan.y) / z, rx: ev.clientX - rect.left, ry: ev.clientY - rect.top };
      };
      this.toModel = toModel;
      this.canvas.addEventListener('mousemove', (ev) => {
        this.pointer = toModel(ev);
        if (this.ghost) this.ghost.position({ x: this.pointer.x, y: this.pointer.y });
      });
      this.canvas.addEventListener('mouseleave', () => { this.pointer = null; });
      // Handle drag: mousedown on the handle, move, release over a device.
      this.els.handle.addEventListener('mousedown', (ev) => {
        ev.preventDefault(); ev.stopPropagation();
        const sel = this.selectedNodes();
        if (sel.length !== 1) return;
        this.startGhost(sel[0]);
        const move = (e2) => { const p = toModel(e2); if (this.ghost) this.ghost.position({ x: p.x, y: p.y }); };
        const up = (e2) => {
          document.removeEventListener('mousemove', move);
          document.removeEventListener('mouseup', up);
          const target = this.nodeAtRendered(toModel(e2));
          const src = this.ghostSource;
          this.stopGhost();
          if (target && target !== src) this.openLinkPicker(src, target);
        };
        document.addEventListener('mousemove', move);
        document.addEventListener('mouseup', up);
      });
    }

    nodeAtRendered(p) {
      let found = null;
      this.cy.nodes('[etype="node"]').forEach((n) => {
        const bb = n.renderedBoundingBox({ includeLabels: false });
        if (p.rx >= bb.x1 && p.rx <= bb.x2 && p.ry >= bb.y1 && p.ry <= bb.y2) found = n.data('ref');
      });
      return found;
    }

    startGhost(srcId) {
      this.stopGhost();
      const src = this.view.elementFor('node', srcId);
      const p = this.pointer || src.position();
      this.cy.add([{ group: 'nodes', data: { id: '__ghost' }, position: { x: p.x, y: p.y }, selectable: false, grabbable: false },
        { group: 'edges', data: { id: '__ghost_edge', source: src.id(), target: '__ghost' } }]);
      this.ghost = this.cy.getElementById('__ghost');
      this.ghostSource = srcId;
      src.addClass('connect-source');
    }

    stopGhost() {
      this.cy.remove('#__ghost');
      this.cy.$('.connect-source').removeClass('connect-source');
      this.ghost = null; this.ghostSource = null;
    }

    updateHandle() {
      const hd = this.els.handle;
      const sel = this.readonly || this.mode ? [] : this.selectedNodes();
      if (sel.length !== 1) { hd.hidden = true; return; }
      const el = this.view.elementFor('node', sel[0]);
      if (el.empty()) { hd.hidden = true; return; }
      const bb = el.renderedBoundingBox({ includeLabels: false });
      hd.hidden = false;
      hd.style.left = `${bb.x2 + 2}px`;
      hd.style.top = `${bb.y1 - 12}px`;
    }

    onTapNode(e) {
      const el = e.target;
      if (this.mode !== 'connect' || el.id().startsWith('__')) return;
      if (el.data('etype') !== 'node') { this.toast('Expand the group to connect one of its devices.'); return; }
      const id = el.data('ref');
      if (!this.connectSource) { this.setConnectSource(id); return; }
      if (id === this.connectSource) { this.setConnectSource(null); return; }
      const src = this.connectSource;
      this.setConnectSource(null);
      this.openLinkPicker(src, id);
    }

    setConnectSource(id) {
      this.connectSource = id;
      if (id) { this.startGhost(id); this.els.modeBanner.textContent = `Connect: now click the target device for ${id} (Esc cancels)`; } else {
        this.stopGhost();
        if (this.mode === 'connect') this.els.modeBanner.textContent = 'Connect: click the source device (Esc cancels)';
      }
    }

    toggleConnect(force) {
      if (this.readonly) return;
      const on = force != null ? force : this.mode !== 'connect';
      this.mode = on ? 'connect' : null;
      this.els.connect.setAttribute('aria-pressed', on ? 'true' : 'false');
      this.els.connect.classList.toggle('fs-active', on);
      this.els.modeBanner.hidden = !on;
      this.setConnectSource(null);
      this.cy.autounselectify(false);
      this.updateHandle();
    }

    commitDrag(els) {
      if (this.readonly) return;
      const m = this.model;
      const newPos = new Map();
      const visitLeaf = (el) => {
        const et = el.data('etype');
        const p = el.position();
        if (et === 'node') newPos.set(el.data('ref'), [p.x, p.y]);
        else if (et === 'group' && el.data('collapsed')) {
          const c = this.view.groupCentre(el.data('ref'));
          const dx = p.x - c[0]; const dy = p.y - c[1];
          if (Math.abs(dx) < 0.5 && Math.abs(dy) < 0.5) return;
          for (const id of m.descendantNodes(el.data('ref'))) { const q = this.view.posOf(id); newPos.set(id, [q[0] + dx, q[1] + dy]); }
        }
      };
      for (const el of els) {
        if (el.removed()) continue;
        if (el.isParent()) el.descendants().filter((d) => !d.isParent()).forEach(visitLeaf); else visitLeaf(el);
      }
      const ops = [];
      for (const [id, p] of newPos) ops.push(m.opPos(id, p));
      m.apply(ops, 'move');
    }

    /* ================================================================ selection helpers */
    selection() {
      const out = { nodes: [], links: [], groups: [], aggs: [] };
      this.cy.$(':selected').forEach((el) => {
        const et = el.data('etype');
        if (et === 'node') out.nodes.push(el.data('ref'));
        else if (et === 'link') out.links.push(el.data('ref'));
        else if (et === 'group') out.groups.push(el.data('ref'));
        else if (et === 'agg') out.aggs.push(el);
      });
      return out;
    }

    selectedNodes() { return this.selection().nodes; }

    aggLinks(aggEl) {
      const [ra, rb] = [aggEl.data('source'), aggEl.data('target')];
      const { nodeRep } = this.view.makeRepResolver();
      return this.model.doc.links.filter((l) => { const a = nodeRep(l.a); const b = nodeRep(l.b); return (a === ra && b === rb) || (a === rb && b === ra); }).map((l) => l.id);
    }

    selectIds(kind, ids) {
      this.cy.$(':selected').unselect();
      for (const id of ids) this.view.elementFor(kind, id).select();
    }

    /* ================================================================ editing */
    placeNode(kind, at, groupHint) {
      if (this.readonly) return;
      const m = this.model;
      let pos = at;
      if (!pos) {
        const ext = this.cy.extent();
        pos = this.pointer || { x: (ext.x1 + ext.x2) / 2, y: (ext.y1 + ext.y2) / 2 };
        // Successive clicks without moving should not stack devices on top of each other.
        if (!this.pointer) { this.placeCount = (this.placeCount || 0) + 1; pos = { x: pos.x + ((this.placeCount % 8) - 4) * 50, y: pos.y + Math.floor(this.placeCount / 8) % 4 * 60 }; }
      }
      // Dropped (or keyed) at a point: it joins the group under that point. Clicked in the
      // palette: it joins only an explicitly selected group.
      let group = groupHint !== undefined ? groupHint : at ? this.groupAt(pos) : null;
      if (!group) {
        const sel = this.selection();
        if (sel.groups.length === 1 && !m.isCollapsed(sel.groups[0])) group = sel.groups[0];
      }
      const role = kind === 'switch' ? 'leaf' : undefined;
      const id = m.newNodeId(kind, group, role);
      const node = { id, kind };
      if (group) node.group = group;
      if (role) node.attrs = { role };
      m.apply([m.opAdd('node', node), m.opPos(id, [pos.x, pos.y])], `add ${id}`);
      this.selectIds('node', [id]);
      return id;
    }

    /** Innermost expanded group whose box contains model point p. */
    groupAt(p) {
      let best = null; let bestArea = Infinity;
      this.cy.nodes('[etype="group"]').forEach((g) => {
        if (!g.isParent() || g.data('collapsed')) return;
        const bb = g.boundingBox({ includeLabels: false });
        if (p.x < bb.x1 || p.x > bb.x2 || p.y < bb.y1 || p.y > bb.y2) return;
        const area = bb.w * bb.h;
        if (area < bestArea) { bestArea = area; best = g.data('ref'); }
      });
      return best;
    }

    suggestTech(a, b) {
      const m = this.model;
      const ka = m.node(a).kind; const kb = m.node(b).kind;
      const key = [ka, kb].sort().join('|');
      const counts = new Map();
      for (const l of m.doc.links) {
        const na = m.node(l.a); const nb = m.node(l.b);
        if (!na || !nb || !l.tech || [na.kind, nb.kind].sort().join('|') !== key) continue;
        counts.set(l.tech, (counts.get(l.tech) || 0) + 1);
      }
      if (counts.size) return [...counts.entries()].sort((x, y) => y[1] - x[1])[0][0];
      const has = (k) => ka === k || kb === k;
      const pick = (...names) => names.find((n) => this.catalog.tech(n)) || this.catalog.techs.keys().next().value;
      if (has('nvswitch') || (ka === 'gpu' && kb === 'gpu')) return pick('nvlink4x4', 'nvlink4x18');
      if (ka === 'cpu' && kb === 'cpu') return pick('upi-spr', 'upi');
      if (has('memory')) return pick('ddr5x8', 'ddr5');
      if (has('switch') || has('storage')) return pick('ib-ndr', 'eth400');
      return pick('pcie5x16', 'pcie4x16');
    }

    openLinkPicker(a, b) {
      if (this.readonly) return;
      const d = this.dialogs.link;
      const f = d.querySelector('form');
      d.querySelector('.fs-ends').textContent = `${a}  ⟷  ${b}`;
      f.tech.value = this.suggestTech(a, b);
      f.querySelector('input[value=effective]').checked = this.catalog.basis !== 'raw';
      f.querySelector('input[value=raw]').checked = this.catalog.basis === 'raw';
      this.fillTech();
      d.returnValue = '';
      d.onclose = () => {
        if (d.returnValue !== 'ok') return;
        const m = this.model;
        const link = { id: m.newLinkId(a, b), a, b, tech: f.tech.value };
        const cap = parseFloat(f.capacity.value); const lat = parseFloat(f.latency.value);
        if (isFinite(cap)) link.capacity_gbps = cap;
        if (isFinite(lat)) link.latency_ns = lat;
        if (f.basis.value === 'raw') link.capacity_basis = 'raw';
        m.apply([m.opAdd('link', link)], `connect ${a} – ${b}`);
        this.selectIds('link', [link.id]);
        this.toast(`Linked ${a} ⟷ ${b} (${link.tech}, ${NS.fmtGbps(link.capacity_gbps)})`);
      };
      d.showModal();
      f.tech.focus();
    }

    deleteSelection() {
      if (this.readonly) return;
      const sel = this.selection();
      for (const agg of sel.aggs) sel.links.push(...this.aggLinks(agg));
      const ops = this.model.opsDelete(sel);
      if (!ops.length) return;
      const n = sel.nodes.length + sel.links.length + sel.groups.length;
      this.model.apply(ops, `delete ${n} item${n > 1 ? 's' : ''}`);
      this.toast(`Deleted ${n} item${n > 1 ? 's' : ''} (Ctrl+Z to undo)`);
    }

    copy() {
      const m = this.model;
      const sel = this.selection();
      const groups = new Set();
      for (const g of sel.groups) { groups.add(g); for (const d of m.descendantGroups(g)) groups.add(d); }
      const nodes = new Set(sel.nodes);
      for (const g of sel.groups) for (const n of m.descendantNodes(g)) nodes.add(n);
      if (!nodes.size && !groups.size) return;
      const links = m.doc.links.filter((l) => nodes.has(l.a) && nodes.has(l.b));
      this.clipboard = {
        groups: m.doc.groups.filter((g) => groups.has(g.id)).map(clone),
        nodes: m.doc.nodes.filter((n) => nodes.has(n.id)).map(clone),
        links: links.map(clone),
        pos: Object.fromEntries([...nodes].map((id) => [id, this.view.posOf(id)])),
      };
      this.pasteCount = 0;
      this.toast(`Copied ${nodes.size} device${nodes.size === 1 ? '' : 's'}${links.length ? `, ${links.length} links` : ''}${groups.size ? `, ${groups.size} groups` : ''}`);
    }

    paste() {
      if (this.readonly || !this.clipboard) return;
      const m = this.model;
      const cb = this.clipboard;
      this.pasteCount += 1;
      const off = 48 * this.pasteCount;
      const taken = new Set();
      const gmap = new Map();
      for (const g of cb.groups) { const id = m.uniqueId(g.id, taken); taken.add(id); gmap.set(g.id, id); }
      const nmap = new Map();
      for (const n of cb.nodes) {
        let id;
        if (n.group && gmap.has(n.group) && n.id.startsWith(n.group + '/')) id = gmap.get(n.group) + n.id.slice(n.group.length);
        else id = m.uniqueId(n.id, taken);
        if (m.idTaken(id) || taken.has(id)) id = m.uniqueId(id, taken);
        taken.add(id); nmap.set(n.id, id);
      }
      const ops = [];
      for (const g of cb.groups) {
        const ng = { ...clone(g), id: gmap.get(g.id) };
        if (g.parent && gmap.has(g.parent)) ng.parent = gmap.get(g.parent);
        else if (g.parent && !m.group(g.parent)) delete ng.parent;
        ops.push(m.opAdd('group', ng));
      }
      for (const n of cb.nodes) {
        const nn = { ...clone(n), id: nmap.get(n.id) };
        if (n.group && gmap.has(n.group)) nn.group = gmap.get(n.group);
        else if (n.group && !m.group(n.group)) delete nn.group;
        ops.push(m.opAdd('node', nn));
        const p = cb.pos[n.id];
        ops.push(m.opPos(nn.id, [p[0] + off, p[1] + off]));
      }
      const ltaken = new Set();
      for (const l of cb.links) {
        const a = nmap.get(l.a); const b = nmap.get(l.b);
        let id = l.id;
        for (const [o, nw] of [[l.a, a], [l.b, b]]) if (id.includes(o)) id = id.replace(o, nw);
        id = m.uniqueLinkId(id, ltaken); ltaken.add(id);
        ops.push(m.opAdd('link', { ...clone(l), id, a, b }));
      }
      m.apply(ops, `paste ${cb.nodes.length} devices`);
      this.cy.$(':selected').unselect();
      for (const g of cb.groups) if (!g.parent || !gmap.has(g.parent)) this.view.elementFor('group', gmap.get(g.id)).select();
      for (const n of cb.nodes) if (!n.group || !gmap.has(n.group)) this.view.elementFor('node', nmap.get(n.id)).select();
      this.toast(`Pasted ${cb.nodes.length} device${cb.nodes.length === 1 ? '' : 's'}`);
    }

    nudge(dx, dy) {
      if (this.readonly) return;
      const sel = this.selection();
      const m = this.model;
      const ids = new Set(sel.nodes);
      for (const g of sel.groups) for (const n of m.descendantNodes(g)) ids.add(n);
      if (!ids.size) return;
      const ops = [...ids].map((id) => { const p = this.view.posOf(id); return m.opPos(id, [p[0] + dx, p[1] + dy]); });
      m.apply(ops, 'nudge');
    }

    undo() { const l = this.model.undo(); if (l) this.toast(`Undid: ${l}`); }
    redo() { const l = this.model.redo(); if (l) this.toast(`Redid: ${l}`); }

    relayoutAll() {
      const m = this.model;
      const ops = Object.keys(m.doc.layout.positions).map((id) => m.opPos(id, null));
      if (!ops.length) { this.toast('Already laid out automatically.'); return; }
      m.apply(ops, 're-layout');
      this.view.relayout();
      this.view.render();
      this.fit();
    }

    /* ================================================================ groups */
    toggleCollapse(groupIds) {
      const m = this.model;
      groupIds = groupIds.filter((g) => m.group(g));
      if (!groupIds.length) return;
      const collapse = !m.isCollapsed(groupIds[0]);
      m.setCollapsed(groupIds, collapse);
      const el = this.view.elementFor('group', groupIds[0]);
      this.cy.$(':selected').unselect();
      el.select();
      // Collapsing at reading zoom would fill the screen with one block: step back a little.
      if (collapse && el.renderedWidth() > 0.6 * this.cy.width()) {
        this.cy.animate({ fit: { eles: el.closedNeighborhood(), padding: 60 } }, { duration: 200 });
      }
    }

    toggleSelectedGroup() {
      const sel = this.selection();
      const m = this.model;
      let ids = sel.groups;
      if (!ids.length && sel.nodes.length) ids = [...new Set(sel.nodes.map((n) => m.hostOf(n) || m.node(n).group).filter(Boolean))];
      this.toggleCollapse(ids);
    }

    collapseAll(collapse) {
      const m = this.model;
      const hosts = m.doc.groups.filter((g) => g.kind === 'host').map((g) => g.id);
      const ids = collapse ? hosts : m.doc.groups.map((g) => g.id);
      if (!collapse && m.doc.nodes.length > 3000) this.toast(`Expanding ${hosts.length} hosts (${m.doc.nodes.length.toLocaleString()} devices)…`);
      m.setCollapsed(ids, collapse);
      this.fit();
    }

    expandAggregate(aggEl) {
      const ids = [aggEl.data('source'), aggEl.data('target')].filter((id) => id.startsWith('g:')).map((id) => id.slice(2));
      this.model.setCollapsed(ids, false);
    }

    /* ================================================================ neighbourhood */
    cycleHops() {
      this.hops = (this.hops + 1) % 4;
      if (this.hops && !this.cy.$('node:selected').length) { this.hops = 0; this.toast('Select a device first.'); }
      this.applyNeighbourhood();
    }

    applyNeighbourhood() {
      const cy = this.cy;
      cy.elements('.faded, .nhood').removeClass('faded nhood');
      if (!this.hops) return;
      const m = this.model;
      const sel = this.selection();
      const start = new Set(sel.nodes);
      for (const g of sel.groups) for (const n of m.descendantNodes(g)) start.add(n);
      if (!start.size) { this.hops = 0; return; }
      let frontier = [...start];
      const seen = new Set(start);
      for (let k = 0; k < this.hops; k += 1) {
        const next = [];
        for (const id of frontier) for (const lid of m.linksOf(id)) {
          const l = m.link(lid); const o = l.a === id ? l.b : l.a;
          if (!seen.has(o)) { seen.add(o); next.push(o); }
        }
        frontier = next;
      }
      const { nodeRep } = this.view.makeRepResolver();
      const reps = new Set([...seen].map(nodeRep));
      cy.batch(() => {
        cy.elements().forEach((el) => {
          const inSet = el.isNode() ? reps.has(el.id()) || (el.isParent() && el.descendants().some((d) => reps.has(d.id())))
            : reps.has(el.data('source')) && reps.has(el.data('target'));
          el.addClass(inSet ? 'nhood' : 'faded');
        });
      });
      this.toast(`${this.hops}-hop neighbourhood: ${seen.size - start.size} devices (H for more, Esc clears)`);
    }

    /* ================================================================ search */
    bindSearch() {
      const input = this.els.search;
      const list = this.els.results;
      let items = [];
      let active = 0;
      const render = () => {
        list.innerHTML = '';
        items.forEach((it, i) => list.append(h('li', { role: 'option', class: i === active ? 'fs-active' : '', 'aria-selected': i === active ? 'true' : 'false', onmousedown: (e) => { e.preventDefault(); choose(i); } },
          h('span', { class: `fs-swatch fs-k-${it.kind}` }), it.id, h('small', {}, it.kind))));
        list.hidden = !items.length;
      };
      const choose = (i) => {
        const it = items[i];
        if (!it) return;
        list.hidden = true;
        input.blur();
        this.focusElement(it.type, it.id);
      };
      input.addEventListener('input', () => {
        const q = input.value.trim().toLowerCase();
        active = 0;
        if (!q) { items = []; render(); return; }
        const m = this.model;
        const score = (id) => { const s = id.toLowerCase(); return s === q ? 0 : s.startsWith(q) ? 1 : s.split('/').pop().startsWith(q) ? 2 : s.includes(q) ? 3 : -1; };
        const found = [];
        for (const g of m.doc.groups) { const sc = score(g.id); if (sc >= 0) found.push({ type: 'group', id: g.id, kind: g.kind || 'group', sc }); }
        for (const n of m.doc.nodes) { const sc = score(n.id); if (sc >= 0) found.push({ type: 'node', id: n.id, kind: n.kind, sc }); if (found.length > 400) break; }
        for (const l of m.doc.links) { if (found.length > 400) break; const sc = score(l.id); if (sc === 0) found.push({ type: 'link', id: l.id, kind: 'link', sc }); }
        found.sort((a, b) => a.sc - b.sc || naturalCompare(a.id, b.id));
        items = found.slice(0, 12);
        render();
      });
      input.addEventListener('keydown', (e) => {
        if (e.key === 'ArrowDown') { active = Math.min(active + 1, items.length - 1); render(); e.preventDefault(); }
        else if (e.key === 'ArrowUp') { active = Math.max(active - 1, 0); render(); e.preventDefault(); }
        else if (e.key === 'Enter') { choose(active); e.preventDefault(); }
        else if (e.key === 'Escape') { input.value = ''; items = []; render(); input.blur(); }
      });
      input.addEventListener('blur', () => setTimeout(() => { list.hidden = true; }, 100));
    }

    /** Expand what hides the element, select it and zoom to it. */
    focusElement(type, id) {
      const m = this.model;
      let groupChain = [];
      if (type === 'node' && m.node(id)) groupChain = m.ancestors(m.node(id).group);
      else if (type === 'group' && m.group(id)) groupChain = m.ancestors(m.group(id).parent);
      else if (type === 'link' && m.link(id)) { const l = m.link(id); groupChain = [...m.ancestors(m.node(l.a) && m.node(l.a).group), ...m.ancestors(m.node(l.b) && m.node(l.b).group)]; }
      m.setCollapsed(groupChain, false);
      const el = this.view.elementFor(type, id);
      if (el.empty()) return false;
      this.cy.$(':selected').unselect();
      el.select();
      let zoom = Math.min(Math.max(this.cy.zoom(), 1.3), 2);
      if (type === 'group' || el.isParent()) {
        // Fit the whole group, but never zoom in further than reading distance.
        const bb = el.boundingBox();
        zoom = Math.min(2, Math.max(0.3, Math.min(this.cy.width() / (bb.w + 80), this.cy.height() / (bb.h + 80))));
      }
      this.cy.stop();
      this.cy.animate({ zoom, center: { eles: el } }, { duration: 250 });
      return true;
    }

    /* ================================================================ zoom */
    zoomBy(f) {
      const cy = this.cy;
      cy.zoom({ level: Math.max(cy.minZoom(), Math.min(cy.maxZoom(), cy.zoom() * f)), renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
    }

    fit() { this.cy.stop(); this.cy.fit(this.cy.elements().not('#__ghost, #__ghost_edge'), 30); }

    setEdgeLabels(on) {
      this.view.setEdgeLabels(on);
      this.els.labels.querySelector('input').checked = on;
    }

    toggleHelp() {
      const d = this.dialogs.help;
      if (d.open) d.close(); else d.showModal();
    }

    /* ================================================================ properties panel */
    updateProps() {
      if (!this.cy) return;
      const P = this.els.props;
      const m = this.model;
      const sel = this.selection();
      const total = sel.nodes.length + sel.links.length + sel.groups.length + sel.aggs.length;
      const ro = this.readonly;
      P.innerHTML = '';
      const field = (label, input, hint) => h('label', { class: 'fs-field' }, h('span', {}, label), input, hint ? h('small', { class: 'fs-hint' }, hint) : null);
      const text = (name, value, onchange, extra = {}) => h('input', { type: 'text', name, value: value == null ? '' : value, disabled: ro, onchange, ...extra });
      const number = (name, value, onchange, extra = {}) => h('input', { type: 'number', name, step: 'any', value: value == null ? '' : value, disabled: ro, onchange, ...extra });
      if (total === 0) {
        appendAll(P, h('h3', {}, 'Document'),
          field('Name', text('doc-name', m.doc.name, (e) => m.apply([{ t: 'meta', key: 'name', before: m.doc.name, after: e.target.value }], 'rename document'))),
          h('p', { class: 'fs-hint' }, ro ? 'Read-only view: pan, zoom, search, collapse and export.' : 'Select a device, link or group to edit it. Drag kinds from the palette, press C to connect, ? for shortcuts.'));
        return;
      }
      if (total > 1) {
        appendAll(P, h('h3', {}, `${total} selected`),
          h('p', {}, `${sel.nodes.length} devices, ${sel.links.length + sel.aggs.length} links, ${sel.groups.length} groups`),
          ro ? null : h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => this.deleteSelection() }, 'Delete selection'));
        return;
      }
      if (sel.nodes.length) return this.nodeProps(P, m.node(sel.nodes[0]), field, text, number);
      if (sel.links.length) return this.linkProps(P, m.link(sel.links[0]), field, text, number);
      if (sel.groups.length) return this.groupProps(P, m.group(sel.groups[0]), field, text);
      if (sel.aggs.length) {
        const agg = sel.aggs[0];
        const ids = this.aggLinks(agg);
        appendAll(P, h('h3', {}, 'Aggregate link'),
          h('p', {}, `${agg.data('label')} between ${agg.data('source').slice(2)} and ${agg.data('target').slice(2)}`),
          h('ul', { class: 'fs-list' }, ids.slice(0, 12).map((id) => h('li', {}, id)), ids.length > 12 ? h('li', {}, `… ${ids.length - 12} more`) : null),
          h('button', { type: 'button', class: 'fs-btn', onclick: () => this.expandAggregate(agg) }, 'Expand to see the links'));
      }
    }

    nodeProps(P, n, field, text, number) {
      const m = this.model;
      const attrs = n.attrs || {};
      const update = (mut, label) => {
        const after = clone(n);
        mut(after);
        if (after.attrs && !Object.keys(after.attrs).length) delete after.attrs;
        m.apply([m.opUpdate('node', n, after)], label);
      };
      const setAttr = (key, raw, numeric) => update((x) => {
        x.attrs = x.attrs || {};
        const v = numeric ? (raw === '' ? null : Number(raw)) : raw.trim();
        if (v === '' || v == null || (numeric && !isFinite(v))) delete x.attrs[key]; else x.attrs[key] = v;
      }, `set ${key} of ${n.id}`);
      const idErr = h('small', { class: 'fs-error', hidden: true, 'data-error': 'id' });
      const idInput = text('id', n.id, (e) => {
        const v = e.target.value.trim();
        const err = !v ? 'The id cannot be empty.' : /\s/.test(v) ? 'No spaces in ids.' : v !== n.id && m.idTaken(v) ? `“${v}” is already used.` : '';
        idErr.textContent = err; idErr.hidden = !err;
        e.target.setAttribute('aria-invalid', err ? 'true' : 'false');
        if (err || v === n.id) return;
        m.apply(m.opsRenameNode(n.id, v), `rename ${n.id} → ${v}`);
        this.selectIds('node', [v]);
      });
      const kindSel = h('select', { name: 'kind', disabled: this.readonly, onchange: (e) => update((x) => { x.kind = e.target.value; }, `kind of ${n.id}`) },
        this.catalog.nodeKinds.map((k) => h('option', { value: k, selected: k === n.kind }, KIND_LABEL[k] || k)));
      const groupSel = h('select', { name: 'group', disabled: this.readonly, onchange: (e) => update((x) => { if (e.target.value) x.group = e.target.value; else delete x.group; }, `move ${n.id} to group`) },
        h('option', { value: '' }, '— none (fabric) —'),
        this.model.doc.groups.length > 300 ? (n.group ? h('option', { value: n.group, selected: true }, n.group) : null)
          : this.model.doc.groups.map((g) => h('option', { value: g.id, selected: g.id === n.group }, `${g.id} (${g.kind})`)));
      const known = new Set(['model', 'rail', 'role', 'socket']);
      const extra = Object.fromEntries(Object.entries(attrs).filter(([k]) => !known.has(k)));
      const extraArea = h('textarea', { name: 'attrs-extra', rows: '3', disabled: this.readonly, spellcheck: 'false' }, Object.keys(extra).length ? JSON.stringify(extra) : '');
      const extraErr = h('small', { class: 'fs-error', hidden: true });
      extraArea.addEventListener('change', () => {
        let obj = {};
        try { obj = extraArea.value.trim() ? JSON.parse(extraArea.value) : {}; if (typeof obj !== 'object' || Array.isArray(obj)) throw new Error('an object'); } catch (err) {
          extraErr.textContent = 'Expected a JSON object, e.g. {"port_gbps": 400}'; extraErr.hidden = false; return;
        }
        update((x) => { const kept = Object.fromEntries(Object.entries(x.attrs || {}).filter(([k]) => known.has(k))); x.attrs = { ...kept, ...obj }; }, `attrs of ${n.id}`);
      });
      const links = m.linksOf(n.id);
      appendAll(P, h('h3', {}, h('span', { class: `fs-swatch fs-k-${n.kind}` }), ` ${KIND_LABEL[n.kind] || n.kind}`),
        field('Id', idInput), idErr,
        field('Kind', kindSel),
        field('Group', groupSel),
        n.kind === 'switch' ? field('Role', h('select', { name: 'role', disabled: this.readonly, onchange: (e) => setAttr('role', e.target.value) },
          h('option', { value: '' }, '—'), ROLES.map((r) => h('option', { value: r, selected: attrs.role === r }, r)))) : null,
        field('Model', text('model', attrs.model, (e) => setAttr('model', e.target.value))),
        field('Rail', number('rail', attrs.rail, (e) => setAttr('rail', e.target.value, true), { min: '0', step: '1' })),
        field('Socket', number('socket', attrs.socket, (e) => setAttr('socket', e.target.value, true), { min: '0', step: '1' })),
        field('Capacity override (Gb/s)', number('capacity_gbps', n.capacity_gbps, (e) => update((x) => {
          const v = parseFloat(e.target.value); if (isFinite(v)) x.capacity_gbps = v; else delete x.capacity_gbps;
        }, `capacity of ${n.id}`), { min: '0', placeholder: 'none — not a shared resource' }), 'A node with a capacity becomes a resource (root complex, memory).'),
        field('Other attributes (JSON)', extraArea), extraErr,
        h('p', { class: 'fs-hint' }, `${links.length} link${links.length === 1 ? '' : 's'}${n.group ? ` · in ${n.group}` : ''}`),
        this.readonly ? null : h('div', { class: 'fs-row' },
          h('button', { type: 'button', class: 'fs-btn', onclick: () => { this.toggleConnect(true); this.setConnectSource(n.id); } }, 'Connect from here'),
          h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => this.deleteSelection() }, 'Delete')));
    }

    linkProps(P, l, field, text, number) {
      const m = this.model;
      const t = this.catalog.tech(l.tech);
      const update = (mut, label) => { const after = clone(l); mut(after); m.apply([m.opUpdate('link', l, after)], label); };
      const techSel = this.techSelect();
      techSel.disabled = this.readonly;
      if (!t && l.tech) techSel.prepend(h('option', { value: l.tech }, `${l.tech} (not in catalog)`));
      techSel.value = l.tech || '';
      techSel.addEventListener('change', () => update((x) => {
        const nt = this.catalog.tech(techSel.value);
        x.tech = techSel.value;
        if (nt) { x.capacity_gbps = x.capacity_basis === 'raw' ? nt.raw : nt.effective; x.latency_ns = nt.latency; }
      }, `tech of ${l.id}`));
      const dflt = t ? (l.capacity_basis === 'raw' ? t.raw : t.effective) : null;
      const setNum = (key) => (e) => update((x) => { const v = parseFloat(e.target.value); if (isFinite(v)) x[key] = v; else delete x[key]; }, `${key} of ${l.id}`);
      const overridden = t && l.capacity_gbps != null && Math.abs(l.capacity_gbps - dflt) > 1e-9;
      appendAll(P, h('h3', {}, 'Link'),
        field('Id', text('id', l.id, null, { readonly: true })),
        h('p', { class: 'fs-ends' }, `${l.a} ⟷ ${l.b}`),
        field('Technology', techSel),
        field('Capacity basis', h('select', { name: 'capacity_basis', disabled: this.readonly, onchange: (e) => update((x) => {
          if (e.target.value === 'raw') x.capacity_basis = 'raw'; else delete x.capacity_basis;
          if (t) x.capacity_gbps = e.target.value === 'raw' ? t.raw : t.effective;
        }, `basis of ${l.id}`) }, h('option', { value: 'effective', selected: l.capacity_basis !== 'raw' }, 'effective'), h('option', { value: 'raw', selected: l.capacity_basis === 'raw' }, 'raw line rate'))),
        field('Capacity (Gb/s per direction)', number('capacity_gbps', l.capacity_gbps, setNum('capacity_gbps'), { min: '0', placeholder: dflt == null ? '' : `catalog: ${dflt}` }),
          t ? `catalog: ${NS.fmtGbps(t.effective)} effective, ${NS.fmtGbps(t.raw)} raw${overridden ? ' · overridden' : ''}` : null),
        field('Latency (ns)', number('latency_ns', l.latency_ns, setNum('latency_ns'), { min: '0', placeholder: t ? `catalog: ${t.latency}` : '' })),
        this.readonly ? null : h('div', { class: 'fs-row' },
          t ? h('button', { type: 'button', class: 'fs-btn', onclick: () => update((x) => { x.capacity_gbps = dflt; x.latency_ns = t.latency; }, `reset ${l.id}`) }, 'Reset to catalog') : null,
          h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => this.deleteSelection() }, 'Delete')));
    }

    groupProps(P, g, field, text) {
      const m = this.model;
      const collapsed = m.isCollapsed(g.id);
      const nodes = m.descendantNodes(g.id);
      const update = (mut, label) => { const after = clone(g); mut(after); m.apply([m.opUpdate('group', g, after)], label); };
      appendAll(P, h('h3', {}, `${g.kind === 'host' ? 'Host' : g.kind === 'rack' ? 'Rack' : 'Group'} ${g.id}`),
        field('Id', text('id', g.id, null, { readonly: true })),
        field('Kind', h('select', { name: 'gkind', disabled: this.readonly, onchange: (e) => update((x) => { x.kind = e.target.value; }, `kind of ${g.id}`) },
          this.catalog.groupKinds.map((k) => h('option', { value: k, selected: k === g.kind }, k)))),
        field('Template', text('template', g.template, (e) => update((x) => { if (e.target.value.trim()) x.template = e.target.value.trim(); else delete x.template; }, `template of ${g.id}`))),
        field('Parent', text('parent', g.parent, null, { readonly: true })),
        h('p', { class: 'fs-hint' }, `${nodes.length} devices inside`),
        h('div', { class: 'fs-row' },
          h('button', { type: 'button', class: 'fs-btn', 'data-action': 'toggle-collapse', onclick: () => this.toggleCollapse([g.id]) }, collapsed ? 'Expand (E)' : 'Collapse (E)'),
          this.readonly ? null : h('button', { type: 'button', class: 'fs-btn fs-danger', onclick: () => this.deleteSelection() }, 'Delete group')));
    }

    /* ================================================================ keyboard */
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
    }

    /* ================================================================ drop: palette kinds and files */
    bindDrop() {
      const wrap = this.canvasWrap;
      wrap.addEventListener('dragover', (e) => {
        const types = [...e.dataTransfer.types];
        if (types.includes('application/x-fabricscope-kind') && !this.readonly) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; }
        else if (types.includes('Files') && !this.readonly) { e.preventDefault(); this.els.dropHint.hidden = false; }
      });
      wrap.addEventListener('dragleave', () => { this.els.dropHint.hidden = true; });
      wrap.addEventListener('drop', (e) => {
        this.els.dropHint.hidden = true;
        if (this.readonly) return;
        const kind = e.dataTransfer.getData('application/x-fabricscope-kind');
        e.preventDefault();
        if (kind) { const p = this.toModel(e); this.placeNode(kind, { x: p.x, y: p.y }); return; }
        const file = e.dataTransfer.files && e.dataTransfer.files[0];
        if (file) this.importFile(file);
      });
    }

    /* ================================================================ import / export */
    async importFile(file) {
      if (!file || this.readonly) return;
      const text = await file.text();
      this.els.file.value = '';
      // A topology document replaces the canvas; anything else is a server description
      // (NCCL XML, nvidia-smi topo -m, hwloc) that the server parses into one new host.
      if (!/^\s*[{[]/.test(text)) { await this.importServer(file.name, text); return; }
      let doc;
      try { doc = JSON.parse(text); } catch (err) { this.toast(`${file.name}: not valid JSON (${err.message})`, 'error'); return; }
      if (doc && doc.format === 'fabricscope.scenario/1' && doc.topology && typeof doc.topology === 'object') doc = doc.topology;
      if (!doc || !Array.isArray(doc.nodes)) { this.toast(`${file.name}: not a fabricscope.topology/1 document (no "nodes" list)`, 'error'); return; }
      this.replaceDocument(doc, `import ${file.name}`);
      this.toast(`Imported ${file.name}: ${doc.nodes.length} devices, ${(doc.links || []).length} links (Ctrl+Z to undo)`);
    }

    replaceDocument(doc, label) {
      const m = this.model;
      const next = NS.normalizeDocument(doc);
      if (!next.layout.collapsed.length && next.nodes.length > 400) next.layout.collapsed = next.groups.filter((g) => g.kind === 'host').map((g) => g.id);
      m.apply([{ t: 'doc', id: '', before: clone(m.doc), after: next }], label);
      this.fit();
    }

    exportJSON(suffix = '') {
      const doc = this.getDocument();
      const name = `${(doc.name || 'topology').replace(/[^\w.-]+/g, '_')}${suffix}.json`;
      download(name, new Blob([JSON.stringify(doc, null, 2) + '\n'], { type: 'application/json' }));
      return name;
    }

    exportPNG() {
      const bg = getComputedStyle(this.canvas).getPropertyValue('--fs-bg').trim() || '#ffffff';
      const blob = this.cy.png({ output: 'blob', full: true, scale: 2, maxWidth: 8000, maxHeight: 8000, bg });
      download(`${(this.model.doc.name || 'topology').replace(/[^\w.-]+/g, '_')}.png`, blob);
    }

    /* ================================================================ server: save, validate, templates */
    openSave() {
      if (this.readonly) return;
      if (!this.urls.save) { this.toast('Saving is not available here.', 'error'); return; }
      const d = this.dialogs.save;
      d.returnValue = '';
      d.onclose = () => { if (d.returnValue === 'ok') this.save(d.querySelector('input[name=message]').value); };
      d.showModal();
    }

    async save(message) {
      const doc = this.getDocument();
      this.els.save.disabled = true;
      this.els.status.textContent = 'saving…';
      // The API's base_revision is 0 for a topology without any revision yet (a blank one), never null.
      const base = this.revision == null ? 0 : this.revision;
      const res = await NS.requestJSON(this.urls.save, { method: 'POST', csrf: this.config.csrf_token, body: { document: doc, base_revision: base, message: message || '' } });
      this.els.save.disabled = false;
      if (res.status === 201 || res.status === 200) {
        const b = res.body || {};
        const rev = b.revision != null ? (typeof b.revision === 'object' ? b.revision.number : b.revision) : b.number;
        if (rev != null) this.revision = rev;
        this.model.markSaved();
        this.clearProblems();
        this.toast(`Saved revision ${this.revision}`, 'ok');
      } else if (res.status === 409) {
        const cur = res.body && res.body.error && res.body.error.details && res.body.error.details.current_revision;
        const d = this.dialogs.conflict;
        d.querySelector('.fs-conflict-text').textContent = `You started from revision ${this.revision == null ? '(none)' : this.revision}; the latest is revision ${cur == null ? '?' : cur}.`;
        d.showModal();
      } else if (res.status === 400) {
        this.showProblems(res.body, doc);
        this.toast(`Not saved: ${NS.errorMessage(res)}`, 'error');
      } else {
        this.toast(`Not saved: ${NS.errorMessage(res)}`, 'error');
      }
      this.refreshChrome();
    }

    reloadLatest() {
      this.bypassUnload = true;
      window.location.reload();
    }

    async validate() {
      if (!this.urls.validate) return;
      const doc = this.getDocument();
      const res = await NS.requestJSON(this.urls.validate, { method: 'POST', csrf: this.config.csrf_token, body: { document: doc } });
      const b = res.body || {};
      const problems = res.status === 400 ? b : b.problems && b.problems.length ? { error: { message: 'The document has problems', details: b.problems } } : null;
      if (res.ok && !problems) { this.clearProblems(); this.toast('Valid topology ✓', 'ok'); return; }
      if (problems) { this.showProblems(problems, doc); this.toast(NS.errorMessage({ body: problems, status: res.status }), 'error'); return; }
      this.toast(`Validation failed: ${NS.errorMessage(res)}`, 'error');
    }

    /** Map "nodes[3].id" / "links[12].b" / "groups[1]" paths of the sent document to elements. */
    resolvePath(path, doc) {
      const mm = /^(nodes|links|groups)\[(\d+)\]/.exec(path || '');
      if (!mm) return null;
      const item = (doc[mm[1]] || [])[Number(mm[2])];
      if (!item) return null;
      return { kind: mm[1] === 'nodes' ? 'node' : mm[1] === 'links' ? 'link' : 'group', id: item.id };
    }

    showProblems(body, doc) {
      const err = (body && body.error) || {};
      const details = Array.isArray(err.details) ? err.details : [];
      this.problems = details.map((p) => ({ ...p, target: this.resolvePath(p.path, doc) }));
      this.view.setProblems(this.problems.filter((p) => p.target).map((p) => p.target));
      const S = this.els.problems;
      S.innerHTML = '';
      S.hidden = false;
      S.append(h('h3', {}, `${this.problems.length || 'Some'} problem${this.problems.length === 1 ? '' : 's'}`),
        h('p', { class: 'fs-hint' }, err.message || 'The server rejected the document.'),
        h('ol', { class: 'fs-problem-list' }, this.problems.map((p, i) => h('li', {},
          h('button', { type: 'button', class: 'fs-problem', 'data-problem': String(i), disabled: !p.target, title: p.target ? 'Show it on the canvas' : '',
            onclick: () => p.target && this.focusElement(p.target.kind, p.target.id) },
          h('code', {}, p.path || '(document)'), ' ', p.message || '')))),
        h('button', { type: 'button', class: 'fs-btn', onclick: () => this.clearProblems() }, 'Dismiss'));
    }

    clearProblems() {
      this.problems = [];
      if (this.view) this.view.setProblems([]);
      this.els.problems.hidden = true;
      this.els.problems.innerHTML = '';
    }

    templateUrl(name, hostId) {
      const raw = this.urls.template_host || '';
      const enc = encodeURIComponent(name);
      let u = raw.replace(/<name>|\{name\}|__name__|%3Cname%3E/g, enc);
      const url = new URL(u, window.location.href);
      url.searchParams.set('host_id', hostId);
      return url.toString();
    }

    openInsertHost() {
      if (this.readonly) return;
      if (!this.templates.length || !this.urls.template_host) { this.toast('No host templates are available.', 'error'); return; }
      const d = this.dialogs.host;
      const f = d.querySelector('form');
      const m = this.model;
      f.host_id.value = m.uniqueId(m.doc.groups.some((g) => /^h\d+$/.test(g.id)) ? 'h0' : 'h0');
      const parent = f.parent;
      parent.innerHTML = '';
      parent.append(h('option', { value: '' }, '— top level —'), ...m.doc.groups.filter((g) => g.kind !== 'host').map((g) => h('option', { value: g.id }, `${g.id} (${g.kind})`)));
      const err = d.querySelector('.fs-dialog-error');
      err.hidden = true;
      d.returnValue = '';
      d.onclose = async () => {
        if (d.returnValue !== 'ok') return;
        const hostId = f.host_id.value.trim();
        if (m.idTaken(hostId)) { this.toast(`“${hostId}” is already used.`, 'error'); return; }
        await this.insertHost(f.template.value, hostId, f.parent.value || null);
      };
      d.showModal();
    }

    async importServer(name, text) {
      if (!this.urls.import_host) { this.toast(`${name}: only topology JSON can be imported here.`, 'error'); return null; }
      const hostId = this.model.uniqueId('h0');
      const res = await NS.requestJSON(this.urls.import_host, { method: 'POST', csrf: this.config.csrf_token, body: { text, host_id: hostId } });
      if (!res.ok) { this.toast(`${name}: ${NS.errorMessage(res)}`, 'error'); return null; }
      const warnings = (res.body && res.body.warnings) || [];
      const done = this.insertFragment(res.body.document, hostId, null, `import ${name}`);
      if (done) this.toast(`Imported ${name} (${res.body.format}) as host ${hostId}` + (warnings.length ? ` · ${warnings.length} default${warnings.length > 1 ? 's' : ''} assumed: ${warnings[0]}${warnings.length > 1 ? ' …' : ''}` : ''), 'ok');
      return done;
    }

    async insertHost(template, hostId, parent) {
      const res = await NS.requestJSON(this.templateUrl(template, hostId));
      if (!res.ok) { this.toast(`Template ${template}: ${NS.errorMessage(res)}`, 'error'); return null; }
      const done = this.insertFragment(res.body && res.body.document ? res.body.document : res.body, hostId, parent, `insert host ${hostId}`);
      if (done) this.toast(`Inserted ${hostId} from ${template}: ${this.model.doc.nodes.filter((n) => n.id.startsWith(hostId + '/')).length} devices`, 'ok');
      return done;
    }

    /** Add a one-host document's groups, nodes and links, laid out to the right of the canvas. */
    insertFragment(fragment, hostId, parent, label) {
      const m = this.model;
      const frag = NS.normalizeDocument(fragment);
      const clash = [...frag.groups, ...frag.nodes].find((x) => m.idTaken(x.id)) || frag.links.find((l) => m.link(l.id));
      if (clash) { this.toast(`Cannot insert: “${clash.id}” already exists.`, 'error'); return null; }
      // Lay the host out as a block, to the right of everything that is already there.
      const tmp = new NS.Model(frag);
      const block = NS.layout.hostBlock(tmp, frag.nodes.map((n) => n.id));
      let maxX = -Infinity; let minY = Infinity;
      for (const n of m.doc.nodes) { const p = this.view.posOf(n.id); maxX = Math.max(maxX, p[0]); minY = Math.min(minY, p[1]); }
      if (!isFinite(maxX)) { maxX = -block.width / 2 - 120; minY = 0; }
      const ox = maxX + 120 + block.width / 2;
      const ops = [];
      for (const g of frag.groups) {
        const ng = clone(g);
        if (parent && !frag.groups.some((x) => x.id === g.parent)) ng.parent = parent;
        ops.push(m.opAdd('group', ng));
      }
      for (const n of frag.nodes) {
        ops.push(m.opAdd('node', n));
        const p = block.pos.get(n.id) || [0, 0];
        ops.push(m.opPos(n.id, [ox + p[0], minY + p[1]]));
      }
      for (const l of frag.links) ops.push(m.opAdd('link', l));
      m.apply(ops, label);
      // On an empty canvas show the whole host; otherwise bring the new one into view.
      if (m.doc.nodes.length === frag.nodes.length) this.fit(); else this.focusElement('group', hostId);
      return hostId;
    }

    openGenerate() {
      if (this.readonly) return;
      if (!this.urls.build) { this.toast('Cluster generation is not available here.', 'error'); return; }
      const d = this.dialogs.generate;
      const f = d.querySelector('form');
      d.querySelector('.fs-dialog-error').hidden = true;
      d.returnValue = '';
      d.onclose = () => {
        if (d.returnValue !== 'ok') return;
        const params = {
          template: f.template.value, hosts: Number(f.hosts.value), fabric: f.fabric.value,
          rails: Number(f.rails.value), spines: Number(f.spines.value), oversubscription: Number(f.oversubscription.value),
          nic_gbps: Number(f.nic_gbps.value), uplink_gbps: Number(f.uplink_gbps.value), name: this.model.doc.name,
        };
        this.generate(params, f.merge.value);
      };
      d.showModal();
    }

    async generate(params, mode) {
      this.toast(`Generating ${params.hosts} × ${params.template} (${params.fabric})…`);
      const res = await NS.requestJSON(this.urls.build, { method: 'POST', csrf: this.config.csrf_token, body: params });
      if (!res.ok) {
        if (res.status === 400) this.showProblems(res.body, {});
        this.toast(`Generate failed: ${NS.errorMessage(res)}`, 'error');
        return false;
      }
      const doc = res.body && res.body.document ? res.body.document : res.body;
      if (mode !== 'merge') { this.replaceDocument(doc, `generate ${params.hosts} × ${params.template}`); return true; }
      const m = this.model;
      const frag = NS.normalizeDocument(doc);
      const ops = [];
      let skipped = 0;
      for (const g of frag.groups) { if (m.group(g.id)) skipped += 1; else ops.push(m.opAdd('group', g)); }
      for (const n of frag.nodes) { if (m.idTaken(n.id)) skipped += 1; else ops.push(m.opAdd('node', n)); }
      for (const l of frag.links) { if (m.link(l.id)) skipped += 1; else ops.push(m.opAdd('link', l)); }
      m.apply(ops, `merge ${params.hosts} × ${params.template}`);
      this.view.relayout(); this.view.render(); this.fit();
      this.toast(`Merged: ${ops.length} items added${skipped ? `, ${skipped} already present (kept yours)` : ''}`, skipped ? 'error' : 'ok');
      return true;
    }
  }

  NS.Editor = Editor;
  NS.h = h;
})(window.FabricscopeEditorNS = window.FabricscopeEditorNS || {});

/* Fabricscope result views: draws the figures designer/figures.py built (embedded as JSON in
 * #fs-figures), themes them from the page's CSS variables (light / dark), and adds the
 * interactions that need the browser: flow picker (path view), host drill-down, topology
 * expanded/collapsed toggle, sweep ranking click-through, and per-figure downloads
 * (PNG, standalone HTML, CSV, JSON). No framework, no network access except plotly.min.js.
 *
 * graphTraces / hostFigure / pathFigure mirror the Python of the same names in figures.py:
 * change both together.
 */
(function () {
  'use strict';

  var holder = document.getElementById('fs-figures');
  if (!holder || typeof Plotly === 'undefined') return;
  var FIGS = JSON.parse(holder.textContent);
  var state = { rendered: {}, t0: performance.now(), currentTopology: 'topology' };

  // ------------------------------------------------------------------ shared with figures.py
  var UTIL_SCALE = [[0.0, '#3b7dd8'], [0.35, '#43b0a6'], [0.6, '#e6c229'], [0.85, '#f0822e'], [1.0, '#d7263d']];
  var IDLE_COLOR = 'rgba(140,150,165,0.45)';
  var FAILED_COLOR = '#d7263d';
  var KIND_STYLE = {
    gpu: ['square', '#76b900', 'GPU'], nvswitch: ['diamond', '#8e6cc6', 'NVSwitch'],
    pcie_switch: ['triangle-up', '#5d8fd8', 'PCIe switch'], nic: ['circle', '#e69f00', 'NIC'],
    cpu: ['hexagon', '#9aa0a8', 'CPU / root complex'], memory: ['square-open', '#b07aa1', 'Memory'],
    nvme: ['cross', '#a9805e', 'NVMe'], 'switch': ['circle', '#7f8a9a', 'Switch'],
    storage: ['hexagram', '#17becf', 'Storage'], host: ['square', '#7f8a9a', 'Host']
  };
  var KIND_ORDER = Object.keys(KIND_STYLE);
  var TIER_LABELS = { nvlink: 'NVLink', pcie: 'PCIe', 'root-complex': 'Root complex', 'inter-socket': 'Inter-socket',
    memory: 'Memory', 'nic-leaf': 'NIC–leaf', 'leaf-spine': 'Leaf–spine', 'spine-core': 'Spine–core',
    fabric: 'Fabric', storage: 'Storage', other: 'Other' };

  function hex(c) { return [1, 3, 5].map(function (i) { return parseInt(c.substr(i, 2), 16); }); }
  function utilColor(u) {
    u = Math.min(Math.max(+u || 0, 0), 1);
    for (var k = 0; k < UTIL_SCALE.length - 1; k++) {
      var p0 = UTIL_SCALE[k][0], p1 = UTIL_SCALE[k + 1][0];
      if (u <= p1) {
        var t = (u - p0) / (p1 - p0), a = hex(UTIL_SCALE[k][1]), b = hex(UTIL_SCALE[k + 1][1]);
        return '#' + a.map(function (x, i) {
          var v = Math.round(x + (b[i] - x) * t).toString(16);
          return v.length < 2 ? '0' + v : v;
        }).join('');
      }
    }
    return UTIL_SCALE[UTIL_SCALE.length - 1][1];
  }
  function pct(u) { return (u === null || u === undefined || !isFinite(u)) ? '—' : Math.round(u * 100) + '%'; }
  function gbps(x) {
    if (x === null || x === undefined || !isFinite(x)) return '—';
    return Math.abs(x) >= 1000 ? +(x / 1000).toPrecision(3) + ' Tb/s' : +(+x).toPrecision(3) + ' Gb/s';
  }
  function esc(s) {
    return String(s === null || s === undefined ? '' : s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }

  function graphTraces(nodes, edges, labels) {
    var traces = [], bins = {}, order = ['idle', 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 'failed'];
    edges.forEach(function (e) {
      var key = e.failed ? 'failed' : (e.u <= 0 ? 'idle' : Math.min(Math.floor(e.u * 10), 9));
      (bins[key] = bins[key] || []).push(e);
    });
    order.forEach(function (key) {
      var group = bins[key];
      if (!group) return;
      var xs = [], ys = [];
      group.forEach(function (e) { xs.push(e.x0, e.x1, null); ys.push(e.y0, e.y1, null); });
      var line = key === 'idle' ? { color: IDLE_COLOR, width: 1 }
        : key === 'failed' ? { color: FAILED_COLOR, width: 2, dash: 'dot' }
        : { color: utilColor((key + 0.5) / 10), width: 1.2 + 0.3 * key };
      traces.push({ type: 'scatter', mode: 'lines', x: xs, y: ys, line: line, hoverinfo: 'skip', showlegend: false,
        name: 'links ' + key });
    });
    if (edges.length) {
      traces.push({ type: edges.length > 4000 ? 'scattergl' : 'scatter', mode: 'markers', name: 'links',
        x: edges.map(function (e) { return (e.x0 + e.x1) / 2; }), y: edges.map(function (e) { return (e.y0 + e.y1) / 2; }),
        hovertext: edges.map(function (e) { return e.hover; }), hoverinfo: 'text', showlegend: false,
        marker: { size: 5, symbol: 'diamond', color: edges.map(function (e) { return Math.round(e.u * 1000) / 1000; }),
          colorscale: UTIL_SCALE, cmin: 0, cmax: 1, showscale: true,
          colorbar: { title: { text: 'link<br>utilization' }, tickformat: '.0%', thickness: 12, len: 0.8 } } });
    }
    var byKind = {};
    nodes.forEach(function (n) { (byKind[n.kind] = byKind[n.kind] || []).push(n); });
    Object.keys(byKind).sort(function (a, b) {
      var ia = KIND_ORDER.indexOf(a), ib = KIND_ORDER.indexOf(b);
      return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib);
    }).forEach(function (kind) {
      var group = byKind[kind], st = KIND_STYLE[kind] || ['circle', '#7f8a9a', kind];
      traces.push({ type: 'scatter', mode: labels ? 'markers+text' : 'markers', name: st[2],
        x: group.map(function (n) { return n.x; }), y: group.map(function (n) { return n.y; }),
        text: group.map(function (n) { return n.label || ''; }), textposition: 'top center', textfont: { size: 9 },
        hovertext: group.map(function (n) { return n.hover; }), hoverinfo: 'text',
        customdata: group.map(function (n) { return n.id; }), cliponaxis: false,
        marker: { symbol: st[0], size: 9, color: st[1], line: { width: 0.5, color: '#333' } } });
      var failed = group.filter(function (n) { return n.failed; });
      if (failed.length) {
        traces.push({ type: 'scatter', mode: 'markers', name: 'failed', showlegend: false, hoverinfo: 'skip',
          x: failed.map(function (n) { return n.x; }), y: failed.map(function (n) { return n.y; }),
          marker: { symbol: 'x-thin-open', size: 16, line: { width: 3, color: FAILED_COLOR } } });
      }
    });
    return traces;
  }

  function figureShell(kind, title, data, layout, table, height, extra) {
    var base = { title: { text: title, x: 0.01, xanchor: 'left', font: { size: 15 } }, height: height,
      margin: { l: 70, r: 30, t: 56, b: 60 }, hovermode: 'closest', hoverlabel: { font: { size: 12 }, align: 'left' },
      legend: { orientation: 'h', y: -0.18, x: 0, yanchor: 'top' } };
    Object.keys(layout).forEach(function (k) { base[k] = layout[k]; });
    var meta = { kind: kind, title: title, table: table };
    Object.keys(extra || {}).forEach(function (k) { meta[k] = extra[k]; });
    return { data: data, layout: base, fabricscope: meta,
      config: { displaylogo: false, responsive: true, modeBarButtonsToRemove: ['select2d', 'lasso2d'],
        toImageButtonOptions: { format: 'png', filename: 'fabricscope-' + kind, scale: 2 } } };
  }

  function hostFigure(details, host) {
    var h = details.hosts[host], shape = details.shapes[h.s], bad = {};
    (h.f || []).forEach(function (x) { bad[x] = true; });
    var nodes = shape.nodes.map(function (n) {
      return { id: host + '/' + n[0], x: n[2], y: n[3], kind: n[1], label: n[0], failed: !!bad[n[0]],
        hover: '<b>' + host + '/' + n[0] + '</b><br>' + (KIND_STYLE[n[1]] || [0, 0, n[1]])[2] };
    });
    var rows = [];
    var edges = shape.links.map(function (l, i) {
      var v = h.l[i], a = shape.nodes[l[1]], b = shape.nodes[l[2]], cap = v[2];
      var ua = cap ? (v[0] || 0) / cap : 0, ub = cap ? (v[1] || 0) / cap : 0;
      rows.push([host + '/' + l[0], l[3], v[0], v[1], v[2]]);
      return { x0: a[2], y0: a[3], x1: b[2], y1: b[3], u: Math.max(ua, ub), failed: !!bad[l[0]],
        hover: '<b>' + host + '/' + l[0] + '</b><br>tech ' + (l[3] || '—') + '<br>' + a[0] + ' → ' + b[0] + ': ' +
          gbps(v[0]) + ' / ' + gbps(cap) + ' (' + pct(ua) + ')<br>' + b[0] + ' → ' + a[0] + ': ' + gbps(v[1]) +
          ' / ' + gbps(cap) + ' (' + pct(ub) + ')' };
    });
    return figureShell('host', 'Host ' + host + ' · internal links', graphTraces(nodes, edges, true),
      { xaxis: { visible: false }, yaxis: { visible: false }, dragmode: 'pan', margin: { l: 20, r: 20, t: 56, b: 40 },
        legend: { orientation: 'h', y: -0.02, x: 0, yanchor: 'top' } },
      { columns: ['link', 'tech', 'load_a>b_gbps', 'load_b>a_gbps', 'capacity_gbps'], rows: rows }, 480, { host: host });
  }

  // ------------------------------------------------------------------ path view (mirrors figures._path_fig)
  function flowRecord(ix, row) {
    return { id: row[0], pattern: ix.patterns[row[1]], src: ix.nodes[row[2]], dst: ix.nodes[row[3]],
      cls: row[4] >= 0 ? ix.classes[row[4]] : null, rate: row[5], ok: !!row[6], reason: row[7],
      bottleneck: row[8] >= 0 ? ix.res[row[8]][0] : null, paths: row[10] };
  }
  function pathHops(ix, row) {
    var ids = row[9], bott = row[8] >= 0 ? ix.res[row[8]][0] : null, out = [];
    for (var k = 0; k + 1 < ids.length; k++) {
      var r = ix.hops[ids[k] + '>' + ids[k + 1]];
      var rec = (r !== undefined && r >= 0) ? ix.res[r] : null;
      out.push({ from: ix.nodes[ids[k]], to: ix.nodes[ids[k + 1]], resource: rec && rec[0],
        tech: rec && ix.techs[rec[1]], tier: rec && ix.tiers[rec[2]], utilization: rec && rec[3],
        load_gbps: rec && rec[4], capacity_gbps: rec && rec[5], bottleneck: !!rec && rec[0] === bott });
    }
    return out;
  }
  function pathTitle(f) {
    var head = f.id + ' · ' + f.src + ' → ' + f.dst;
    if (!f.ok) return head + ' · UNROUTABLE';
    return head + ' · class <b>' + (f.cls || '—') + '</b> · ' + gbps(f.rate) +
      (f.paths > 1 ? ' · striped over ' + f.paths + ' paths (first shown)' : '');
  }
  function emptyFigure(kind, title, message, height) {
    return figureShell(kind, title, [], { xaxis: { visible: false }, yaxis: { visible: false },
      annotations: [{ text: message, showarrow: false, xref: 'paper', yref: 'paper', x: 0.5, y: 0.5, font: { size: 14 } }] },
      { columns: [], rows: [] }, height || 260, { empty: true });
  }
  function pathFigure(ix, row) {
    var f = flowRecord(ix, row), title = pathTitle(f);
    if (!f.ok) {
      var e = emptyFigure('path', title, 'Unroutable: ' + (f.reason || 'no path'), 300);
      e.fabricscope.flow = f.id; e.fabricscope.hops = []; e.fabricscope.path = [];
      return e;
    }
    var hops = pathHops(ix, row), ids = row[9];
    var nodes = ids.map(function (i) { return ix.nodes[i]; });
    var kinds = ids.map(function (i) { return ix.kinds[i]; });
    var hosts = ids.map(function (i) { return ix.hosts[i]; });
    var data = [], shapes = [], notes = [];
    hops.forEach(function (h, k) {
      data.push({ type: 'scatter', mode: 'lines', x: [k, k + 1], y: [1, 1], xaxis: 'x', yaxis: 'y2',
        line: { color: h.utilization !== null ? utilColor(h.utilization) : IDLE_COLOR, width: h.bottleneck ? 8 : 5 },
        hoverinfo: 'skip', showlegend: false });
    });
    var hover = ids.map(function (ni, i) {
      var s = '<b>' + nodes[i] + '</b><br>' + (KIND_STYLE[kinds[i]] || [0, 0, kinds[i] || 'node'])[2];
      var r = (ix.node_res || {})[ni];
      if (r !== undefined) { var nr = ix.res[r]; s += '<br>internal ' + gbps(nr[4]) + ' / ' + gbps(nr[5]) + ' (' + pct(nr[3]) + ')'; }
      return s;
    });
    data.push({ type: 'scatter', mode: 'markers+text', x: nodes.map(function (_, i) { return i; }),
      y: nodes.map(function () { return 1; }), xaxis: 'x', yaxis: 'y2', name: 'nodes',
      text: nodes.map(function (n) { return n.indexOf('/') >= 0 ? n.replace('/', '/<br>') : n; }),
      textposition: 'top center', textfont: { size: 11 }, hovertext: hover, hoverinfo: 'text', showlegend: false,
      cliponaxis: false,
      marker: { size: 14, symbol: kinds.map(function (k) { return (KIND_STYLE[k] || ['circle'])[0]; }),
        color: kinds.map(function (k) { return (KIND_STYLE[k] || [0, '#7f8a9a'])[1]; }),
        line: { width: nodes.map(function (n) { return n === f.bottleneck ? 3 : 0.5; }),
          color: nodes.map(function (n) { return n === f.bottleneck ? FAILED_COLOR : '#333'; }) } } });
    var xs = hops.map(function (_, k) { return k + 0.5; });
    var utils = hops.map(function (h) { return h.utilization !== null ? h.utilization : 0; });
    data.push({ type: 'bar', x: xs, y: utils, width: 0.55, name: 'hop utilization', showlegend: false,
      marker: { color: utils.map(utilColor), line: { width: hops.map(function (h) { return h.bottleneck ? 3 : 0; }), color: FAILED_COLOR } },
      text: hops.map(function (h) { return pct(h.utilization); }), textposition: 'outside', cliponaxis: false,
      hovertext: hops.map(function (h) {
        return '<b>' + h.from + ' → ' + h.to + '</b><br>' + (h.resource || 'link not found') + '<br>tech ' + (h.tech || '—') +
          ' · ' + (TIER_LABELS[h.tier] || h.tier || '—') + '<br>' + gbps(h.load_gbps) + ' / ' + gbps(h.capacity_gbps) +
          ' (' + pct(h.utilization) + ')' + (h.bottleneck ? '<br><b>bottleneck of this flow</b>' : '');
      }), hoverinfo: 'text' });
    hops.forEach(function (h, k) {
      if (h.bottleneck) notes.push({ x: k + 0.5, y: 1.0, yref: 'y2', text: 'bottleneck', showarrow: true, arrowhead: 2,
        ay: 34, ax: 0, font: { color: FAILED_COLOR, size: 12 } });
    });
    var start = 0;
    for (var k = 1; k <= hosts.length; k++) {
      if (k === hosts.length || hosts[k] !== hosts[start]) {
        shapes.push({ type: 'rect', xref: 'x', yref: 'paper', x0: start - 0.45, x1: k - 1 + 0.45, y0: 0.56, y1: 1.0,
          fillcolor: hosts[start] ? 'rgba(118,185,0,0.08)' : 'rgba(93,143,216,0.08)', line: { width: 0 }, layer: 'below' });
        notes.push({ x: (start + k - 1) / 2, y: 0.57, xref: 'x', yref: 'paper', yanchor: 'bottom',
          text: hosts[start] ? 'host ' + hosts[start] : 'fabric', showarrow: false, font: { size: 11 }, opacity: 0.8 });
        start = k;
      }
    }
    var layout = {
      xaxis: { range: [-0.6, nodes.length - 0.4], tickvals: xs, ticktext: hops.map(function (h) { return h.tech || '?'; }),
        showgrid: false, zeroline: false, title: { text: 'hop (link technology)', standoff: 6 } },
      yaxis: { domain: [0, 0.5], range: [0, 1.25], tickformat: '.0%', title: { text: 'utilization' }, automargin: true },
      yaxis2: { domain: [0.62, 1], range: [0.5, 1.6], visible: false },
      shapes: shapes, annotations: notes, bargap: 0.4, margin: { l: 70, r: 30, t: 60, b: 60 } };
    var table = { columns: ['hop', 'from', 'to', 'resource', 'tech', 'tier', 'load_gbps', 'capacity_gbps', 'utilization', 'bottleneck'],
      rows: hops.map(function (h, k) { return [k + 1, h.from, h.to, h.resource, h.tech, h.tier, h.load_gbps, h.capacity_gbps, h.utilization, h.bottleneck]; }) };
    return figureShell('path', title, data, layout, table, 440, { flow: f.id, hops: hops, path: nodes, path_class: f.cls });
  }

  // ------------------------------------------------------------------ theme from CSS variables
  function cssVar(name, fallback) {
    var v = getComputedStyle(document.documentElement).getPropertyValue(name).trim();
    return v || fallback;
  }
  function theme() {
    var fg = cssVar('--fg', '#1b2230'), muted = cssVar('--muted', '#5a6477'), line = cssVar('--line', '#dce1e8');
    var surface = cssVar('--surface', '#ffffff');
    return { fg: fg, muted: muted, line: line, surface: surface };
  }
  function themed(fig) {
    var t = theme(), layout = JSON.parse(JSON.stringify(fig.layout || {}));
    layout.paper_bgcolor = 'rgba(0,0,0,0)';
    layout.plot_bgcolor = 'rgba(0,0,0,0)';
    layout.font = Object.assign({ family: 'system-ui, -apple-system, "Segoe UI", sans-serif', size: 12 }, layout.font || {}, { color: t.fg });
    layout.hoverlabel = Object.assign({}, layout.hoverlabel || {}, { bgcolor: t.surface, bordercolor: t.line, font: { color: t.fg, size: 12 } });
    Object.keys(layout).forEach(function (k) {
      if (/^[xy]axis\d*$/.test(k)) {
        layout[k] = Object.assign({ gridcolor: t.line, linecolor: t.line, zerolinecolor: t.line }, layout[k]);
      }
    });
    ['xaxis', 'yaxis'].forEach(function (k) {
      if (!layout[k]) layout[k] = { gridcolor: t.line, linecolor: t.line, zerolinecolor: t.line };
    });
    var data = (fig.data || []).map(function (tr) {
      if (tr.type !== 'table') return tr;
      tr = JSON.parse(JSON.stringify(tr));
      tr.header = Object.assign({}, tr.header, { font: { color: t.fg, size: 12 }, line: { color: t.line } });
      tr.cells = Object.assign({}, tr.cells, { font: { color: t.fg, size: 12 }, line: { color: t.line } });
      return tr;
    });
    return { data: data, layout: layout };
  }

  // ------------------------------------------------------------------ rendering
  function plotEl(key) { return document.querySelector('[data-plot="' + key + '"]'); }

  function draw(key, fig, el) {
    el = el || plotEl(key);
    if (!el || !fig) return Promise.resolve();
    var th = themed(fig);
    // Clear the "Drawing…" placeholder once; never under a live plot (Plotly.react diffs its DOM).
    if (!el.classList.contains('js-plotly-plot')) el.innerHTML = '';
    el._fsFigure = fig;
    return Plotly.react(el, th.data, th.layout, fig.config || {}).then(function () {
      state.rendered[key] = performance.now() - state.t0;
      addTools(el.closest('.fs-figure'), el);
    });
  }

  function addTools(figureEl, el) {
    if (!figureEl) return;
    var bar = figureEl.querySelector('.fs-figure-tools');
    if (!bar || bar.childElementCount) return;
    [['PNG', 'Download the figure as a PNG image', downloadPng], ['HTML', 'Download an interactive HTML file (works offline)', downloadHtml],
      ['CSV', "Download the figure's data as CSV", downloadCsv], ['JSON', "Download the figure's data as JSON", downloadJson]]
      .forEach(function (b) {
        var btn = document.createElement('button');
        btn.type = 'button'; btn.className = 'fs-dl'; btn.textContent = b[0]; btn.title = b[1];
        btn.setAttribute('data-download', b[0].toLowerCase());
        btn.addEventListener('click', function () { b[2](el); });
        bar.appendChild(btn);
      });
  }

  function fileName(el, ext) {
    var f = el._fsFigure || {}, meta = f.fabricscope || {};
    var extra = meta.flow || meta.host || '';
    return ('fabricscope-' + (meta.kind || 'figure') + (extra ? '-' + extra : '')).replace(/[^A-Za-z0-9_.-]+/g, '_') + '.' + ext;
  }
  function save(name, text, type) {
    var a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], { type: type }));
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(function () { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }
  function downloadPng(el) {
    Plotly.downloadImage(el, { format: 'png', scale: 2, filename: fileName(el, 'png').replace(/\.png$/, '') });
  }
  function csvCell(v) {
    if (v === null || v === undefined) return '';
    var s = typeof v === 'object' ? JSON.stringify(v) : String(v);
    return /[",\n]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  }
  function downloadCsv(el) {
    var t = ((el._fsFigure || {}).fabricscope || {}).table || { columns: [], rows: [] };
    var lines = [t.columns.map(csvCell).join(',')].concat(t.rows.map(function (r) { return r.map(csvCell).join(','); }));
    save(fileName(el, 'csv'), lines.join('\n') + '\n', 'text/csv');
  }
  function downloadJson(el) {
    var meta = (el._fsFigure || {}).fabricscope || {};
    save(fileName(el, 'json'), JSON.stringify({ kind: meta.kind, title: meta.title, table: meta.table }, null, 1), 'application/json');
  }
  var plotlySource = null;
  function downloadHtml(el) {
    var fig = el._fsFigure, script = document.querySelector('script[src*="plotly"]');
    var get = plotlySource ? Promise.resolve(plotlySource)
      : fetch(script.src).then(function (r) { return r.text(); }).then(function (t) { plotlySource = t; return t; });
    get.then(function (src) {
      var payload = JSON.stringify({ data: fig.data, layout: fig.layout, config: fig.config }).replace(/</g, '\\u003c');
      var html = '<!doctype html><html><head><meta charset="utf-8"><title>' + esc((fig.fabricscope || {}).kind || 'figure') +
        '</title><script>' + src.replace(/<\/script/gi, '<\\/script') + '<\/script></head><body><div id="f"></div><script>' +
        'var F=' + payload + ';Plotly.newPlot("f",F.data,F.layout,F.config);<\/script></body></html>';
      save(fileName(el, 'html'), html, 'text/html');
    });
  }

  // ------------------------------------------------------------------ path picker
  function setupPicker() {
    var fig = FIGS.path, input = document.getElementById('fs-flow-search'), select = document.getElementById('fs-flow-select');
    if (!fig || !input || !select) return;
    var ix = (fig.fabricscope || {}).path_index;
    var note = document.querySelector('[data-picker-note]');
    if (!ix || !ix.flows.length) {
      input.disabled = true; select.hidden = true;
      if (note) note.textContent = 'This result lists no flows.';
      return;
    }
    var labels = ix.flows.map(function (r) {
      var f = flowRecord(ix, r);
      return f.id + '  ' + f.src + ' → ' + f.dst + (f.ok ? '  ' + (f.cls || '') : '  unroutable');
    });
    var hay = labels.map(function (s) { return s.toLowerCase(); });
    var LIMIT = 300;
    function fill() {
      var tokens = input.value.toLowerCase().split(/[\s,→>]+/).filter(Boolean), matches = [];
      for (var i = 0; i < hay.length && matches.length < LIMIT; i++) {
        if (tokens.every(function (t) { return hay[i].indexOf(t) >= 0; })) matches.push(i);
      }
      var total = matches.length;
      if (total === LIMIT) { for (var j = matches[LIMIT - 1] + 1; j < hay.length; j++) if (tokens.every(function (t) { return hay[j].indexOf(t) >= 0; })) total++; }
      select.innerHTML = matches.map(function (i) { return '<option value="' + i + '">' + esc(labels[i]) + '</option>'; }).join('');
      if (note) {
        note.textContent = (total ? total.toLocaleString() + ' matching' + (total > LIMIT ? ' (first ' + LIMIT + ' shown)' : '') : 'No listed flow matches') +
          ' · ' + ix.listed.toLocaleString() + ' flows listed' + (ix.total > ix.listed ? ' of ' + ix.total.toLocaleString() + ' (unroutable, slowest and a sample)' : '');
      }
    }
    function choose(i) {
      var f2 = pathFigure(ix, ix.flows[i]);
      f2.fabricscope.path_index = ix;
      draw('path', f2).then(function () { hopList(f2); });
    }
    input.addEventListener('input', fill);
    input.addEventListener('keydown', function (e) {
      if (e.key === 'Enter' && select.options.length) { e.preventDefault(); select.selectedIndex = 0; choose(+select.value); }
    });
    select.addEventListener('change', function () { if (select.value !== '') choose(+select.value); });
    fill();
    var current = (fig.fabricscope || {}).flow;
    ix.flows.forEach(function (r, i) { if (r[0] === current) select.value = String(i); });
  }

  function hopList(fig) {
    var ol = document.querySelector('[data-hop-list]');
    if (!ol) return;
    var hops = (fig.fabricscope || {}).hops || [];
    if (!hops.length) { ol.innerHTML = '<li class="muted">No hops: the flow is unroutable or has no path.</li>'; return; }
    ol.innerHTML = hops.map(function (h) {
      var u = h.utilization, w = Math.max(0, Math.min(1, u || 0)) * 100;
      return '<li class="' + (h.bottleneck ? 'fs-hop-bottleneck' : '') + '"><span class="fs-hop-nodes">' + esc(h.from) + ' → ' + esc(h.to) +
        '</span><span class="fs-hop-tech">' + esc(h.tech || '?') + ' · ' + esc(TIER_LABELS[h.tier] || h.tier || '—') + '</span>' +
        '<span class="fs-ubar" title="' + pct(u) + '"><span style="width:' + w.toFixed(1) + '%;background:' + utilColor(u) + '"></span></span>' +
        '<span class="fs-hop-u">' + pct(u) + '</span>' + (h.bottleneck ? '<strong class="fs-bad">bottleneck</strong>' : '') + '</li>';
    }).join('');
  }

  // ------------------------------------------------------------------ topology toggle and drill-down
  function setupTopology() {
    var toggle = document.querySelector('[data-topology-toggle]');
    if (toggle && FIGS.topology_collapsed) {
      toggle.hidden = false;
      toggle.querySelectorAll('[data-topology]').forEach(function (btn) {
        btn.setAttribute('aria-pressed', btn.getAttribute('data-topology') === 'topology');
        btn.addEventListener('click', function () {
          var key = btn.getAttribute('data-topology');
          toggle.querySelectorAll('[data-topology]').forEach(function (b) { b.setAttribute('aria-pressed', b === btn); });
          state.currentTopology = key;
          draw('topology', FIGS[key]).then(bindHostClick);
        });
      });
    }
    var close = document.querySelector('[data-host-close]');
    if (close) close.addEventListener('click', function () { document.getElementById('fs-host-detail').hidden = true; });
    bindHostClick();
  }
  function bindHostClick() {
    var el = plotEl('topology');
    if (!el || !el.on || el._fsBound) return;
    el._fsBound = true;
    el.on('plotly_click', function (ev) {
      var fig = el._fsFigure, details = fig && fig.fabricscope && fig.fabricscope.hosts;
      var pt = ev.points && ev.points[0];
      if (!details || !pt || !pt.customdata || !details.hosts[pt.customdata]) return;
      openHost(details, pt.customdata);
    });
  }
  function openHost(details, host) {
    var box = document.getElementById('fs-host-detail');
    box.hidden = false;
    box.querySelector('[data-host-title]').textContent = 'Host ' + host;
    draw('host', hostFigure(details, host)).then(function () { box.scrollIntoView({ block: 'nearest' }); });
  }

  // ------------------------------------------------------------------ sweep ranking click-through
  function setupRanking() {
    var el = plotEl('ranking');
    if (!el || !el.on) return;
    el.on('plotly_click', function (ev) {
      var pt = ev.points && ev.points[0], link = ((FIGS.ranking || {}).fabricscope || {}).link;
      if (!pt || pt.customdata === undefined || !link) return;
      window.location.href = link.replace('{index}', encodeURIComponent(pt.customdata)) + '#sec-whatif';
    });
  }

  // ------------------------------------------------------------------ boot
  function retheme() {
    document.querySelectorAll('[data-plot]').forEach(function (el) {
      if (el._fsFigure) { var th = themed(el._fsFigure); Plotly.react(el, th.data, th.layout, el._fsFigure.config || {}); }
    });
  }

  function boot() {
    document.querySelectorAll('[data-figure]').forEach(function (fig) {
      var key = fig.getAttribute('data-figure');
      if (!FIGS[key] && key !== 'host') fig.hidden = true;
    });
    var keys = Object.keys(FIGS).filter(function (k) { return k !== 'topology_collapsed' && plotEl(k); });
    // Draw in page order, yielding between figures so the first ones show while the rest draw.
    var chain = Promise.resolve();
    keys.forEach(function (k) {
      chain = chain.then(function () { return new Promise(function (r) { requestAnimationFrame(r); }); })
        .then(function () { return draw(k, FIGS[k]); })
        .then(function () { if (k === 'path') hopList(FIGS.path); });
    });
    var done = chain.then(function () {
      setupTopology(); setupPicker(); setupRanking();
      state.totalMs = performance.now() - state.t0;
      document.documentElement.setAttribute('data-figures-ready', '1');
      return state;
    });
    window.fabricscopeResults = { figures: FIGS, state: state, ready: done, draw: draw, openHost: function (h) {
      var d = FIGS.topology && FIGS.topology.fabricscope.hosts; if (d) openHost(d, h);
    }, pathFigure: pathFigure, hostFigure: hostFigure };
    if (window.matchMedia) {
      var mq = window.matchMedia('(prefers-color-scheme: dark)');
      if (mq.addEventListener) mq.addEventListener('change', retheme);
    }
  }
  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', boot); else boot();
})();

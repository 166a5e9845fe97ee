/* Scenario builder: add/remove workload patterns (a Django formset), show the fields a pattern's
   kind uses, switch between a pattern list and a job (with a SimAI file import), and a
   searchable failure picker with removable chips. Works without JS too
   (every field is rendered; the server ignores the unused ones).
   On a viewer's page (form[data-readonly]) the document fields are disabled and say why; the
   failure picker stays live: it sets the failures of a what-if run (never saved). */
function initScenarioForm() {
  var form = document.getElementById('scenario-form');
  if (!form) return;
  var list = form.querySelector('[data-patterns]');
  var total = form.querySelector('input[name="pattern-TOTAL_FORMS"]');
  var template = document.getElementById('pattern-template');

  // ---- patterns: which fields apply to which kind
  function refreshPattern(p) {
    var kind = p.querySelector('select[name$="-kind"]').value;
    var select = p.querySelector('select[name$="-select"]').value;
    p.querySelectorAll('[data-kinds]').forEach(function (el) {
      var on = el.getAttribute('data-kinds').split(' ').indexOf(kind) >= 0;
      var sel = el.getAttribute('data-select');
      if (on && sel) on = sel === select;
      el.classList.toggle('is-hidden', !on);
      var label = el.querySelector('label');
      if (!label) return;
      if (!label.dataset.base) label.dataset.base = label.textContent;
      var alt = kind === 'kv_transfer' ? el.dataset.labelKv
        : (kind === 'storage_read' || kind === 'storage_write') ? el.dataset.labelStorage : null;
      label.textContent = alt || label.dataset.base;
    });
  }

  function renumber() {
    var items = list.querySelectorAll('[data-pattern]');
    items.forEach(function (p, i) {
      p.querySelector('[data-pattern-number]').textContent = String(i + 1);
      p.querySelectorAll('[name^="pattern-"], [id^="id_pattern-"], label[for^="id_pattern-"]').forEach(function (el) {
        ['name', 'id', 'for'].forEach(function (attr) {
          var v = el.getAttribute(attr);
          if (v) el.setAttribute(attr, v.replace(/pattern-(\d+|__prefix__)-/, 'pattern-' + i + '-'));
        });
      });
      p.querySelector('[data-remove-pattern]').hidden = items.length === 1;
    });
    total.value = String(items.length);
  }

  function nextId() {
    var used = {};
    list.querySelectorAll('input[name$="-pid"]').forEach(function (el) { used[el.value] = true; });
    for (var i = 1; ; i++) if (!used['p' + i]) return 'p' + i;
  }

  // A viewer's page: the document fields sit in disabled fieldsets. Say why on every control
  // (a disabled control gets no tooltip of its own otherwise), so none looks live and dead.
  var readonlyReason = form.getAttribute('data-readonly');
  if (readonlyReason) {
    form.querySelectorAll('fieldset[disabled] button, fieldset[disabled] input, fieldset[disabled] select, fieldset[disabled] textarea, button:disabled').forEach(function (el) {
      if (el.type === 'hidden') return;
      if (!el.title) el.title = readonlyReason;
      el.setAttribute('aria-disabled', 'true');
    });
  }

  form.addEventListener('click', function (e) {
    if (readonlyReason && e.target.closest('fieldset[disabled]')) return;
    if (e.target.closest('[data-add-pattern]')) {
      var node = template.content.firstElementChild.cloneNode(true);
      list.appendChild(node);
      renumber();
      node.querySelector('input[name$="-pid"]').value = nextId();
      refreshPattern(node);
      node.querySelector('select[name$="-kind"]').focus();
    }
    var rm = e.target.closest('[data-remove-pattern]');
    if (rm && list.querySelectorAll('[data-pattern]').length > 1) {
      rm.closest('[data-pattern]').remove();
      renumber();
    }
  });
  form.addEventListener('change', function (e) {
    var p = e.target.closest('[data-pattern]');
    if (p && /-(kind|select)$/.test(e.target.name)) refreshPattern(p);
  });
  list.querySelectorAll('[data-pattern]').forEach(refreshPattern);
  renumber();

  // ---- workload type: a list of patterns, or a job (a step as a DAG of phases). Only the
  // chosen panel shows; the server reads workload_type and ignores the other one.
  var typeInputs = form.querySelectorAll('input[name="workload_type"]');
  var addPattern = form.querySelector('[data-add-pattern]');
  function showWorkloadType() {
    var checked = form.querySelector('input[name="workload_type"]:checked');
    var type = checked ? checked.value : 'patterns';
    form.querySelectorAll('[data-workload-panel]').forEach(function (panel) {
      panel.hidden = panel.getAttribute('data-workload-panel') !== type;
    });
    if (addPattern) addPattern.hidden = type !== 'patterns';
  }
  typeInputs.forEach(function (el) { el.addEventListener('change', showWorkloadType); });
  var upload = form.querySelector('input[name="workload_file"]');
  if (upload) {
    upload.addEventListener('change', function () {  // a picked file is a job workload
      var job = form.querySelector('input[name="workload_type"][value="job"]');
      if (upload.files.length && job) { job.checked = true; showWorkloadType(); }
    });
  }
  showWorkloadType();

  // ---- failure picker: filter the long list, show what is picked as chips
  document.querySelectorAll('[data-filter-for]').forEach(function (box) {
    var select = document.getElementById(box.getAttribute('data-filter-for'));
    var picked = document.querySelector('[data-picked-for="' + select.id + '"]');
    var count = document.querySelector('[data-failure-count]');
    var timer = null;
    function applyFilter() {
      var q = box.value.trim().toLowerCase();
      Array.prototype.forEach.call(select.options, function (o) {
        o.hidden = !!q && o.text.toLowerCase().indexOf(q) < 0 && !o.selected;
      });
      return q;
    }
    box.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(applyFilter, 120);
    });
    box.addEventListener('keydown', function (e) {  // Enter picks the exact id, else the first match
      if (e.key !== 'Enter') return;
      e.preventDefault();
      clearTimeout(timer);
      var q = applyFilter();
      var options = Array.prototype.filter.call(select.options, function (o) { return !o.hidden && !o.selected; });
      var pick = options.find(function (o) { return o.value.toLowerCase() === q; }) || options[0];
      if (pick) { pick.selected = true; drawChips(); box.select(); }
    });
    function drawChips() {
      picked.innerHTML = '';
      var chosen = Array.prototype.filter.call(select.options, function (o) { return o.selected; });
      chosen.forEach(function (o) {
        var chip = document.createElement('span');
        chip.className = 'chip';
        chip.textContent = o.value;
        var x = document.createElement('button');
        x.type = 'button'; x.setAttribute('aria-label', 'Remove ' + o.value); x.textContent = '×';
        x.addEventListener('click', function () { o.selected = false; drawChips(); });
        chip.appendChild(x);
        picked.appendChild(chip);
      });
      if (!chosen.length) picked.innerHTML = '<span class="muted small">none: the scenario runs on the healthy topology</span>';
      if (count) count.textContent = chosen.length ? '(' + chosen.length + ')' : '';
    }
    select.addEventListener('change', drawChips);
    drawChips();
  });

  // Remember which button submitted, and stop double submissions while the server works.
  form.addEventListener('submit', function (e) {
    var btn = e.submitter;
    form.querySelectorAll('.run-bar button').forEach(function (b) { b.disabled = true; });
    if (btn) {
      var hidden = document.createElement('input');
      hidden.type = 'hidden'; hidden.name = btn.name; hidden.value = btn.value;
      form.appendChild(hidden);
      btn.textContent = btn.textContent + '…';
    }
  });
}

// A module: runs once the page is parsed; the function keeps the early return for other pages.
initScenarioForm();

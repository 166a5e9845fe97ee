/* Scenario builder: add/remove workload patterns (a Django formset), show the fields a pattern's
 * kind uses, switch between a pattern list and a job (with a SimAI file import), and a
 * searchable failure picker with removable chips. Works without JS too (every field is
 * rendered; the server ignores the unused ones).
 * On a viewer's page (form[data-readonly]) the document fields are disabled and say why; the
 * failure picker stays live: it sets the failures of a what-if run (never saved).
 *
 * An ES module: the pure helpers are exported for the unit tests (tests/js/pages.test.mjs).
 */

const FILTER_DELAY_MS = 120; // typing pause before the failure list is filtered

/* ================================================================ pure */
/**
 * Whether a field marked data-kinds="a b" (and optionally data-select) applies to a pattern.
 * @param {string} kinds the field's data-kinds: the pattern kinds it belongs to
 * @param {string|null} onlySelect the field's data-select: the selector it needs, if any
 */
export function fieldApplies(kinds, onlySelect, kind, select) {
  if (!kinds.split(' ').includes(kind)) return false;
  return !onlySelect || onlySelect === select;
}

/** Which data-label-* variant a field's label takes for a pattern kind: 'kv', 'storage' or null. */
export function labelVariant(kind) {
  if (kind === 'kv_transfer') return 'kv';
  return kind === 'storage_read' || kind === 'storage_write' ? 'storage' : null;
}

/** A formset field's name/id renumbered to form `i` ("pattern-3-kind", "pattern-__prefix__-kind"). */
export function renumbered(value, i) {
  return value.replace(/pattern-(\d+|__prefix__)-/, `pattern-${i}-`);
}

/** The first pattern id "p1", "p2", … not in `used`. */
export function nextPatternId(used) {
  for (let i = 1; ; i += 1) if (!used.has(`p${i}`)) return `p${i}`;
}

/** The options the failure filter shows for query `q` (lower case): matches, and picked ones. */
export function filterHidden(text, selected, q) {
  return !!q && !text.toLowerCase().includes(q) && !selected;
}

/**
 * The failure list after a search: the picked ids first (kept whatever the search found), then
 * the results not already picked. `results`: the server's [{id, label}].
 */
export function searchedOptions(picked, results) {
  const seen = new Set(picked.map((o) => o.value));
  return [...picked, ...results.filter((r) => !seen.has(r.id)).map((r) => ({ value: r.id, label: r.label, selected: false }))];
}

/* ================================================================ patterns */
function refreshPattern(p) {
  const kind = p.querySelector('select[name$="-kind"]').value;
  const select = p.querySelector('select[name$="-select"]').value;
  p.querySelectorAll('[data-kinds]').forEach((el) => {
    el.classList.toggle('is-hidden', !fieldApplies(el.getAttribute('data-kinds'), el.getAttribute('data-select'), kind, select));
    const label = el.querySelector('label');
    if (!label) return;
    if (!label.dataset.base) label.dataset.base = label.textContent;
    const variant = labelVariant(kind);
    const alt = variant === 'kv' ? el.dataset.labelKv : variant === 'storage' ? el.dataset.labelStorage : null;
    label.textContent = alt || label.dataset.base;
  });
}

function renumber(list, total) {
  const items = list.querySelectorAll('[data-pattern]');
  items.forEach((p, i) => {
    p.querySelector('[data-pattern-number]').textContent = String(i + 1);
    p.querySelectorAll('[name^="pattern-"], [id^="id_pattern-"], label[for^="id_pattern-"]').forEach((el) => {
      for (const attr of ['name', 'id', 'for']) {
        const v = el.getAttribute(attr);
        if (v) el.setAttribute(attr, renumbered(v, i));
      }
    });
    p.querySelector('[data-remove-pattern]').hidden = items.length === 1;
  });
  total.value = String(items.length);
}

function initPatterns(form, readonlyReason) {
  const list = form.querySelector('[data-patterns]');
  const total = form.querySelector('input[name="pattern-TOTAL_FORMS"]');
  const template = document.getElementById('pattern-template');
  const addPattern = () => {
    const node = template.content.firstElementChild.cloneNode(true);
    list.appendChild(node);
    renumber(list, total);
    const used = new Set([...list.querySelectorAll('input[name$="-pid"]')].map((el) => el.value));
    node.querySelector('input[name$="-pid"]').value = nextPatternId(used);
    refreshPattern(node);
    node.querySelector('select[name$="-kind"]').focus();
  };
  form.addEventListener('click', (e) => {
    if (readonlyReason && e.target.closest('fieldset[disabled]')) return;
    if (e.target.closest('[data-add-pattern]')) addPattern();
    const rm = e.target.closest('[data-remove-pattern]');
    if (rm && list.querySelectorAll('[data-pattern]').length > 1) {
      rm.closest('[data-pattern]').remove();
      renumber(list, total);
    }
  });
  form.addEventListener('change', (e) => {
    const p = e.target.closest('[data-pattern]');
    if (p && /-(kind|select)$/.test(e.target.name)) refreshPattern(p);
  });
  list.querySelectorAll('[data-pattern]').forEach(refreshPattern);
  renumber(list, total);
}

/** A viewer's page: the document fields sit in disabled fieldsets. Say why on every control
 * (a disabled control gets no tooltip of its own otherwise), so none looks live and dead. */
function markReadonly(form, reason) {
  form.querySelectorAll('fieldset[disabled] button, fieldset[disabled] input, fieldset[disabled] select, fieldset[disabled] textarea, button:disabled').forEach((el) => {
    if (el.type === 'hidden') return;
    if (!el.title) el.title = reason;
    el.setAttribute('aria-disabled', 'true');
  });
}

/* ================================================================ workload type */
/** A list of patterns, or a job (a step as a DAG of phases). Only the chosen panel shows; the
 * server reads workload_type and ignores the other one. */
function initWorkloadType(form) {
  const addPattern = form.querySelector('[data-add-pattern]');
  const show = () => {
    const checked = form.querySelector('input[name="workload_type"]:checked');
    const type = checked ? checked.value : 'patterns';
    form.querySelectorAll('[data-workload-panel]').forEach((panel) => {
      panel.hidden = panel.getAttribute('data-workload-panel') !== type;
    });
    if (addPattern) addPattern.hidden = type !== 'patterns';
  };
  form.querySelectorAll('input[name="workload_type"]').forEach((el) => el.addEventListener('change', show));
  const upload = form.querySelector('input[name="workload_file"]');
  if (upload) {
    upload.addEventListener('change', () => { // a picked file is a job workload
      const job = form.querySelector('input[name="workload_type"][value="job"]');
      if (upload.files.length && job) { job.checked = true; show(); }
    });
  }
  show();
}

/* ================================================================ failure picker */
function drawChips(select, picked, count) {
  picked.innerHTML = '';
  const chosen = [...select.options].filter((o) => o.selected);
  for (const o of chosen) {
    const chip = document.createElement('span');
    chip.className = 'chip';
    chip.textContent = o.value;
    const x = document.createElement('button');
    x.type = 'button'; x.setAttribute('aria-label', `Remove ${o.value}`); x.textContent = '×';
    // Looked up at click time: a server search may have replaced the options since the chip was drawn.
    x.addEventListener('click', () => {
      const current = [...select.options].find((c) => c.value === o.value);
      if (current) current.selected = false;
      drawChips(select, picked, count);
    });
    chip.appendChild(x);
    picked.appendChild(chip);
  }
  if (!chosen.length) picked.innerHTML = '<span class="muted small">none: the scenario runs on the healthy topology</span>';
  if (count) count.textContent = chosen.length ? `(${chosen.length})` : '';
}

/** Replace the select's options by the server's search results, the picked ones kept. */
function showResults(select, answer, note) {
  const picked = [...select.options].filter((o) => o.selected)
    .map((o) => ({ value: o.value, label: o.text, selected: true }));
  select.replaceChildren(...searchedOptions(picked, answer.results).map((o) => new Option(o.label, o.value, o.selected, o.selected)));
  if (note) note.textContent = answer.more ? `first ${answer.limit} matches shown: type more to narrow` : '';
}

/** Ask the server for the targets matching the box (a big design has 300k: none is in the page). */
async function searchTargets(box, select, note) {
  const url = `${box.getAttribute('data-search-url')}&q=${encodeURIComponent(box.value.trim())}`;
  try {
    const response = await fetch(url, { headers: { Accept: 'application/json' } });
    if (response.ok) showResults(select, await response.json(), note);
    else if (note) note.textContent = `search failed (${response.status})`;
  } catch (err) {
    if (note) note.textContent = `search failed: ${err.message}`;
  }
}

/** The filter box over the failure targets (searched on the server when the page says where);
 * the picked ones as chips. */
function initFailurePicker(box) {
  const select = document.getElementById(box.getAttribute('data-filter-for'));
  const picked = document.querySelector(`[data-picked-for="${select.id}"]`);
  const count = document.querySelector('[data-failure-count]');
  const note = document.createElement('span');
  note.className = 'help';
  box.after(note);
  const redraw = () => drawChips(select, picked, count);
  const remote = box.hasAttribute('data-search-url');
  let timer = null;
  const applyFilter = async () => {
    const q = box.value.trim().toLowerCase();
    if (remote) { await searchTargets(box, select, note); redraw(); }
    else for (const o of select.options) o.hidden = filterHidden(o.text, o.selected, q);
    return q;
  };
  box.addEventListener('input', () => { clearTimeout(timer); timer = setTimeout(applyFilter, FILTER_DELAY_MS); });
  box.addEventListener('keydown', async (e) => { // Enter picks the exact id, else the first match
    if (e.key !== 'Enter') return;
    e.preventDefault();
    clearTimeout(timer);
    const q = await applyFilter();
    const options = [...select.options].filter((o) => !o.hidden && !o.selected);
    const pick = options.find((o) => o.value.toLowerCase() === q) || options[0];
    if (pick) { pick.selected = true; redraw(); box.select(); }
  });
  select.addEventListener('change', redraw);
  if (remote) applyFilter();
  redraw();
}

/** Remember which button submitted, and stop double submissions while the server works. */
function guardSubmit(form) {
  form.addEventListener('submit', (e) => {
    const btn = e.submitter;
    form.querySelectorAll('.run-bar button').forEach((b) => { b.disabled = true; });
    if (!btn) return;
    const hidden = document.createElement('input');
    hidden.type = 'hidden'; hidden.name = btn.name; hidden.value = btn.value;
    form.appendChild(hidden);
    btn.textContent = `${btn.textContent}…`;
  });
}

export function initScenarioForm() {
  const form = document.getElementById('scenario-form');
  if (!form) return;
  const readonlyReason = form.getAttribute('data-readonly');
  if (readonlyReason) markReadonly(form, readonlyReason);
  initPatterns(form, readonlyReason);
  initWorkloadType(form);
  document.querySelectorAll('[data-filter-for]').forEach(initFailurePicker);
  guardSubmit(form);
}

// Runs once the page is parsed (a module); under Node (unit tests) there is no page.
if (typeof document !== 'undefined') initScenarioForm();

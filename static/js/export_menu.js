/* The topology page's Export menu (an ES module; templates/designer/_export_menu.html).
 *
 * A menu button (WAI-ARIA APG "menu button"): Enter, Space or ArrowDown opens it on the first
 * item, ArrowUp on the last; in the menu ArrowUp/ArrowDown/Home/End move, Escape closes it and
 * gives the focus back to the button, Tab closes it. An item fetches the export API's answer
 * (session cookie) and saves it under the name the server's Content-Disposition gives; an error
 * answer (a design the format cannot describe, a design too large) is shown as its message and
 * located problems, never as raw JSON. Without JavaScript the items are plain download links.
 */

const ROOT = typeof document === 'undefined' ? null : document.querySelector('[data-export-menu]');
/** Located problems listed under an error (the rest are counted). */
const MAX_DETAILS = 5;

/** The file name of a Content-Disposition header (`attachment; filename="x-r3.dot"`), or `fallback`. */
export function filenameOf(disposition, fallback) {
  const m = /filename="([^"]*)"/.exec(disposition || '');
  return (m && m[1]) || fallback;
}

/** `{title, message, details: [text]}` of an export API error answer (status, parsed body). */
export function errorParts(status, body, label) {
  const e = (body && body.error) || {};
  let details = Array.isArray(e.details) ? e.details : [];
  if (!Array.isArray(e.details) && e.details && typeof e.details === 'object') details = [e.details];
  const lines = details.filter((d) => d && d.message).map((d) => (d.path ? `${d.path}: ${d.message}` : String(d.message)));
  const message = e.message || (body && body.detail) || `The server answered HTTP ${status}.`;
  const shown = lines.slice(0, MAX_DETAILS);
  if (lines.length > MAX_DETAILS) shown.push(`… and ${lines.length - MAX_DETAILS} more`);
  return { title: `${label} cannot be exported`, message, details: shown };
}

// A popup that would pass the window's right edge opens toward the left instead.
function place(el) {
  el.classList.remove('to-left');
  if (el.getBoundingClientRect().right > document.documentElement.clientWidth - 8) el.classList.add('to-left');
}

/** The menu button's keyboard and pointer behaviour; returns its `close(refocus)`. */
function menuButton(root, button, menu) {
  const items = () => Array.from(menu.querySelectorAll('[role=menuitem]'));
  const open = (focus) => {
    menu.hidden = false;
    place(menu);
    button.setAttribute('aria-expanded', 'true');
    const list = items();
    const target = focus === 'last' ? list[list.length - 1] : list[0];
    if (target) target.focus();
  };
  const close = (refocus) => {
    menu.hidden = true;
    button.setAttribute('aria-expanded', 'false');
    if (refocus) button.focus();
  };
  const move = (delta) => {
    const list = items();
    const at = list.indexOf(document.activeElement);
    list[(at + delta + list.length) % list.length].focus();
  };
  button.addEventListener('click', () => (menu.hidden ? open('first') : close(false)));
  button.addEventListener('keydown', (ev) => {
    if (ev.key === 'ArrowDown' || ev.key === 'Enter' || ev.key === ' ') { ev.preventDefault(); open('first'); }
    else if (ev.key === 'ArrowUp') { ev.preventDefault(); open('last'); }
  });
  menu.addEventListener('keydown', (ev) => {
    const keys = { ArrowDown: () => move(1), ArrowUp: () => move(-1),
      Home: () => items()[0].focus(), End: () => items().slice(-1)[0].focus(), Escape: () => close(true) };
    if (ev.key === 'Tab') { close(false); return; }
    if (ev.key === ' ') { ev.preventDefault(); document.activeElement.click(); return; }
    if (keys[ev.key]) { ev.preventDefault(); keys[ev.key](); }
  });
  document.addEventListener('click', (ev) => { if (!root.contains(ev.target) && !menu.hidden) close(false); });
  return close;
}

/** The status line and the error box: `{say(text), showError(parts), hideError()}`. */
function messages(root, button) {
  const status = root.querySelector('#export-status');
  const box = root.querySelector('#export-error');
  box.querySelector('[data-export-error-close]').addEventListener('click', () => { box.hidden = true; button.focus(); });
  return {
    say(text) { status.hidden = !text; status.textContent = text; if (text) place(status); },
    hideError() { box.hidden = true; },
    showError(parts) {
      box.querySelector('[data-export-error-title]').textContent = parts.title;
      box.querySelector('[data-export-error-message]').textContent = parts.message;
      const list = box.querySelector('[data-export-error-details]');
      list.replaceChildren(...parts.details.map((text) => Object.assign(document.createElement('li'), { textContent: text })));
      box.hidden = false;
      place(box);
    },
  };
}

/** Save `blob` as `name` (an object URL on a temporary link). */
function save(blob, name) {
  const link = Object.assign(document.createElement('a'), { href: URL.createObjectURL(blob), download: name });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 10_000);
}

/** Fetch one export and save it, or show why it cannot be had. */
async function exportOne(item, ui) {
  const label = item.querySelector('.export-label').firstChild.textContent.trim();
  ui.hideError();
  ui.say(`Exporting ${label}…`);
  let resp;
  try {
    resp = await fetch(item.href, { credentials: 'same-origin' });
  } catch (err) {
    ui.say('');
    ui.showError({ title: `${label} cannot be exported`, message: `Network error: ${err.message}`, details: [] });
    return;
  }
  if (!resp.ok) {
    const text = await resp.text();
    let body = null;
    try { body = JSON.parse(text); } catch { body = { error: { message: text.slice(0, 300) } }; }
    ui.say('');
    ui.showError(errorParts(resp.status, body, label));
    return;
  }
  const blob = await resp.blob();
  const name = filenameOf(resp.headers.get('Content-Disposition'), `topology.${item.dataset.exportFormat}`);
  save(blob, name);
  ui.say(`Downloaded ${name} (${blob.size.toLocaleString()} bytes).`);
}

function setup(root) {
  const button = root.querySelector('#export-button');
  const menu = root.querySelector('[role=menu]');
  const close = menuButton(root, button, menu);
  const ui = messages(root, button);
  menu.addEventListener('click', (ev) => {
    const item = ev.target.closest('[role=menuitem]');
    if (!item) return;
    ev.preventDefault();
    close(true);
    exportOne(item, ui);
  });
}

if (ROOT) setup(ROOT);

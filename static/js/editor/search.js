/* Fabricscope editor — the toolbar search box: devices, groups and links by id. */
import { h } from './dom.js';
import { naturalCompare } from './model.js';

const MAX_SCAN = 400; // matches collected before the ranking (a 32k-device design stays quick)
const MAX_SHOWN = 12;

/** How well id matches query q (lower case): 0 exact, 1 prefix, 2 prefix of its last part
 * ("gpu3" finds "h0/gpu3"), 3 anywhere, -1 not at all. */
export function matchScore(id, q) {
  const s = id.toLowerCase();
  if (s === q) return 0;
  if (s.startsWith(q)) return 1;
  if (s.split('/').pop().startsWith(q)) return 2;
  return s.includes(q) ? 3 : -1;
}

/**
 * The search results for `query`: groups and devices that match, links only by their exact id;
 * best matches first, then in natural order.
 * @returns {{type: 'group'|'node'|'link', id: string, kind: string, sc: number}[]}
 */
export function searchItems(model, query) {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const found = [];
  for (const g of model.doc.groups) { const sc = matchScore(g.id, q); if (sc >= 0) found.push({ type: 'group', id: g.id, kind: g.kind || 'group', sc }); }
  for (const n of model.doc.nodes) {
    const sc = matchScore(n.id, q);
    if (sc >= 0) found.push({ type: 'node', id: n.id, kind: n.kind, sc });
    if (found.length > MAX_SCAN) break;
  }
  for (const l of model.doc.links) {
    if (found.length > MAX_SCAN) break;
    if (matchScore(l.id, q) === 0) found.push({ type: 'link', id: l.id, kind: 'link', sc: 0 });
  }
  found.sort((a, b) => a.sc - b.sc || naturalCompare(a.id, b.id));
  return found.slice(0, MAX_SHOWN);
}

/** The search box: type to list matches, arrows and Enter (or a click) to go to one, which
 * `focus(type, id)` shows. */
export function bindSearch(ed, focus) {
  const input = ed.els.search;
  const list = ed.els.results;
  const st = { items: [], active: 0 };
  const choose = (i) => {
    const it = st.items[i];
    if (!it) return;
    list.hidden = true;
    input.blur();
    focus(it.type, it.id);
  };
  const render = () => {
    list.innerHTML = '';
    st.items.forEach((it, i) => list.append(h('li', { role: 'option', class: i === st.active ? 'fs-active' : '', 'aria-selected': i === st.active ? 'true' : 'false', onmousedown: (e) => { e.preventDefault(); choose(i); } },
      h('span', { class: `fs-swatch fs-k-${it.kind}` }), it.id, h('small', {}, it.kind))));
    list.hidden = !st.items.length;
  };
  input.addEventListener('input', () => { st.active = 0; st.items = searchItems(ed.model, input.value); render(); });
  const keys = {
    ArrowDown: () => { st.active = Math.min(st.active + 1, st.items.length - 1); render(); return true; },
    ArrowUp: () => { st.active = Math.max(st.active - 1, 0); render(); return true; },
    Enter: () => { choose(st.active); return true; },
    Escape: () => { input.value = ''; st.items = []; render(); input.blur(); return false; },
  };
  input.addEventListener('keydown', (e) => { if (keys[e.key] && keys[e.key]()) e.preventDefault(); });
  input.addEventListener('blur', () => setTimeout(() => { list.hidden = true; }, 100));
}

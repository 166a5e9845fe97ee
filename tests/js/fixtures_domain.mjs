// An NVLink-switched domain for the editor's unit tests (test-only; see fixtures.mjs).
/**
 * A small NVLink-switched domain d (an NVL72 in miniature) inside rack r:
 *
 *     r ─ d (nvlink_domain)
 *          ├─ d/t0 … d/t3   hosts: cpu0 ─pcie─ gpu0, gpu1
 *          └─ d/s0, d/s1    switch trays: nvswitch0, nvswitch1
 *     every GPU ══nvlink══ every chip: 4 hosts × 2 GPUs × 4 chips = 32 NVLinks
 *
 * With `extraKind`, a third child group d/x holds one device of that kind (not a switch tray).
 */
export function domain(extraKind) {
  const doc = { format: 'fabricscope.topology/1', name: 'mini-nvl', groups: [{ id: 'r', kind: 'rack' }, { id: 'd', kind: 'nvlink_domain', parent: 'r' }], nodes: [], links: [] };
  const chips = [];
  for (let s = 0; s < 2; s += 1) {
    doc.groups.push({ id: `d/s${s}`, kind: 'nvlink_switch_tray', parent: 'd' });
    for (let c = 0; c < 2; c += 1) { const id = `d/s${s}/nvswitch${c}`; chips.push(id); doc.nodes.push({ id, kind: 'nvswitch', group: `d/s${s}` }); }
  }
  for (let t = 0; t < 4; t += 1) {
    const h = `d/t${t}`;
    doc.groups.push({ id: h, kind: 'host', parent: 'd', template: 'mini-tray' });
    doc.nodes.push({ id: `${h}/cpu0`, kind: 'cpu', group: h, attrs: { role: 'socket' } });
    for (let g = 0; g < 2; g += 1) {
      doc.nodes.push({ id: `${h}/gpu${g}`, kind: 'gpu', group: h });
      doc.links.push({ id: `${h}/gpu${g}-cpu0`, a: `${h}/gpu${g}`, b: `${h}/cpu0`, tech: 'pcie5x16' });
      for (const c of chips) doc.links.push({ id: `${h}/gpu${g}-${c}`, a: `${h}/gpu${g}`, b: c, tech: 'nvlink5x1' });
    }
  }
  if (extraKind) {
    doc.groups.push({ id: 'd/x', kind: 'other', parent: 'd' });
    doc.nodes.push({ id: 'd/x/dev0', kind: extraKind, group: 'd/x' });
  }
  return doc;
}


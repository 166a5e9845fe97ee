// Small fabricscope.topology/1 documents for the editor's unit tests (test-only).

/**
 * One DGX-like host `h`: 4 NVSwitch, 8 GPU, 4 PCIe switches, 8 NIC, 4 NVMe, 2 CPU, 2 memory.
 *
 *   nvsw0..3  ==nvlink== gpu0..7        (every GPU to every NVSwitch)
 *   gpu(2i), gpu(2i+1), nic(2i), nic(2i+1), nvme(i) --pcie-- pcie(i)
 *   pcie0, pcie1 --pcie-- cpu0 ==upi== cpu1 --pcie-- pcie2, pcie3
 *   cpu0 --ddr-- mem0, cpu1 --ddr-- mem1
 *
 * Returns {groups, nodes, links}: 32 nodes, 32 + 8 + 8 + 4 + 4 + 1 + 2 = 59 links.
 */
export function host(h, parent) {
  const group = { id: h, kind: 'host', template: 'dgx-like' };
  if (parent) group.parent = parent;
  const nodes = [];
  const links = [];
  const node = (local, kind, attrs) => nodes.push({ id: `${h}/${local}`, kind, group: h, ...(attrs ? { attrs } : {}) });
  const link = (a, b, tech) => links.push({ id: `${h}/${a}-${b}`, a: `${h}/${a}`, b: `${h}/${b}`, tech });
  for (let s = 0; s < 4; s += 1) node(`nvsw${s}`, 'nvswitch');
  for (let g = 0; g < 8; g += 1) node(`gpu${g}`, 'gpu', { model: 'H100', rail: g });
  for (let p = 0; p < 4; p += 1) node(`pcie${p}`, 'pcie_switch');
  for (let n = 0; n < 8; n += 1) node(`nic${n}`, 'nic', { rail: n });
  for (let d = 0; d < 4; d += 1) node(`nvme${d}`, 'nvme');
  for (let c = 0; c < 2; c += 1) { node(`cpu${c}`, 'cpu'); node(`mem${c}`, 'memory'); }
  for (let g = 0; g < 8; g += 1) for (let s = 0; s < 4; s += 1) link(`gpu${g}`, `nvsw${s}`, 'nvlink4x4');
  for (let g = 0; g < 8; g += 1) link(`gpu${g}`, `pcie${g >> 1}`, 'pcie5x16');
  for (let n = 0; n < 8; n += 1) link(`nic${n}`, `pcie${n >> 1}`, 'pcie5x16');
  for (let d = 0; d < 4; d += 1) link(`nvme${d}`, `pcie${d}`, 'pcie4x4');
  for (let p = 0; p < 4; p += 1) link(`pcie${p}`, `cpu${p >> 1}`, 'pcie5x16');
  link('cpu0', 'cpu1', 'upi-spr');
  for (let c = 0; c < 2; c += 1) link(`cpu${c}`, `mem${c}`, 'ddr5x8');
  return { groups: [group], nodes, links };
}

/**
 * `nHosts` hosts h0..h(n-1) with a rail-optimized fabric: one leaf per rail (leaf0..7, NIC r of
 * every host to leaf r) and `spines` spines, every leaf to every spine.
 */
export function cluster(nHosts, spines = 2) {
  const doc = { format: 'fabricscope.topology/1', name: `cluster-${nHosts}`, groups: [], nodes: [], links: [] };
  for (let i = 0; i < nHosts; i += 1) {
    const part = host(`h${i}`);
    doc.groups.push(...part.groups); doc.nodes.push(...part.nodes); doc.links.push(...part.links);
  }
  for (let r = 0; r < 8; r += 1) doc.nodes.push({ id: `leaf${r}`, kind: 'switch', attrs: { role: 'leaf', rail: r } });
  for (let s = 0; s < spines; s += 1) doc.nodes.push({ id: `spine${s}`, kind: 'switch', attrs: { role: 'spine' } });
  for (let i = 0; i < nHosts; i += 1) {
    for (let r = 0; r < 8; r += 1) doc.links.push({ id: `h${i}/nic${r}-leaf${r}`, a: `h${i}/nic${r}`, b: `leaf${r}`, tech: 'ib-ndr' });
  }
  for (let r = 0; r < 8; r += 1) {
    for (let s = 0; s < spines; s += 1) doc.links.push({ id: `leaf${r}-spine${s}`, a: `leaf${r}`, b: `spine${s}`, tech: 'ib-ndr' });
  }
  return doc;
}

/** Two GPUs in one host and a switch outside it:  [h0/gpu0]--pcie--[h0/gpu1]   [leaf0] */
export function tiny() {
  return {
    format: 'fabricscope.topology/1',
    name: 'tiny',
    groups: [{ id: 'r0', kind: 'rack' }, { id: 'h0', kind: 'host', parent: 'r0' }],
    nodes: [
      { id: 'h0/gpu0', kind: 'gpu', group: 'h0' },
      { id: 'h0/gpu1', kind: 'gpu', group: 'h0' },
      { id: 'leaf0', kind: 'switch', attrs: { role: 'leaf' } },
    ],
    links: [{ id: 'h0/gpu0-gpu1', a: 'h0/gpu0', b: 'h0/gpu1', tech: 'pcie5x16', capacity_gbps: 504 }],
  };
}

/* Fabricscope editor — automatic layout.
 *
 * Used only for nodes the user has not placed by hand (those live in doc.layout.positions).
 * - Inside a host: a block diagram. NVSwitches on top, GPUs in a row, PCIe switches under them,
 *   then NICs, NVMe drives, and CPUs with their memory at the bottom. Rows below the GPUs are
 *   ordered by the barycentre of what they connect to above, which keeps PCIe trees untangled.
 * - Hosts (and racks, as units holding their hosts) sit in rows that wrap, so a 128-host cluster
 *   is a block rather than a 90,000-pixel ribbon; group boxes never overlap.
 * - Fabric switches sit in tiers above: core, spine, leaf, ToR.
 */
(function (NS) {
  'use strict';

  const DX = 66;          // px between nodes of one row in a host
  const DY = 72;          // px between rows in a host
  const HOST_GAP = 70;    // px between host boxes
  const ROW_GAP = 120;    // px between rows of hosts
  const TIER_DY = 170;    // px between fabric tiers
  const HOST_ROWS = {
    nvswitch: 0, gpu: 1, pcie_switch: 2, nic: 3, nvme: 4, storage: 4, cpu: 5, memory: 5,
  };
  const TIER = { core: 0, spine: 1, leaf: 2, tor: 3 };
  const cmp = (a, b) => NS.naturalCompare(a, b);

  /** Block-diagram positions of `nodeIds` (one host), relative to the host's top-centre. */
  function hostBlock(model, nodeIds) {
    const rows = [];
    for (const id of nodeIds) {
      const n = model.node(id);
      const r = HOST_ROWS[n.kind] != null ? HOST_ROWS[n.kind] : 6;
      (rows[r] = rows[r] || []).push(id);
    }
    const inHost = new Set(nodeIds);
    const pos = new Map();
    let width = 0;
    let y = 0;
    for (let r = 0; r < rows.length; r += 1) {
      const row = rows[r];
      if (!row) continue;
      row.sort(cmp);
      if (r >= 2) {
        // Barycentre of already placed neighbours; nodes with none keep their natural order.
        const key = new Map();
        row.forEach((id, i) => {
          let sum = 0; let cnt = 0;
          for (const lid of model.linksOf(id)) {
            const l = model.link(lid);
            const other = l.a === id ? l.b : l.a;
            const p = inHost.has(other) && pos.get(other);
            if (p) { sum += p[0]; cnt += 1; }
          }
          key.set(id, cnt ? sum / cnt : null);
        });
        // Memory sits right after the CPU socket it hangs off (same row, so no key of its own).
        for (const id of row) {
          if (key.get(id) != null) continue;
          for (const lid of model.linksOf(id)) {
            const l = model.link(lid);
            const other = l.a === id ? l.b : l.a;
            if (key.get(other) != null) { key.set(id, key.get(other) + 0.01); break; }
          }
        }
        const withKey = row.filter((id) => key.get(id) != null);
        if (withKey.length === row.length) {
          row.sort((a, b) => (key.get(a) - key.get(b)) || cmp(a, b));
        }
      }
      // CPUs and memory share the last row: interleave each socket's memory right after its CPU.
      const w = (row.length - 1) * DX;
      width = Math.max(width, w);
      row.forEach((id, i) => pos.set(id, [i * DX - w / 2, y]));
      y += DY;
    }
    return { pos, width: width + DX, height: Math.max(y - DY, 0) };
  }

  /** Positions for every node of the document (hand-placed ones are ignored here). */
  function autoLayout(model) {
    const out = new Map();
    const groups = model.doc.groups;
    const topUnits = groups.filter((g) => !g.parent || !model.group(g.parent)).map((g) => g.id).sort(cmp);
    const hostIds = groups.filter((g) => g.kind === 'host').map((g) => g.id);
    const hostSet = new Set(hostIds);

    // 1. Host blocks, in local coordinates.
    const blocks = new Map();
    for (const h of hostIds) blocks.set(h, hostBlock(model, directHostNodes(model, h, hostSet)));

    // 2. Units: a top-level group with the hosts inside it (a host alone is its own unit).
    const units = topUnits.map((gid) => unitOf(model, gid, hostSet, blocks));
    const nHosts = Math.max(1, hostIds.length);
    const typicalW = hostIds.length ? Math.max(...[...blocks.values()].map((b) => b.width)) : 300;
    const perRow = Math.max(4, Math.ceil(Math.sqrt(nHosts * 2)));
    const maxRowW = Math.max(typicalW * perRow + HOST_GAP * (perRow - 1), ...units.map((u) => u.width));

    let x = 0; let y = 0; let rowH = 0; let totalW = 0;
    for (const u of units) {
      if (x > 0 && x + u.width > maxRowW) { x = 0; y += rowH + ROW_GAP; rowH = 0; }
      placeUnit(model, u, x, y, blocks, out);
      x += u.width + HOST_GAP;
      totalW = Math.max(totalW, x - HOST_GAP);
      rowH = Math.max(rowH, u.height);
    }
    const bottom = units.length ? y + rowH : 0;

    // 3. Fabric: ungrouped nodes. Switches in tiers above (bottom tier first, so each tier can be
    //    ordered by the barycentre of what it connects to below); other ungrouped nodes below.
    const free = model.doc.nodes.filter((n) => !n.group || !model.group(n.group));
    const tiers = [[], [], [], []];
    const others = [];
    for (const n of free) {
      if (n.kind === 'switch') {
        const role = n.attrs && n.attrs.role;
        tiers[TIER[role] != null ? TIER[role] : 2].push(n.id);
      } else others.push(n.id);
    }
    const usedTiers = tiers.map((t, i) => (t.length ? i : -1)).filter((i) => i >= 0);
    const centre = totalW / 2;
    const width = Math.max(totalW, 400);
    // Tiers spread with the size of the host area, so fabric links stay readable at any scale.
    const tierDy = Math.max(TIER_DY, Math.min(bottom * 0.12, 900));
    usedTiers.slice().reverse().forEach((t, k) => {
      const ty = -tierDy * (k + 1) - (units.length ? 40 : 0);
      spreadRow(model, tiers[t], ty, centre, width, out);
    });
    if (others.length) spreadRow(model, others, bottom + ROW_GAP + 40, centre, width, out);
    return out;
  }

  function directHostNodes(model, hostId, hostSet) {
    // Nodes in the host or in a non-host subgroup of it.
    const out = [...(model.childNodes.get(hostId) || [])];
    const stack = [...(model.childGroups.get(hostId) || [])];
    while (stack.length) {
      const g = stack.pop();
      if (hostSet.has(g)) continue;
      out.push(...(model.childNodes.get(g) || []));
      stack.push(...(model.childGroups.get(g) || []));
    }
    return out;
  }

  function unitOf(model, gid, hostSet, blocks) {
    const hosts = hostSet.has(gid) ? [gid] : model.descendantGroups(gid).filter((g) => hostSet.has(g)).sort(cmp);
    const hostInside = new Set();
    for (const h of hosts) for (const n of model.descendantNodes(h)) hostInside.add(n);
    const extra = hostSet.has(gid) ? [] : model.descendantNodes(gid).filter((n) => !hostInside.has(n)).sort(cmp);
    let width = 0; let height = 0;
    for (const h of hosts) { width += blocks.get(h).width; height = Math.max(height, blocks.get(h).height); }
    width += HOST_GAP * Math.max(0, hosts.length - 1);
    width = Math.max(width, extra.length * DX, DX);
    if (extra.length) height += DY * 1.6;
    return { id: gid, hosts, extra, width, height };
  }

  function placeUnit(model, u, x0, y0, blocks, out) {
    let x = x0;
    const hostTop = u.extra.length ? y0 + DY * 1.6 : y0;
    for (const h of u.hosts) {
      const b = blocks.get(h);
      const cx = x + b.width / 2;
      for (const [id, p] of b.pos) out.set(id, [Math.round(cx + p[0]), Math.round(hostTop + p[1])]);
      x += b.width + HOST_GAP;
    }
    const w = (u.extra.length - 1) * DX;
    const cx = x0 + u.width / 2;
    u.extra.forEach((id, i) => out.set(id, [Math.round(cx - w / 2 + i * DX), y0]));
  }

  function spreadRow(model, ids, y, centre, width, out) {
    const key = new Map();
    for (const id of ids) {
      let sum = 0; let cnt = 0;
      for (const lid of model.linksOf(id)) {
        const l = model.link(lid);
        const p = out.get(l.a === id ? l.b : l.a);
        if (p) { sum += p[0]; cnt += 1; }
      }
      key.set(id, cnt ? Math.round(sum / cnt / 20) : Infinity);
    }
    ids.sort((a, b) => (key.get(a) - key.get(b)) || cmp(a, b));
    const step = Math.max(90, Math.min(width / Math.max(ids.length, 1), 400));
    const w = step * (ids.length - 1);
    ids.forEach((id, i) => out.set(id, [Math.round(centre - w / 2 + i * step), Math.round(y)]));
  }

  NS.layout = { autoLayout, hostBlock, DX, DY };
})(window.FabricscopeEditorNS = window.FabricscopeEditorNS || {});

/* Fabricscope editor — automatic layout.
 *
 * Used only for nodes the user has not placed by hand (those live in doc.layout.positions).
 * - Inside a host: the PCIe tree (hostTree, the rule of designer/figures/hostlayout.py): NICs on
 *   top where their uplinks leave for the fabric, NVSwitches, devices, PCIe switch levels, root
 *   complexes, sockets, memory; each switch over its devices, each root over its switches.
 * - Hosts (and racks, as units holding their hosts) sit in rows that wrap, so a 128-host cluster
 *   is a block rather than a 90,000-pixel ribbon; group boxes never overlap.
 * - An NVLink-switched domain (a group holding hosts and groups of NVSwitch chips only: the 18
 *   compute trays and 9 NVLink-switch trays of a GB200 NVL72) stands as a rack drawing: compute
 *   trays in two columns flanking a central column of switch trays, so its NVLinks fan out from
 *   the middle instead of running along one 13,000-pixel row.
 * - Fabric switches sit in tiers above: core, spine, leaf, ToR.
 *
 * Pure: no DOM (it reads the Model only), so it is unit-tested under Node.
 */
import { naturalCompare } from './model.js';
import { Positions } from './positions.js';

export const DX = 66;          // px between nodes of one row in a host
export const DY = 72;          // px between rows in a host
const HOST_GAP = 70;    // px between host boxes
const ROW_GAP = 120;    // px between rows of hosts
const TIER_DY = 170;    // px between fabric tiers
const DOMAIN_COL_GAP = 280; // px between a switched domain's tray columns: room for the NVLink fan
const DOMAIN_MID = 0.8;     // the switch column's width / a host column's: a collapsed switch tray
                            // is drawn 0.8 × its chips' spread, wide enough for its label
const DOMAIN_ROW_GAP = 60;  // px between trays of one column (box padding + label fit in it)
const TIER = { core: 0, spine: 1, leaf: 2, tor: 3 };
const cmp = (a, b) => naturalCompare(a, b);

// The host drawing follows the PCIe tree, the same rule as designer/figures/hostlayout.py (the
// result views), so a host looks the same in the editor and in its results. Rows, top (the fabric
// side, where NIC uplinks leave) to bottom: NIC, NVSwitch, devices (GPU, NVMe, other endpoints),
// PCIe switch levels (deepest first), root complexes, CPU sockets (attrs.role "socket"), memory.
// Columns are a tidy tree walked from every root in natural order: each leaf takes the next
// column, a switch or root sits over the mean of its children; rows keep nodes a column apart.
const CHILD_ORDER = { cpu: 0, pcie_switch: 1, gpu: 2, nvme: 3, nic: 5 }; // everything else: 4
// Columns kept between an NVSwitch's centre and a link crossing its row (hostlayout.py NVSWITCH_CLEAR).
const NVSWITCH_CLEAR = 0.4;
const NOT_TREE = new Set(['cpu', 'memory', 'nvswitch']);
const childRank = (k) => (CHILD_ORDER[k] != null ? CHILD_ORDER[k] : 4);

function pcieTree(kinds, adj, sockets) {
  const cpus = [...kinds.keys()].filter((n) => kinds.get(n) === 'cpu').sort(cmp);
  const roots = cpus.filter((n) => sockets.has(n));
  if (!roots.length) roots.push(...cpus);
  const depth = new Map(roots.map((r) => [r, 0]));
  const children = new Map();
  const grow = (start) => {
    let frontier = start;
    while (frontier.length) {
      const next = [];
      for (const n of frontier) {
        if (depth.get(n) > 0 && kinds.get(n) !== 'pcie_switch' && kinds.get(n) !== 'cpu') continue;
        for (const m of [...adj.get(n)].sort(cmp)) {
          const ok = !NOT_TREE.has(kinds.get(m)) || (kinds.get(m) === 'cpu' && sockets.has(n) && !sockets.has(m));
          if (!depth.has(m) && ok) {
            depth.set(m, depth.get(n) + 1);
            if (!children.has(n)) children.set(n, []);
            children.get(n).push(m);
            next.push(m);
          }
        }
      }
      frontier = next;
    }
  };
  grow(roots);
  const switches = [...kinds.keys()].filter((n) => kinds.get(n) === 'pcie_switch').sort(cmp);
  // Root complexes no socket links to, switches no CPU reaches: trees of their own.
  for (const n of cpus.concat(switches)) if (!depth.has(n)) { roots.push(n); depth.set(n, 0); grow([n]); }
  for (const kids of children.values()) {
    kids.sort((a, b) => (childRank(kinds.get(a)) - childRank(kinds.get(b))) || cmp(a, b));
  }
  return { roots, children, depth };
}

function treeColumns(roots, children, kinds) {
  const col = new Map();
  let next = 0;
  const place = (n) => {
    const kids = children.get(n) || [];
    if (!kids.length) { col.set(n, next); next += 1; } else {
      const xs = kids.map(place);
      col.set(n, xs.reduce((a, b) => a + b, 0) / xs.length);
    }
    return col.get(n);
  };
  for (const r of roots) if ((children.get(r) || []).length) place(r);
  const rest = [...kinds.keys()].filter((n) => !col.has(n) && !['cpu', 'memory', 'nvswitch'].includes(kinds.get(n)));
  for (const n of rest.sort(cmp)) place(n); // devices no root complex reaches
  return col;
}

function rowOf(kind, switchRow, levels, isSocket) {
  if (kind === 'nic') return 0;
  if (kind === 'nvswitch') return 1;
  if (kind === 'pcie_switch') return 3 + switchRow;
  if (kind === 'cpu') return 3 + levels + (isSocket ? 1 : 0);
  if (kind === 'memory') return 5 + levels;
  return 2;
}

/**
 * PCIe-tree positions of one host: `{pos: Map id -> [column centre (0.5, 1.5, ...), row]}`,
 * `width` (columns), `rows`. Same rule and numbers as designer/figures/hostlayout.py
 * host_tree_layout. `kinds`: Map id -> kind; `links`: [[a, b]]; `roles`: Map id -> attrs.role.
 */
export function hostTree(kinds, links, roles = new Map()) {
  const adj = new Map([...kinds.keys()].map((n) => [n, new Set()]));
  for (const [a, b] of links) {
    if (kinds.has(a) && kinds.has(b) && a !== b) { adj.get(a).add(b); adj.get(b).add(a); }
  }
  const sockets = new Set([...kinds.keys()].filter((n) => kinds.get(n) === 'cpu' && roles.get(n) === 'socket'));
  const { roots, children, depth } = pcieTree(kinds, adj, sockets);
  const col = treeColumns(roots, children, kinds);
  const maxCol = () => Math.max(-1, ...col.values());
  const under = (ids, parents) => ids.forEach((n) => {
    const xs = [...adj.get(n)].filter((m) => parents.has(m) && col.has(m)).map((m) => col.get(m));
    col.set(n, xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : maxCol() + 1);
  });
  under(roots.filter((r) => !col.has(r)), new Set([...kinds.keys()].filter((n) => kinds.get(n) === 'cpu' && col.has(n))));
  for (const n of [...kinds.keys()].filter((k) => kinds.get(k) === 'memory').sort(cmp)) {
    const cpu = [...adj.get(n)].sort(cmp).find((m) => kinds.get(m) === 'cpu');
    col.set(n, cpu !== undefined ? col.get(cpu) : maxCol() + 1);
  }
  let width = Math.max(Math.floor(maxCol()) + 1, 1);
  const nvs = [...kinds.keys()].filter((n) => kinds.get(n) === 'nvswitch').sort(cmp);
  nvs.forEach((n, j) => col.set(n, ((j + 0.5) * width) / nvs.length - 0.5));
  const levels = [...new Set([...depth].filter(([n]) => kinds.get(n) === 'pcie_switch').map(([, d]) => d))]
    .sort((a, b) => b - a);
  const levelRow = new Map(levels.map((d, i) => [d, i]));
  const row = new Map([...kinds].map(([n, k]) => [n, rowOf(k, levelRow.get(depth.get(n)) || 0, levels.length || 1, sockets.has(n))]));
  spreadRows(col, row);
  const used = [...new Set(row.values())].sort((a, b) => a - b);
  const renumber = new Map(used.map((r, i) => [r, i]));
  const pos = new Map([...kinds.keys()].map((n) => [n, [col.get(n) + 0.5, renumber.get(row.get(n))]]));
  clearNvswitches(kinds, adj, pos);
  width = Math.max(width, Math.floor(Math.max(0, ...[...pos.values()].map(([x]) => x - 0.5))) + 1);
  return { pos, width, rows: used.length };
}

/** The x where each link crossing row `r` passes it ([x, row] positions). */
function crossings(adj, pos, r) {
  const out = [];
  for (const [a, peers] of adj) {
    for (const b of peers) {
      const [xa, ra] = pos.get(a); const [xb, rb] = pos.get(b);
      if (ra < r && r < rb) out.push(xa + ((xb - xa) * (r - ra)) / (rb - ra));
    }
  }
  return out;
}

/** Move the NVSwitches off the links crossing their row (a NIC above them wired to its PCIe
 * switch below: an imported DGX H200 slice), as hostlayout.py _clear_nvswitches does: each, left
 * to right, takes the nearest quarter-column position (right before left) at least
 * NVSWITCH_CLEAR from every crossing and a column from those already placed. */
function clearNvswitches(kinds, adj, pos) {
  const nvs = [...kinds.keys()].filter((n) => kinds.get(n) === 'nvswitch')
    .sort((a, b) => (pos.get(a)[0] - pos.get(b)[0]) || cmp(a, b));
  if (!nvs.length) return;
  const r = pos.get(nvs[0])[1];
  const cross = crossings(adj, pos, r);
  const placed = [];
  const free = (x) => cross.every((c) => Math.abs(x - c) >= NVSWITCH_CLEAR) && placed.every((p) => Math.abs(x - p) >= 1);
  for (const n of nvs) {
    const x0 = pos.get(n)[0];
    let x = x0;
    for (let step = 0; step < 4 * kinds.size + 8; step += 1) {
      x = step ? x0 + (Math.floor((step + 1) / 2) / 4) * (step % 2 ? 1 : -1) : x0;
      if (free(x)) break;
    }
    placed.push(x);
    pos.set(n, [x, r]);
  }
}

function spreadRows(col, row) {
  const byRow = new Map();
  for (const [n, r] of row) { if (!byRow.has(r)) byRow.set(r, []); byRow.get(r).push(n); }
  for (const ids of byRow.values()) {
    ids.sort((a, b) => (col.get(a) - col.get(b)) || cmp(a, b));
    for (let i = 1; i < ids.length; i += 1) {
      if (col.get(ids[i]) < col.get(ids[i - 1]) + 1) col.set(ids[i], col.get(ids[i - 1]) + 1);
    }
  }
}

/** PCIe-tree positions of `nodeIds` (one host) in px, relative to the host's top-centre. */
export function hostBlock(model, nodeIds) {
  if (!nodeIds.length) return { pos: new Map(), width: DX, height: 0 };
  const inHost = new Set(nodeIds);
  const kinds = new Map(nodeIds.map((id) => [id, model.node(id).kind]));
  const roles = new Map(nodeIds.map((id) => [id, (model.node(id).attrs || {}).role]));
  const links = [];
  for (const id of nodeIds) {
    for (const l of model.linkObjectsOf(id)) {
      if (l.a === id && inHost.has(l.b)) links.push([l.a, l.b]);
    }
  }
  const tree = hostTree(kinds, links, roles);
  const pos = new Map([...tree.pos].map(([id, [c, r]]) => [id, [(c - tree.width / 2) * DX, r * DY]]));
  return { pos, width: tree.width * DX, height: (tree.rows - 1) * DY };
}

/** Positions for every node of the document (hand-placed ones are ignored here). */
export function autoLayout(model) {
  const out = new Positions();
  const groups = model.doc.groups;
  const topUnits = groups.filter((g) => !g.parent || !model.group(g.parent)).map((g) => g.id).sort(cmp);
  const hostIds = groups.filter((g) => g.kind === 'host').map((g) => g.id);
  const hostSet = new Set(hostIds);

  // 1. Host blocks, in local coordinates (one PCIe-tree layout per host shape: see sharedBlock).
  const blocks = new Map();
  const shapes = new Map();
  for (const h of hostIds) blocks.set(h, sharedBlock(model, h, directHostNodes(model, h, hostSet), shapes));

  // 2. Units: a top-level group with the hosts inside it (a host alone is its own unit).
  // Groups without hosts (a layer of super-spines) first: the upper tier above what it serves.
  const units = topUnits.map((gid) => unitOf(model, gid, hostSet, blocks))
    .sort((a, b) => (hasHosts(b) - hasHosts(a)) * -1 || cmp(a.id, b.id));
  const nHosts = Math.max(1, hostIds.length);
  const typicalW = hostIds.length ? Math.max(...[...blocks.values()].map((b) => b.width)) : 300;
  const perRow = Math.max(4, Math.ceil(Math.sqrt(nHosts * 2)));
  let maxRowW = Math.max(typicalW * perRow + HOST_GAP * (perRow - 1), ...units.map((u) => u.width));
  const grids = units.filter((u) => u.grid);
  if (grids.length) { // pods of racks: about as many rows as columns of pods
    const w = Math.max(...grids.map((u) => u.width)); const h = Math.max(...grids.map((u) => u.height));
    const across = Math.max(1, Math.round(Math.sqrt((grids.length * (h + ROW_GAP)) / (w + HOST_GAP))));
    maxRowW = Math.max(across * (w + HOST_GAP) - HOST_GAP, ...units.map((u) => u.width));
  }

  let x = 0; let y = 0; let rowH = 0; let totalW = 0; let prev = null;
  for (const u of units) {
    const tierEnds = prev && hasHosts(prev) !== hasHosts(u); // the layer without hosts keeps its row
    if (x > 0 && (x + u.width > maxRowW || tierEnds)) { x = 0; y += rowH + ROW_GAP; rowH = 0; }
    prev = u;
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

/**
 * hostBlock of one host, computed once per host shape: hosts of one template with as many
 * devices and link ends are laid out from the first one's block (a 4,096-host design has one
 * shape, and the PCIe-tree walk was 40 % of its open). The tree orders ids naturally, which
 * within one host is the order of the ids below it, so a reused block is the block hostBlock
 * would compute; it is reused only when it places every device of the host by that local id.
 * A block is two parallel arrays, device ids and their [x, y] relative to the host's
 * top-centre; a host listing its devices in the first one's order shares its `pts` as they
 * are (12,500 hosts of 50 devices: no per-host map of positions to build).
 * @returns {{ids: string[], pts: number[][], width: number, height: number}}
 */
function sharedBlock(model, hostId, ids, shapes) {
  const prefix = `${hostId}/`;
  let ends = 0;
  for (const id of ids) ends += model.degree(id);
  const key = `${model.group(hostId).template || ''}|${ids.length}|${ends}`;
  const cached = shapes.get(key);
  if (cached) {
    const { width, height } = cached;
    if (sameLocalIds(ids, prefix, cached.local)) return { ids, pts: cached.pts, width, height, ...wholeShape(cached, prefix) };
    const byLocal = cached.byLocal || (cached.byLocal = new Map(cached.local.map((id, i) => [id, cached.pts[i]])));
    const pts = [];
    for (const id of ids) {
      const p = id.startsWith(prefix) ? byLocal.get(id.slice(prefix.length)) : undefined;
      if (!p) break;
      pts.push(p);
    }
    if (pts.length === ids.length) return { ids, pts, width, height };
  }
  const block = hostBlock(model, ids);
  const pts = ids.map((id) => block.pos.get(id));
  const whole = pts.every(Boolean) && block.pos.size === ids.length;
  if (!cached && whole && ids.every((id) => id.startsWith(prefix))) {
    const shape = { local: ids.map((id) => id.slice(prefix.length)), pts, width: block.width, height: block.height };
    shapes.set(key, shape);
    return { ids, pts, width: block.width, height: block.height, ...wholeShape(shape, prefix) };
  }
  return whole ? { ids, pts, width: block.width, height: block.height }
    : { ids: [...block.pos.keys()], pts: [...block.pos.values()], width: block.width, height: block.height };
}

/** What lets Positions keep a block whole: its prefix, its shape's local ids and their rows. */
function wholeShape(shape, prefix) {
  if (!shape.index) shape.index = new Map(shape.local.map((id, i) => [id, i]));
  return { prefix, local: shape.local, index: shape.index };
}

/** Whether `ids` are `prefix` + each of `local`, in that order. */
function sameLocalIds(ids, prefix, local) {
  if (ids.length !== local.length) return false;
  for (let i = 0; i < ids.length; i += 1) {
    const id = ids[i];
    if (id.length !== prefix.length + local[i].length || !id.startsWith(prefix) || !id.endsWith(local[i])) return false;
  }
  return true;
}

function hasHosts(u) { return u.grid || u.hosts.length ? 1 : 0; }

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
  // A group of groups of hosts (a pod of racks): its sub-units in a grid, not one long row.
  const subs = hostSet.has(gid) ? [] : (model.childGroups.get(gid) || []).filter((g) => hostSet.has(g) || model.descendantGroups(g).some((d) => hostSet.has(d)));
  if (subs.some((g) => !hostSet.has(g))) return gridUnit(model, gid, subs.sort(cmp), hostSet, blocks);
  const domain = hostSet.has(gid) ? null : switchedDomain(model, gid, subs, hostSet);
  if (domain) return domainUnit(model, gid, domain, blocks);
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

/**
 * The switch groups of an NVLink-switched domain, or null when `gid` is not one: at least two
 * hosts directly inside it, and at least one child group that holds devices, no host, and only
 * NVSwitch chips (an NVLink-switch tray). Any other child group makes it an ordinary unit.
 */
function switchedDomain(model, gid, hostKids, hostSet) {
  if (hostKids.length < 2) return null;
  const switchGroups = [];
  for (const g of model.childGroups.get(gid) || []) {
    if (hostSet.has(g)) continue;
    const ids = model.descendantNodes(g);
    const onlyChips = ids.length && ids.every((id) => model.node(id).kind === 'nvswitch');
    if (!onlyChips || model.descendantGroups(g).some((d) => hostSet.has(d))) return null;
    switchGroups.push(g);
  }
  return switchGroups.length ? { hosts: hostKids.slice().sort(cmp), switchGroups: switchGroups.sort(cmp) } : null;
}

/**
 * A switched domain as a rack drawing: hosts (natural order) down a left and a right column, the
 * switch groups down the middle, each group's chips side by side; switch group i level with host
 * row i when there are as many of both, else spread evenly over the columns' height. The
 * domain's own other devices sit in a row above, as in an ordinary unit.
 */
function domainUnit(model, gid, { hosts, switchGroups }, blocks) {
  const left = hosts.slice(0, Math.ceil(hosts.length / 2));
  const right = hosts.slice(left.length);
  const colW = Math.max(...hosts.map((h) => blocks.get(h).width));
  const rowH = Math.max(...hosts.map((h) => blocks.get(h).height));
  const chips = switchGroups.map((g) => model.descendantNodes(g).sort(cmp));
  const midW = Math.max(...chips.map((ids) => ids.length * DX), Math.round(colW * DOMAIN_MID), 3 * DX);
  const inside = new Set([...hosts, ...switchGroups].flatMap((g) => model.descendantNodes(g)));
  const extra = model.descendantNodes(gid).filter((n) => !inside.has(n)).sort(cmp);
  const columnsH = left.length * rowH + (left.length - 1) * DOMAIN_ROW_GAP;
  const width = Math.max(2 * colW + midW + 2 * DOMAIN_COL_GAP, extra.length * DX);
  const height = columnsH + (extra.length ? DY * 1.6 : 0);
  const domain = { left, right, chips, colW, rowH, midW, columnsH };
  return { id: gid, hosts, extra, domain, width, height };
}

function placeDomain(u, x0, y0, blocks, out) {
  const { left, right, chips, colW, rowH, columnsH } = u.domain;
  const top = u.extra.length ? y0 + DY * 1.6 : y0;
  const pitch = rowH + DOMAIN_ROW_GAP;
  const colX = [x0 + (u.width - 2 * colW - u.domain.midW) / 2 - DOMAIN_COL_GAP + colW / 2];
  colX.push(x0 + u.width / 2, 2 * (x0 + u.width / 2) - colX[0]);
  [left, right].forEach((column, side) => column.forEach((h, r) => out.setBlock(blocks.get(h), colX[side * 2], top + r * pitch)));
  chips.forEach((ids, i) => {
    const cy = chips.length === left.length ? top + i * pitch + rowH / 2 : top + ((i + 0.5) * columnsH) / chips.length;
    const step = ids.length > 1 ? (u.domain.midW - DX) / (ids.length - 1) : 0; // the chips span the column
    ids.forEach((id, k) => out.set(id, [Math.round(colX[1] + (k - (ids.length - 1) / 2) * step), Math.round(cy)]));
  });
  const w = (u.extra.length - 1) * DX;
  u.extra.forEach((id, i) => out.set(id, [Math.round(x0 + u.width / 2 - w / 2 + i * DX), y0]));
}

/** Sub-units in rows of about a square's worth, the group's own devices (a pod's switches) in
 * rows above them. */
function gridUnit(model, gid, subIds, hostSet, blocks) {
  const subs = subIds.map((g) => unitOf(model, g, hostSet, blocks));
  const inSubs = new Set(subIds.flatMap((g) => model.descendantNodes(g)));
  const extra = model.descendantNodes(gid).filter((n) => !inSubs.has(n)).sort(cmp);
  const w = Math.max(...subs.map((u) => u.width), DX);
  const h = Math.max(...subs.map((u) => u.height), DY);
  const perRow = Math.max(1, Math.round(Math.sqrt((subs.length * (h + ROW_GAP)) / (w + HOST_GAP))));
  const rows = [];
  for (let i = 0; i < subs.length; i += perRow) rows.push(subs.slice(i, i + perRow));
  const rowW = (row) => row.reduce((a, u) => a + u.width, 0) + HOST_GAP * (row.length - 1);
  const width = Math.max(...rows.map(rowW), DX);
  const perExtraRow = Math.max(1, Math.floor(width / DX));
  const extraRows = Math.ceil(extra.length / perExtraRow);
  const top = extraRows ? extraRows * DY + DY * 0.6 : 0;
  const height = top + rows.reduce((a, row) => a + Math.max(...row.map((u) => u.height)), 0) + ROW_GAP * Math.max(0, rows.length - 1);
  return { id: gid, grid: rows, extra, perExtraRow, top, width, height };
}

function placeUnit(model, u, x0, y0, blocks, out) {
  if (u.grid) { placeGrid(model, u, x0, y0, blocks, out); return; }
  if (u.domain) { placeDomain(u, x0, y0, blocks, out); return; }
  let x = x0;
  const hostTop = u.extra.length ? y0 + DY * 1.6 : y0;
  for (const h of u.hosts) {
    const b = blocks.get(h);
    const cx = x + b.width / 2;
    out.setBlock(b, cx, hostTop);
    x += b.width + HOST_GAP;
  }
  const w = (u.extra.length - 1) * DX;
  const cx = x0 + u.width / 2;
  u.extra.forEach((id, i) => out.set(id, [Math.round(cx - w / 2 + i * DX), y0]));
}

function placeGrid(model, u, x0, y0, blocks, out) {
  u.extra.forEach((id, i) => {
    const row = Math.floor(i / u.perExtraRow);
    const inRow = Math.min(u.perExtraRow, u.extra.length - row * u.perExtraRow);
    const col = i - row * u.perExtraRow;
    out.set(id, [Math.round(x0 + u.width / 2 + (col - (inRow - 1) / 2) * DX), Math.round(y0 + row * DY)]);
  });
  let y = y0 + u.top;
  for (const row of u.grid) {
    let x = x0;
    for (const sub of row) { placeUnit(model, sub, x, y, blocks, out); x += sub.width + HOST_GAP; }
    y += Math.max(...row.map((s) => s.height)) + ROW_GAP;
  }
}

function spreadRow(model, ids, y, centre, width, out) {
  const key = new Map();
  for (const id of ids) {
    let sum = 0; let cnt = 0;
    for (const l of model.linkObjectsOf(id)) {
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

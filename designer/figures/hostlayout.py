"""Where the devices of one host are drawn: the PCIe tree, NICs on the edge facing the fabric.

The same rule as the editor's ``hostBlock`` (``static/js/editor/layout.js``), so a host looks the
same in the editor and in every result view, imported or built from a template. Rows, top (the
fabric side) to bottom::

    NIC            uplinks leave the host here, towards the leaves above
    NVSwitch
    devices        GPUs, NVMe drives, other PCIe endpoints
    PCIe switches  one row per tree level, the deepest first
    root complexes CPU nodes with PCIe children: the roots of the PCIe tree
    sockets        CPU nodes without (a DGX's cpu0/cpu1), under the root complexes they link to
    memory         under the socket it hangs off

Columns follow the tree (a tidy tree): walking it from every root complex in natural order, each
leaf takes the next column and a switch or root sits over the mean of its children, so a GPU is
drawn above its own switch and a NIC straight above that switch's column, never on a line between
a GPU and its CPU.
"""
from __future__ import annotations

from collections import defaultdict
from itertools import pairwise

from designer.figures.model import natural

__all__ = ["ROW_ORDER", "host_tree_layout"]

# Rows of the layout, top to bottom ("switches" expands to one row per PCIe tree level).
ROW_ORDER = ("nic", "nvswitch", "devices", "switches", "root complexes", "sockets", "memory")
# Columns kept between an NVSwitch's centre and a link that crosses its row (an NVSwitch is about
# half a column wide: drawn closer, a NIC's PCIe link would seem to run through it).
NVSWITCH_CLEAR = 0.4
_CHILD_ORDER = {"cpu": 0, "pcie_switch": 1, "gpu": 2, "nvme": 3, "nic": 5}  # everything else: 4
_NOT_TREE = {"cpu", "memory", "nvswitch"}  # never a child in the PCIe tree


def _tree(kinds: dict[str, str], adj: dict[str, set], sockets: set) -> tuple[list[str], dict, dict]:
    """Roots, children and depth of every node reached from them (breadth first).

    Roots are the CPU sockets when the host names them (``attrs.role == "socket"``: their root
    complexes are their children), else every CPU node; then any PCIe switch no CPU reaches. Only roots, root complexes and PCIe
    switches have children: an endpoint's other links (GPU-NVSwitch, GPU-NIC) are not tree edges.
    """
    cpus = sorted((n for n, k in kinds.items() if k == "cpu"), key=natural)
    roots = [n for n in cpus if n in sockets] or cpus
    depth = {r: 0 for r in roots}
    children: dict[str, list[str]] = defaultdict(list)

    def grow(frontier):
        while frontier:
            nxt = []
            for n in frontier:
                if depth[n] > 0 and kinds[n] not in ("pcie_switch", "cpu"):
                    continue
                for m in sorted(adj[n], key=natural):
                    child_ok = kinds.get(m) not in _NOT_TREE or (
                        kinds.get(m) == "cpu" and n in sockets and m not in sockets)
                    if m not in depth and child_ok:
                        depth[m] = depth[n] + 1
                        children[n].append(m)
                        nxt.append(m)
            frontier = nxt

    grow(roots)
    switches = sorted((n for n, k in kinds.items() if k == "pcie_switch"), key=natural)
    for n in cpus + switches:  # root complexes no socket links to, switches no CPU reaches: own trees
        if n not in depth:
            roots.append(n)
            depth[n] = 0
            grow([n])
    for kids in children.values():
        kids.sort(key=lambda m: (_CHILD_ORDER.get(kinds[m], 3), natural(m)))
    return roots, children, depth


def _columns(roots: list[str], children: dict, kinds: dict) -> dict[str, float]:
    """Tidy-tree columns: leaves take consecutive columns, parents sit over their children's mean."""
    col: dict[str, float] = {}
    nxt = 0

    def place(n: str) -> float:
        nonlocal nxt
        kids = children.get(n) or []
        if not kids:
            col[n] = float(nxt)
            nxt += 1
        else:
            xs = [place(k) for k in kids]
            col[n] = sum(xs) / len(xs)
        return col[n]

    for r in roots:
        if children.get(r):
            place(r)
    for n in sorted((n for n in kinds if n not in col and kinds[n] not in ("cpu", "memory", "nvswitch")),
                    key=natural):
        place(n)  # devices no root complex reaches
    return col


def _row_key(kind: str, switch_row: int, levels: int, is_socket: bool) -> int:
    """Row of a node: NIC 0, NVSwitch 1, devices 2, switch levels, root complexes, sockets, memory."""
    if kind == "nic":
        return 0
    if kind == "nvswitch":
        return 1
    if kind == "pcie_switch":
        return 3 + switch_row
    if kind == "cpu":
        return 3 + levels + (1 if is_socket else 0)
    if kind == "memory":
        return 5 + levels
    return 2


def host_tree_layout(kinds: dict[str, str], links: list[tuple[str, str]],
                     roles: dict[str, str] | None = None) -> tuple[dict, int, int]:
    """Positions of one host's devices: ``{node: (column, row)}``, width (columns) and row count.

    Parameters
    ----------
    kinds : dict of str to str
        Node id → kind of every node of the host.
    links : list of (str, str)
        The host's internal links (end node ids; links to other nodes are ignored).
    roles : dict of str to str, optional
        Node id → ``attrs.role``; CPUs with role ``"socket"`` are drawn under their root complexes.

    Returns
    -------
    pos : dict of str to (float, int)
        Column (centre of a slot: 0.5, 1.5, ...) and row (0 = top, the fabric side); empty rows
        are dropped, so rows are consecutive from 0.
    width : int
        Columns used (at least 1).
    rows : int
        Rows used.
    """
    adj = _adjacency(kinds, links)
    sockets = {n for n, k in kinds.items() if k == "cpu" and (roles or {}).get(n) == "socket"}
    roots, children, depth = _tree(kinds, adj, sockets)
    col = _columns(roots, children, kinds)
    _place_off_tree(kinds, adj, roots, col)
    row = _rows(kinds, depth, sockets)
    _spread_rows(col, row)
    used = sorted(set(row.values()))
    renumber = {r: i for i, r in enumerate(used)}
    pos = {n: (col[n] + 0.5, renumber[row[n]]) for n in kinds}
    _clear_nvswitches(kinds, adj, pos)
    width = max(int(max((x - 0.5 for x, _ in pos.values()), default=0.0)) + 1, 1)
    return pos, width, len(used)


def _clear_nvswitches(kinds: dict, adj: dict, pos: dict) -> None:
    """Move the NVSwitches off the links that cross their row (a NIC above them wired to its PCIe
    switch below: an imported DGX H200 slice). Each, left to right, takes the nearest position, in
    quarter columns from where it was spread (right before left), at least ``NVSWITCH_CLEAR`` from
    every crossing and one column from the NVSwitches already placed."""
    nvs = sorted((n for n, k in kinds.items() if k == "nvswitch"), key=lambda n: (pos[n][0], natural(n)))
    if not nvs:
        return
    r = pos[nvs[0]][1]
    crossing = [xa + (xb - xa) * (r - ra) / (rb - ra)
                for a in kinds for b in adj[a]
                for (xa, ra), (xb, rb) in [(pos[a], pos[b])] if ra < r < rb]
    placed: list[float] = []
    for n in nvs:
        x0 = pos[n][0]
        for step in range(4 * len(kinds) + 8):
            x = x0 + (step + 1) // 2 / 4 * (1 if step % 2 else -1) if step else x0
            if all(abs(x - c) >= NVSWITCH_CLEAR for c in crossing) and all(abs(x - p) >= 1 for p in placed):
                break
        placed.append(x)
        pos[n] = (x, r)


def _adjacency(kinds: dict, links: list) -> dict[str, set]:
    adj: dict[str, set] = defaultdict(set)
    for a, b in links:
        if a in kinds and b in kinds and a != b:
            adj[a].add(b)
            adj[b].add(a)
    return adj


def _next_free(col: dict) -> float:
    return float(max(col.values(), default=-1.0) + 1)


def _place_off_tree(kinds: dict, adj: dict, roots: list, col: dict) -> None:
    """Columns of what the tree walk left: childless CPUs (by the CPUs they link), memory (under its
    CPU), NVSwitches (spread over the host's width)."""
    placed_cpus = {n for n in col if kinds[n] == "cpu"}
    for n in (r for r in roots if r not in col):
        xs = [col[m] for m in adj[n] if m in placed_cpus]
        col[n] = sum(xs) / len(xs) if xs else _next_free(col)
    for n in sorted((n for n, k in kinds.items() if k == "memory"), key=natural):
        xs = [col[m] for m in sorted(adj[n], key=natural) if kinds.get(m) == "cpu"]
        col[n] = xs[0] if xs else _next_free(col)
    width = max(int(max(col.values(), default=0.0)) + 1, 1)
    nvs = sorted((n for n, k in kinds.items() if k == "nvswitch"), key=natural)
    for j, n in enumerate(nvs):
        col[n] = (j + 0.5) * width / len(nvs) - 0.5


def _rows(kinds: dict, depth: dict, sockets: set) -> dict[str, int]:
    """Row of every node (before empty rows are dropped); PCIe switch levels deepest first."""
    levels = sorted({d for n, d in depth.items() if kinds[n] == "pcie_switch"}, reverse=True)
    level_row = {d: i for i, d in enumerate(levels)}
    return {n: _row_key(k, level_row.get(depth.get(n), 0), len(levels) or 1, n in sockets)
            for n, k in kinds.items()}


def _spread_rows(col: dict, row: dict) -> None:
    """Keep nodes of one row at least one column apart (pushing right, order kept)."""
    by_row = defaultdict(list)
    for n, r in row.items():
        by_row[r].append(n)
    for ids in by_row.values():
        ids.sort(key=lambda n: (col[n], natural(n)))
        for prev, n in pairwise(ids):
            col[n] = max(col[n], col[prev] + 1)

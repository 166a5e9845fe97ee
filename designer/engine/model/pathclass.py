"""Path classes in NCCL / ``nvidia-smi topo -m`` vocabulary.

Classes, from closest to farthest:

- ``X``    the same device;
- ``NV#``  NVLink, ``#`` bonded links (direct GPU⇄GPU links, or the links from a GPU into the
  NVSwitch plane both GPUs reach: 12 on DGX A100, 18 on DGX H100); :func:`classify_path` says
  ``NVL`` for any NVLink-only routed path;
- ``PIX``  at most one PCIe switch; ``PXB`` several PCIe switches, no host bridge;
- ``PHB``  through one PCIe host bridge / root complex (one ``cpu`` node);
- ``NODE`` between host bridges of one socket (several ``cpu`` nodes, one socket);
- ``SYS``  across the inter-socket link (``cpu`` nodes of two sockets);
- ``PXN``  a routed path relaying through a GPU (NVLink to a peer GPU, then its NIC);
- ``NET``  different hosts / through a fabric switch.

NVLink domains (a group of kind ``nvlink_domain``: the 18 trays of a GB200 NVL72) join GPUs of
several hosts over NVLink: two GPUs of one domain are ``NV#`` (``NV18`` on an NVL72) whether or
not they share a tray, and a routed NVLink-only path between them is ``NVL``, not ``NET``. A
GPU reached through NVLink-C2C (Grace⇄Blackwell) is not on PCIe, so ``nvidia-smi`` shows it
``SYS`` to every NIC of its tray (GB200 tray output in sgl-project/sglang#11208); the PCIe-side
classes here say the same.

How ``cpu`` nodes model root complexes is explained in ``templates.py``. :func:`classify` looks
at the device pair the way ``nvidia-smi`` does (NVLink first for GPU pairs, else the PCIe/CPU
path that never forwards through an endpoint); :func:`classify_path` classifies a path that
routing actually chose; :func:`classify_grouped` classifies many routed paths that share
their structure (routing calls it once per routing call, with one key per structural class).
"""
from __future__ import annotations

from collections import deque

import numpy as np

from designer.engine.catalog import TECHS
from designer.engine.errors import InvalidTopology, Problem
from designer.engine.model.topology import Topology

__all__ = ["CLASSES", "LEGEND", "classify", "classify_path", "classify_grouped", "topo_matrix", "nvlink_count",
           "node_domains", "DOMAIN_KIND"]

DOMAIN_KIND = "nvlink_domain"

CLASSES = ("X", "NV#", "NVL", "PIX", "PXB", "PHB", "NODE", "SYS", "PXN", "NET")

LEGEND = [
    ("X", "Self"),
    ("SYS", "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
            "(e.g., QPI/UPI, xGMI)"),
    ("NODE", "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
             "within a NUMA node"),
    ("PHB", "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)"),
    ("PXB", "Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)"),
    ("PIX", "Connection traversing at most a single PCIe bridge"),
    ("NV#", "Connection traversing a bonded set of # NVLinks"),
]

_NVLINK_KINDS = frozenset({"gpu", "nvswitch"})
_PCIE_TRANSIT = frozenset({"pcie_switch", "cpu"})


def _index(topo: Topology, node) -> int:
    if isinstance(node, str):
        try:
            return topo.node_index[node]
        except KeyError:
            raise InvalidTopology(f'unknown node "{node}"', [Problem("node", f'unknown node "{node}"')]) from None
    node = int(node)
    if not 0 <= node < topo.num_nodes:
        raise InvalidTopology(f"node index {node} out of range", [Problem("node", f"index {node} out of range")])
    return node


def _is_nvlink_hop(kinds: list, u: int, v: int) -> bool:
    # GPUs only join each other or NVSwitches through NVLink, so node kinds decide it (no link
    # lookup, which would be slow on a spine with thousands of neighbours).
    ku, kv = kinds[u], kinds[v]
    return ku in _NVLINK_KINDS and kv in _NVLINK_KINDS and (ku == "gpu" or kv == "gpu" or ku == kv)


def classify_path(topo: Topology, path: list[int]) -> str:
    """Class of a routed path given as node indices (or ids).

    Parameters
    ----------
    topo : Topology
    path : sequence of int or str
        Nodes from source to destination.

    Returns
    -------
    str
        ``X`` (one node), ``PXN`` (relays through an intermediate GPU), ``NET`` (crosses a fabric
        switch or joins two hosts), ``NVL`` (NVLink only), else ``PIX``/``PXB``/``PHB``/``NODE``/
        ``SYS`` by the PCIe switches and ``cpu`` nodes it crosses.
    """
    nodes = [n if isinstance(n, int) else _index(topo, n) for n in path]
    if len(nodes) <= 1:
        return "X"
    kinds = topo.node_kind
    if any(kinds[n] == "gpu" for n in nodes[1:-1]):
        return "PXN"
    hosts = topo.node_host
    nvlink_only = all(_is_nvlink_hop(kinds, u, v) for u, v in zip(nodes, nodes[1:]))
    if nvlink_only and _same_domain(topo, nodes[0], nodes[-1]):
        return "NVL"   # across trays of one NVLink domain (GB200 NVL72): NVLink, not the network
    if hosts[nodes[0]] is None or hosts[nodes[0]] != hosts[nodes[-1]] or any(
            kinds[n] == "switch" for n in nodes):
        return "NET"
    if all(_is_nvlink_hop(kinds, u, v) for u, v in zip(nodes, nodes[1:])):
        return "NVL"
    return _pcie_class(topo, nodes)


def classify_grouped(topo: Topology, keys: np.ndarray, path_of) -> tuple[np.ndarray, list[str]]:
    """Classes of many paths grouped by a structural key: :func:`classify_path` once per key.

    Parameters
    ----------
    topo : Topology
    keys : ndarray of int64
        Per path: a key such that paths with equal keys have the same class (routing uses the
        intra-host segments a flow's path combines, not its fabric part).
    path_of : callable
        ``path_of(i)``: the nodes (indices) of path ``i``, called for the first path of each key.

    Returns
    -------
    codes : ndarray of int16
        Per path: index of its class in ``names``.
    names : list of str
        The classes met, in order of first appearance among the keys (sorted).
    """
    _, first_index, inverse = np.unique(keys, return_index=True, return_inverse=True)
    names: dict[str, int] = {}
    codes = np.empty(len(first_index), dtype=np.int16)
    for k, i in enumerate(first_index.tolist()):
        codes[k] = names.setdefault(classify_path(topo, path_of(i)), len(names))
    return codes[inverse.ravel()], list(names)


def _pcie_class(topo: Topology, nodes: list[int]) -> str:
    # Only the elements a path crosses count, not its endpoints (a PCIe switch talking to a
    # NIC below it is PIX, not PXB).
    kinds, attrs = topo.node_kind, topo.node_attrs
    nodes = nodes[1:-1]
    cpus = [n for n in nodes if kinds[n] == "cpu"]
    if cpus:
        sockets = {attrs[n].get("socket", topo.node_ids[n]) for n in cpus}
        if len(sockets) > 1:
            return "SYS"
        return "NODE" if len(cpus) > 1 else "PHB"
    switches = sum(1 for n in nodes if kinds[n] == "pcie_switch")
    return "PXB" if switches > 1 else "PIX"


def nvlink_count(topo: Topology, a, b) -> int:
    """Bonded NVLinks between GPUs ``a`` and ``b`` (0 when none).

    Direct GPU⇄GPU links count with their link count; through NVSwitches, the count is the number
    of links from each GPU into the switches that reach the other one, the smaller of the two
    (12 on DGX A100: 2 links to each of 6 NVSwitches).
    """
    a, b = _index(topo, a), _index(topo, b)
    direct = 0
    for peer, link in topo.adjacency[a]:
        if peer == b:
            direct += _link_count(topo, link)
    plane_a = _switch_plane(topo, a)
    via_a = sum(c for sw, c in _switch_links(topo, a).items() if sw in _switch_plane(topo, b))
    via_b = sum(c for sw, c in _switch_links(topo, b).items() if sw in plane_a)
    return direct + min(via_a, via_b)


def _link_count(topo: Topology, link: int) -> int:
    tech = TECHS.get(topo.link_tech[link] or "")
    return tech.width if tech is not None and tech.family == "nvlink" else 1


def _switch_links(topo: Topology, gpu: int) -> dict[int, int]:
    counts: dict[int, int] = {}
    for peer, link in topo.adjacency[gpu]:
        if topo.node_kind[peer] == "nvswitch":
            counts[peer] = counts.get(peer, 0) + _link_count(topo, link)
    return counts


def _switch_plane(topo: Topology, gpu: int) -> set[int]:
    """NVSwitches reachable from ``gpu`` through NVSwitch⇄NVSwitch links."""
    plane = set(_switch_links(topo, gpu))
    queue = deque(plane)
    while queue:
        sw = queue.popleft()
        for peer, _ in topo.adjacency[sw]:
            if topo.node_kind[peer] == "nvswitch" and peer not in plane:
                plane.add(peer)
                queue.append(peer)
    return plane


def _pcie_path(topo: Topology, a: int, b: int) -> list[int] | None:
    """Shortest path from a to b inside one host forwarding only through PCIe switches and CPUs."""
    host = topo.node_host[a]
    parent = {a: None}
    queue = deque([a])
    while queue:
        u = queue.popleft()
        for v, _ in topo.adjacency[u]:
            if v in parent or topo.node_host[v] != host:
                continue
            parent[v] = u
            if v == b:
                path = [v]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1]
            if topo.node_kind[v] in _PCIE_TRANSIT:
                queue.append(v)
    return None


def classify(topo: Topology, a, b) -> str:
    """Class of the connection between two devices, as ``nvidia-smi topo -m`` prints it.

    Parameters
    ----------
    topo : Topology
    a, b : int or str
        Node indices or ids.

    Returns
    -------
    str
        ``X``, ``NV#`` (GPU pairs joined by NVLink), ``PIX``, ``PXB``, ``PHB``, ``NODE``, ``SYS``,
        ``NET`` (different hosts or a fabric node), or ``"-"`` when no PCIe path joins them.
    """
    a, b = _index(topo, a), _index(topo, b)
    if a == b:
        return "X"
    host = topo.node_host[a]
    gpus = topo.node_kind[a] == "gpu" and topo.node_kind[b] == "gpu"
    if gpus and _same_domain(topo, a, b):
        count = nvlink_count(topo, a, b)
        if count:
            return f"NV{count}"
    if host is None or host != topo.node_host[b]:
        return "NET"
    if gpus:
        count = nvlink_count(topo, a, b)
        if count:
            return f"NV{count}"
    path = _pcie_path(topo, a, b)
    if path is None:
        return "-"
    return "SYS" if _through_c2c(topo, path) else _pcie_class(topo, path)


def _through_c2c(topo: Topology, path: list[int]) -> bool:
    """Whether a PCIe-side path enters or leaves through an NVLink-C2C link (a Grace-attached
    GPU: ``nvidia-smi`` shows it SYS to the tray's NICs, sgl-project/sglang#11208)."""
    for u, v in zip(path, path[1:]):
        for peer, link in topo.adjacency[u]:
            if peer == v and (topo.link_tech[link] or "") == "nvlink-c2c":
                return True
    return False


def _c2c_attached(topo: Topology, gpu: int) -> bool:
    return any((topo.link_tech[link] or "") == "nvlink-c2c" and topo.node_kind[peer] == "cpu"
               for peer, link in topo.adjacency[gpu])


def node_domains(topo: Topology) -> tuple[list[str], np.ndarray]:
    """The ``nvlink_domain`` groups of ``topo`` and, per node, the index of the one holding it
    (-1 outside every domain; a domain nested in another one wins). Cached on the topology."""
    cached = topo.__dict__.get("_nvlink_domains")
    if cached is None:
        ids = [gid for gid, g in topo.groups.items() if g.get("kind") == DOMAIN_KIND]
        index = np.full(topo.num_nodes, -1, dtype=np.int64)
        for d in sorted(range(len(ids)), key=lambda d: _depth(topo, ids[d])):
            index[topo.in_group_mask(ids[d])] = d
        cached = topo.__dict__["_nvlink_domains"] = (ids, index)
    return cached


def _depth(topo: Topology, group: str) -> int:
    depth, seen = 0, set()
    while group is not None and group not in seen:
        seen.add(group)
        group = topo.groups.get(group, {}).get("parent")
        depth += 1
    return depth


def _same_domain(topo: Topology, a: int, b: int) -> bool:
    ids, domain = node_domains(topo)
    if not ids:
        return False
    return bool(domain[a] >= 0 and domain[a] == domain[b])


def topo_matrix(topo: Topology, host: str) -> dict:
    """``nvidia-smi topo -m`` of one host, or of a whole NVLink domain: GPUs × (GPUs + NICs).

    ``host`` may name an ``nvlink_domain`` group (a GB200 NVL72 rack): its GPUs in domain order
    (``attrs.domain_index``) against its GPUs and NICs, GPUs of other trays ``NV#``.

    Returns
    -------
    dict
        ``labels`` (columns: ``GPU0``…, ``NIC0``…), ``rows`` (the GPU labels), ``matrix`` (one
        list of class strings per row), ``ids`` (label -> node id), ``numa`` (socket per row, or
        None), ``c2c`` (labels of the GPUs attached to their CPU by NVLink-C2C: on a Grace tray
        these are SYS to every NIC, their own Grace's included, as ``nvidia-smi`` prints it) and
        ``legend`` (class -> meaning, plus NIC label -> node id).
    """
    kind = topo.groups.get(host, {}).get("kind")
    if kind not in ("host", DOMAIN_KIND):
        raise InvalidTopology(f'no host "{host}"', [Problem("host", f'no host group "{host}"')])
    members = topo.nodes_of_host(host) if kind == "host" else np.flatnonzero(topo.in_group_mask(host)).tolist()
    order = "index" if kind == "host" else "domain_index"
    gpus = sorted((n for n in members if topo.node_kind[n] == "gpu"),
                  key=lambda n: (topo.node_attrs[n].get(order, topo.node_attrs[n].get("index", n)), n))
    nics = [n for n in members if topo.node_kind[n] == "nic"]
    labels = [f"GPU{i}" for i in range(len(gpus))] + [f"NIC{i}" for i in range(len(nics))]
    columns = gpus + nics
    matrix = [[classify(topo, g, c) for c in columns] for g in gpus]
    return {"host": host, "labels": labels, "rows": labels[:len(gpus)], "matrix": matrix,
            "ids": {lab: topo.node_ids[n] for lab, n in zip(labels, columns)},
            "numa": [topo.node_attrs[g].get("socket") for g in gpus],
            "c2c": [lab for lab, g in zip(labels, gpus) if _c2c_attached(topo, g)],
            "legend": dict(LEGEND) | {f"NIC{i}": topo.node_ids[n] for i, n in enumerate(nics)}}

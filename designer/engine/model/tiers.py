"""Tiers: which layer of the unified network a resource belongs to (NVLink, PCIe, root complex,
inter-socket, memory, NIC–leaf, leaf–spine, spine–core, fabric, storage).

Results group utilization and bottlenecks by tier, failures select links by tier, and sweeps
enumerate link classes by tier; all of them read this one definition.
"""
from __future__ import annotations

from itertools import repeat

import numpy as np

from designer.engine.model.topology import Topology, value_codes

__all__ = ["TIERS", "resource_tier", "resource_tiers"]

TIERS = ("nvlink", "pcie", "root-complex", "inter-socket", "memory", "nic-leaf", "leaf-spine",
         "spine-core", "fabric", "storage", "other")


def resource_tier(topo: Topology, r: int) -> str:
    """Tier of a resource: ``nvlink``, ``pcie``, ``root-complex``, ``inter-socket``, ``memory``,
    ``nic-leaf``, ``leaf-spine``, ``spine-core``, ``fabric``, ``storage`` or ``other``."""
    link = topo.resource_link(int(r))
    if link is None:
        kind = topo.node_kind[int(topo.resource_node[int(r) - 2 * topo.num_links])]
        return {"cpu": "root-complex", "memory": "memory", "pcie_switch": "pcie", "nvswitch": "nvlink",
                "storage": "storage", "nic": "nic-leaf", "switch": "fabric"}.get(kind, "other")
    return _link_tier(topo, link)


def _link_tier(topo: Topology, link: int) -> str:
    a, b = int(topo.link_a[link]), int(topo.link_b[link])
    kinds = {topo.node_kind[a], topo.node_kind[b]}
    tech = (topo.link_tech[link] or "").lower()
    if tech.startswith("nvl") or "nvswitch" in kinds or kinds == {"gpu"}:
        return "nvlink"
    if "memory" in kinds or tech.startswith("ddr"):
        return "memory"
    if kinds == {"cpu"}:
        both_sockets = {topo.node_attrs[a].get("socket"), topo.node_attrs[b].get("socket")}
        return "inter-socket" if len(both_sockets) > 1 or tech.startswith(("upi", "xgmi")) else "root-complex"
    if "storage" in kinds:
        return "storage"
    if "switch" in kinds:
        if kinds & {"nic", "gpu", "pcie_switch", "cpu", "nvme"}:
            return "nic-leaf"
        roles = {topo.node_role[a], topo.node_role[b]}
        if roles <= {"leaf", "tor", "spine"} and "spine" in roles and roles & {"leaf", "tor"}:
            return "leaf-spine"
        if "core" in roles:
            return "spine-core"
        return "fabric"
    if kinds & {"pcie_switch", "cpu", "nic", "nvme", "gpu"}:
        return "pcie"
    return "other"


def resource_tiers(topo: Topology) -> list[str]:
    """:func:`resource_tier` of every resource (cached on the topology)."""
    cached = topo.__dict__.get("_resource_tiers")
    if cached is None:
        per_dir = np.repeat(_link_tier_array(topo), 2).tolist()
        nodes = [resource_tier(topo, 2 * topo.num_links + k) for k in range(len(topo.resource_node))]
        cached = topo.__dict__["_resource_tiers"] = per_dir + nodes
    return cached


def _link_tiers(topo: Topology) -> list[str]:
    """:func:`_link_tier` of every link (see :func:`_link_tier_array`)."""
    return _link_tier_array(topo).tolist()


def _link_tier_array(topo: Topology) -> np.ndarray:
    """:func:`_link_tier` of every link (an object array), computed once per distinct (end
    kinds, tech, end roles): all it reads, except for a CPU–CPU link (its sockets:
    :func:`_cpu_link_tiers`).

    Why by codes: 191,488 links of a 16,384-GPU cluster have a few dozen such keys; a tuple key
    per link in a Python loop (:func:`_link_tiers_itemwise`) costs a dict lookup per link, integer
    codes of the columns (kinds and techs kept from the load, shared with the routing context) and
    one ``np.unique`` do it in a few array passes. Roles that are not hashable take that loop,
    which raises as it always did."""
    try:
        roles, role_code = value_codes(topo, "node_role")
    except TypeError:
        return np.array(_link_tiers_itemwise(topo), dtype=object)
    kinds, kind_code = value_codes(topo, "node_kind")
    techs, tech_code = value_codes(topo, "link_tech")
    a, b = topo.link_a, topo.link_b
    ka, kb = kind_code[a], kind_code[b]
    n_roles = len(roles)   # the key below stays far from int64's end: kinds and techs are a few dozen
    key = (((ka * len(kinds) + kb) * len(techs) + tech_code) * n_roles + role_code[a]) * n_roles + role_code[b]
    cpu = kinds.index("cpu") if "cpu" in kinds else -1
    cpu_cpu = (ka == cpu) & (kb == cpu)
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    tier = np.array([_link_tier(topo, int(l)) if not cpu_cpu[l] else "" for l in first.tolist()], dtype=object)
    out = tier[inverse.reshape(-1)]
    links = np.flatnonzero(cpu_cpu)
    if len(links):
        out[links] = _cpu_link_tiers(topo, links)
    return out


def _cpu_link_tiers(topo: Topology, links: np.ndarray) -> np.ndarray:
    """:func:`_link_tier` of CPU–CPU links, once per distinct (tech, socket of a, socket of b):
    all it reads of such a link (18,432 at 16,384 GPUs, a handful of keys). An unhashable socket
    takes the memo of :func:`_cpu_link_tier`, which raises TypeError as :func:`_link_tier` does."""
    a, b = topo.link_a[links], topo.link_b[links]
    ends = np.unique(np.concatenate([a, b]))
    sockets = list(map(dict.get, map(topo.node_attrs.__getitem__, ends.tolist()), repeat("socket")))
    try:
        distinct = dict.fromkeys(sockets)
    except TypeError:
        memo: dict[tuple, str] = {}
        return np.array([_cpu_link_tier(topo, l, (topo.link_tech[l], topo.node_attrs[x].get("socket"),
                                                  topo.node_attrs[y].get("socket")), memo)
                         for l, x, y in zip(links.tolist(), a.tolist(), b.tolist())], dtype=object)
    index = dict(zip(distinct, range(len(distinct))))
    socket_code = np.fromiter(map(index.__getitem__, sockets), dtype=np.int64, count=len(sockets))
    techs, tech_code = value_codes(topo, "link_tech")
    sa, sb = socket_code[np.searchsorted(ends, a)], socket_code[np.searchsorted(ends, b)]
    key = (tech_code[links] * len(distinct) + sa) * len(distinct) + sb
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    tier = np.array([_link_tier(topo, l) for l in links[first].tolist()], dtype=object)
    return tier[inverse.reshape(-1)]


def _link_tiers_itemwise(topo: Topology) -> list[str]:
    """:func:`_link_tiers` link by link, memoized on a tuple key (the fallback)."""
    kinds, roles, techs, attrs = topo.node_kind, topo.node_role, topo.link_tech, topo.node_attrs
    memo: dict[tuple, str] = {}
    out = []
    for link, (a, b) in enumerate(zip(topo.link_a.tolist(), topo.link_b.tolist())):
        if kinds[a] == "cpu" and kinds[b] == "cpu":
            sockets = attrs[a].get("socket"), attrs[b].get("socket")
            out.append(_cpu_link_tier(topo, link, (techs[link], *sockets), memo))
            continue
        key = (kinds[a], kinds[b], techs[link], roles[a], roles[b])
        tier = memo.get(key)
        if tier is None:
            tier = memo[key] = _link_tier(topo, link)
        out.append(tier)
    return out


def _cpu_link_tier(topo: Topology, link: int, key: tuple, memo: dict) -> str:
    """:func:`_link_tier` of a CPU–CPU link, memoized on ``key`` (tech, socket of a, socket of
    b: all it reads of such a link); its keys are 3-tuples, the others' 5-tuples. An unhashable
    socket raises TypeError here as it does in :func:`_link_tier` (a set of the two)."""
    tier = memo.get(key)
    if tier is None:
        tier = memo[key] = _link_tier(topo, link)
    return tier

"""Tiers: which layer of the unified network a resource belongs to (NVLink, PCIe, root complex,
inter-socket, memory, NIC–leaf, leaf–spine, spine–core, fabric, storage).

Results group utilization and bottlenecks by tier, failures select links by tier, and sweeps
enumerate link classes by tier; all of them read this one definition.
"""
from __future__ import annotations

from designer.engine.topology import Topology

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
        links = _link_tiers(topo)
        per_dir = [t for t in links for _ in (0, 1)]
        nodes = [resource_tier(topo, 2 * topo.num_links + k) for k in range(len(topo.resource_node))]
        cached = topo.__dict__["_resource_tiers"] = per_dir + nodes
    return cached


def _link_tiers(topo: Topology) -> list[str]:
    """:func:`_link_tier` of every link, computed once per distinct (end kinds, tech, end roles):
    that is all it reads, except the sockets of a CPU–CPU link, memoized on (tech, both sockets).
    191,488 links of a 16,384-GPU cluster have a few dozen such keys (and 2,048 UPI links one:
    asked link by link they were 27 ms of ~0.12 s)."""
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

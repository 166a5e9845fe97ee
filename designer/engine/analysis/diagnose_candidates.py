"""The faults a diagnosis considers, enumerated from the design, and their symmetry classes
(docs/ENGINE.md, "Diagnosis").

Every candidate is a *member*: one concrete fault in the what-if vocabulary — scenario failure
entries (:mod:`designer.engine.traffic.failures`) and, for the faults that are settings rather
than broken parts, a routing change (``gdr_off`` hosts, staged through host memory by
:mod:`designer.engine.traffic.collectives.staging`; the NIC policy for ``pxn_off``). Members with
the same kind, factor and position inside their host (``nic2``, ``gpu3-pcie3``) or on their rail
form a *class*: in a symmetric design every member of a class gives the same curve on a run
that contains it, so a diagnosis scores a class by one representative per run and tells members
apart by which runs contain them (:func:`contains`; :mod:`.diagnose_search`).
Switch-to-switch links are not pooled: ECMP hashing makes each one carry different flows.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from designer.engine.analysis.simulate import resource_tiers
from designer.engine.model.topology import Topology

__all__ = ["KINDS", "DEGRADE_FACTORS", "Member", "enumerate_members", "classes_of", "contains"]

#: Fault kinds, in the order ties are broken (the commoner field failure first).
KINDS = ("nic_degraded", "nic_down", "pcie_degraded", "nvlink_degraded", "gpu_nvlink_down",
         "fabric_link_down", "fabric_link_degraded", "gdr_off", "pxn_off")
#: Rates a degraded part is tried at: a NIC port at half or a quarter of its speed (400G
#: negotiated at 200G/100G), a PCIe link trained at half or a quarter of its width (x16 → x8/x4,
#: or one or two generations lower), a fabric link likewise; NVLinks with half of a GPU's links down.
DEGRADE_FACTORS = {"nic_degraded": (0.5, 0.25), "pcie_degraded": (0.5, 0.25), "nvlink_degraded": (0.5,),
                   "fabric_link_degraded": (0.5, 0.25)}
_FABRIC_TIERS = ("nic-leaf", "leaf-spine", "spine-core")


@dataclass(frozen=True)
class Member:
    """One concrete candidate fault.

    Attributes
    ----------
    kind : str
        One of :data:`KINDS`.
    target : str
        The node, link or host id it names.
    label : str
        ``h3/nic2 at 50 %``.
    key : tuple
        Its class: kind, factor and position (members of one key are interchangeable).
    failures : tuple of dict
        Scenario failure entries (docs/FORMATS.md, Scenario).
    routing : tuple of (str, object)
        Routing changes: ``("gdr_off", host)``, ``("nic_policy", name)``.
    hosts : frozenset of str or None
        Hosts whose runs it can affect (None: every run).
    """

    kind: str
    target: str
    label: str
    key: tuple
    failures: tuple = ()
    routing: tuple = ()
    hosts: frozenset | None = field(default=None)


def _pct(factor: float) -> str:
    return f"{factor * 100:g} %"


def _local(topo: Topology, node_or_link_id: str, host: str | None) -> str:
    """The id inside its host (``h3/nic2`` → ``nic2``), with the host's template: the position."""
    prefix = f"{host}/"
    local = node_or_link_id[len(prefix):] if host and node_or_link_id.startswith(prefix) else node_or_link_id
    template = topo.groups.get(host, {}).get("template") if host else None
    return f"{template}:{local}" if template else local


def _compute_nics(topo: Topology) -> list[int]:
    """NICs on the collective's path: compute NICs with a link out of their host."""
    out = []
    for n in topo.nodes_of_kind("nic"):
        if topo.node_attrs[n].get("role", "compute") != "compute":
            continue
        if any(topo.node_host[v] != topo.node_host[n] for v, _ in topo.adjacency[n]):
            out.append(n)
    return out


def _nic_members(topo: Topology) -> list[Member]:
    out = []
    for n in _compute_nics(topo):
        nid, host = topo.node_ids[n], topo.node_host[n]
        pos, hosts = _local(topo, nid, host), frozenset([host]) if host else None
        for f in DEGRADE_FACTORS["nic_degraded"]:
            out.append(Member("nic_degraded", nid, f"{nid} at {_pct(f)}", ("nic_degraded", f, pos),
                              ({"target": nid, "mode": "degrade", "factor": f},), (), hosts))
        out.append(Member("nic_down", nid, f"{nid} down", ("nic_down", None, pos),
                          ({"target": nid, "mode": "down"},), (), hosts))
    return out


def _pcie_members(topo: Topology) -> list[Member]:
    """The PCIe link of each GPU and compute NIC (the one to its switch or root port)."""
    tiers = resource_tiers(topo)
    ends = set(topo.nodes_of_kind("gpu")) | set(_compute_nics(topo))
    out = []
    for n in sorted(ends):
        for v, link in topo.adjacency[n]:
            if tiers[2 * link] != "pcie" or topo.node_host[v] != topo.node_host[n]:
                continue
            lid, host, nid = topo.link_ids[link], topo.node_host[n], topo.node_ids[n]
            for f in DEGRADE_FACTORS["pcie_degraded"]:
                out.append(Member("pcie_degraded", lid, f"{nid} PCIe link ({lid}) at {_pct(f)}",
                                  ("pcie_degraded", f, _local(topo, lid, host)),
                                  ({"target": lid, "mode": "degrade", "factor": f},), (),
                                  frozenset([host]) if host else None))
    return out


def _nvlink_members(topo: Topology) -> list[Member]:
    tiers = resource_tiers(topo)
    out = []
    for g in topo.nodes_of_kind("gpu"):
        if not any(tiers[2 * link] == "nvlink" for _, link in topo.adjacency[g]):
            continue
        gid, host = topo.node_ids[g], topo.node_host[g]
        target = {"kind": "link", "node": gid, "tier": "nvlink"}
        pos, hosts = _local(topo, gid, host), frozenset([host]) if host else None
        for f in DEGRADE_FACTORS["nvlink_degraded"]:
            out.append(Member("nvlink_degraded", gid, f"{gid} NVLinks at {_pct(f)}", ("nvlink_degraded", f, pos),
                              ({"target": target, "mode": "degrade", "factor": f},), (), hosts))
        out.append(Member("gpu_nvlink_down", gid, f"{gid} NVLinks down", ("gpu_nvlink_down", None, pos),
                          ({"target": target, "mode": "down"},), (), hosts))
    return out


def _hosts_below(topo: Topology, switch: int) -> frozenset:
    return frozenset(topo.node_host[v] for v, _ in topo.adjacency[switch] if topo.node_host[v])


def _fabric_members(topo: Topology) -> list[Member]:
    tiers = resource_tiers(topo)
    out = []
    for link in range(topo.num_links):
        tier = tiers[2 * link]
        if tier not in _FABRIC_TIERS:
            continue
        lid = topo.link_ids[link]
        a, b = int(topo.link_a[link]), int(topo.link_b[link])
        host = topo.node_host[a] or topo.node_host[b]
        if tier == "nic-leaf":
            # A host's NIC cable: interchangeable with the same NIC's cable on every like host.
            nic = a if topo.node_host[a] else b
            pos, hosts = ("nic-leaf", _local(topo, topo.node_ids[nic], host)), frozenset([host])
        else:
            pos, hosts = (tier, lid), (_hosts_below(topo, a) | _hosts_below(topo, b)) or None
        for f in DEGRADE_FACTORS["fabric_link_degraded"]:
            out.append(Member("fabric_link_degraded", lid, f"{lid} at {_pct(f)}", ("fabric_link_degraded", f, pos),
                              ({"target": lid, "mode": "degrade", "factor": f},), (), hosts))
        out.append(Member("fabric_link_down", lid, f"{lid} down", ("fabric_link_down", None, pos),
                          ({"target": lid, "mode": "down"},), (), hosts))
    return out


def _setting_members(topo: Topology, nic_policy: str) -> list[Member]:
    """GPUDirect RDMA off per host (a host needs NICs out of it); PXN off when PXN is expected."""
    with_nics = {topo.node_host[n] for n in _compute_nics(topo)}
    out = [Member("gdr_off", h, f"{h} without GPUDirect RDMA (network data staged in host memory)",
                  ("gdr_off", None, topo.groups[h].get("template")), (), (("gdr_off", h),), frozenset([h]))
           for h in topo.hosts() if h in with_nics]
    if nic_policy == "pxn":
        out.append(Member("pxn_off", "pxn", "PXN off (NCCL_PXN_DISABLE=1: each GPU sends by its own NIC)",
                          ("pxn_off", None, None), (), (("nic_policy", "own_nic"),), None))
    return out


def enumerate_members(topo: Topology, *, nic_policy: str = "affinity") -> list[Member]:
    """Every candidate fault of the design, kinds in :data:`KINDS` order.

    Parameters
    ----------
    topo : Topology
    nic_policy : str
        The NIC policy the runs were expected to use (``pxn_off`` is a candidate under ``pxn``).

    Returns
    -------
    list of Member
    """
    members = (_nic_members(topo) + _pcie_members(topo) + _nvlink_members(topo) + _fabric_members(topo)
               + _setting_members(topo, nic_policy))
    return sorted(members, key=lambda m: KINDS.index(m.kind))


def classes_of(members: list[Member]) -> dict[tuple, list[Member]]:
    """Members grouped by class key, in first-seen order."""
    out: dict[tuple, list[Member]] = {}
    for m in members:
        out.setdefault(m.key, []).append(m)
    return out


def contains(member: Member, run_hosts: frozenset | None) -> bool:
    """Whether a run over ``run_hosts`` (None: the whole design) can see ``member``."""
    return run_hosts is None or member.hosts is None or bool(member.hosts & run_hosts)

"""Storage servers of a generated cluster: a storage fabric of their own, or leaves on the compute spines.

Which one (the rule, and why)
-----------------------------
- **Own storage fabric** when the host template has storage-role NICs (``attrs.role ==
  "storage"``: DGX A100/H100/H200/B200, GB200 trays, …) and the switch model has a port mode at
  their rate. That is how NVIDIA's reference designs build it: a DGX SuperPOD has a compute
  fabric and a separate storage fabric, and a host reaches storage through its storage NICs
  (DGX SuperPOD H100 reference architecture, "Network Fabrics",
  https://docs.nvidia.com/dgx-superpod/reference-architecture-scalable-infrastructure-h100/latest/network-fabrics.html).
  The compute fabric is then sized by the compute NICs alone: one storage server never changes
  its spine count. Traffic to a storage box already leaves a host through its storage NICs when
  they are wired (``routing/nic_policies.py``, ``routing/nic_tables.py``).
- **Shared** (the storage leaves take ports on the compute spines, :func:`shared_storage_leaves`)
  when the template has no storage NIC, or the switch has no port mode at their rate. The
  spines may then grow to hold the storage uplinks (``clos.py``: equal bundles from every
  compute leaf, because the routing splits a leaf's traffic evenly over its spines); the
  fabric's notes say so.

The own storage fabric, sized by the storage bandwidth
------------------------------------------------------
- Endpoints: one port of each storage NIC of every host (a dual-port card's other port is the
  in-band management network's: DGX BasePOD deployment guide, "Networking",
  https://docs.nvidia.com/dgx-basepod/deployment-guide-dgx-basepod/latest/network-overview.html),
  ``H`` host ports in all, and one port per storage server, ``S`` in all, at the storage NIC
  rate.
- ``H + S`` ports fit one switch: a single storage switch ``sleaf0`` holds them all, no spine.
- Otherwise host storage ports fill leaves ``snleaf{j}`` in host order and the storage servers
  fill leaves ``sleaf{j}``. All traffic on this fabric is host ⇄ storage server, so a host leaf
  with ``h`` host ports can never send or receive more than ``min(h, S)`` ports' worth: that is
  its uplink count (1:1 against the storage bandwidth, not against its host ports; the
  requested oversubscription is the compute fabric's). A server leaf with ``s`` servers takes
  ``min(s, H)`` uplinks. A leaf holds as many endpoints ``e`` as fit with their uplinks:
  ``e + min(e, other side) ≤ radix``.
- Above the leaves, spines ``sspine{k}`` chosen and wired by the compute fabric's rules
  (``clos.default_spines``: the fewest, in equal whole-port bundles); more leaves than a spine
  has ports: pods and super-spines ``score{k}`` (``clos.wire_three_tier``), the pod index kept
  as ``attrs.storage_pod`` so the compute fabric's pod groups stay as they were.
- Every storage-fabric switch carries ``attrs.storage``: BOMs count them in their tier but
  leave them out of the compute fabric's oversubscription, injection and bisection.
- A spine count passed by the user applies to the compute fabric; the storage fabric's follows
  from its ports.
"""
from __future__ import annotations

import math

from designer.engine.catalog import SWITCH_MODELS, SWITCH_PORT_TECH, TECHS
from designer.engine.errors import InvalidTopology, Problem
from designer.engine.model.clos import LeafPorts, SwitchSpec, wire_three_tier, wire_two_tier
from designer.engine.model.fabric_out import ClusterTally

__all__ = ["STORAGE_PER_LEAF", "storage_nic_locals", "storage_switch", "storage_design", "own_storage_fabric",
           "shared_storage_leaves", "storage_pods"]

# Shared design: storage servers per storage leaf (at most half the radix).
STORAGE_PER_LEAF = 32


def _fail(path: str, message: str):
    raise InvalidTopology(message, [Problem(path, message)])


def storage_nic_locals(spec: dict) -> list[tuple[str, float]]:
    """``(local id, port Gb/s)`` of the spec's storage-role NICs, in spec order."""
    return [(str(n["local"]), float((n.get("attrs") or {}).get("port_gbps", 0) or 0)) for n in spec["nodes"]
            if n.get("kind") == "nic" and (n.get("attrs") or {}).get("role") == "storage"]


def storage_switch(sw: SwitchSpec, nic_tech: str, rate_gbps: float) -> tuple[SwitchSpec, str] | None:
    """The compute fabric's switch model in its port mode at the storage NICs' rate, and the
    host-link tech; None when the model has no such mode (or is a generic fat-tree switch)."""
    if abs(rate_gbps - sw.port_gbps) < 1e-9:
        return sw, nic_tech
    model = SWITCH_MODELS.get(sw.model)
    family = TECHS[sw.tech].family
    tech = SWITCH_PORT_TECH.get((family, rate_gbps))
    mode = model.mode_for(rate_gbps) if model is not None else None
    if mode is None or tech is None:
        return None
    return SwitchSpec(sw.model, mode[0], rate_gbps, tech), tech


def storage_design(spec: dict, sw: SwitchSpec, nic_tech: str, storage: int):
    """Which storage design a build takes (module docstring): ``(switch, tech, NIC locals)`` of
    an own storage fabric, or ``(None, why)`` for the shared one (``why``: "" without storage)."""
    if not storage:
        return None, ""
    nics = storage_nic_locals(spec)
    if not nics:
        return None, (f"the {spec.get('name', 'custom')} template has no storage NIC, so the storage leaves "
                      f"take ports on the compute spines")
    rates = {gbps for _, gbps in nics}
    got = storage_switch(sw, nic_tech, nics[0][1]) if len(rates) == 1 else None
    if got is None:
        return None, (f"the storage NICs ({', '.join(f'{g:g}' for g in sorted(rates))} Gb/s) have no port mode "
                      f"on {sw.model}, so the storage leaves take ports on the compute spines")
    return (*got, [local for local, _ in nics]), ""


def _count(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _per_leaf(radix: int, other: int) -> int:
    """Most endpoints ``e`` a leaf holds with ``min(e, other)`` uplinks: ``e + min(e, other) ≤ radix``."""
    return max(radix - other, radix // 2)


def _add_storage_servers(out, storage: int, gbps: float, first: int = 0) -> list[str]:
    ids = [f"storage{i}" for i in range(first, first + storage)]
    for sid in ids:
        out.doc["nodes"].append({"id": sid, "kind": "storage", "attrs": {"port_gbps": gbps}})
    return ids


def _host_ports(out, hosts: int, locals_: list[str], leaves: list[str], per_leaf: int, tech: str) -> list[int]:
    """Port ``p`` (host ``p // n``, NIC ``p % n``) to leaf ``p // per_leaf``; ports per leaf."""
    n, total = len(locals_), hosts * len(locals_)
    down = [min(per_leaf, total - j * per_leaf) for j in range(len(leaves))]
    if isinstance(out, ClusterTally):  # a plan counts a leaf's ports at once
        for leaf, d in zip(leaves, down):
            out.host_ports_add(leaf, tech, d)
        return down
    for p in range(total):
        out.link(f"h{p // n}/{locals_[p % n]}", leaves[p // per_leaf], tech)
    return down


def own_storage_fabric(out, sw: SwitchSpec, tech: str, hosts: int, nic_locals: list[str], storage: int) -> dict:
    """The storage fabric of the module docstring: storage servers, their leaves, the hosts'
    storage-NIC leaves and the spines (and super-spines) above them.

    Parameters
    ----------
    out : ClusterDoc or ClusterTally
        Where the fabric is written (``fabric_out.py``).
    sw : SwitchSpec
        The switch at the storage NICs' rate (:func:`storage_switch`).
    tech : str
        Catalog tech of a host or server port.
    hosts : int
        Hosts of the cluster.
    nic_locals : list of str
        Local ids of a host's storage NICs (one port of each is wired).
    storage : int
        Storage servers (≥ 1).

    Returns
    -------
    dict
        ``{"kind": "own", "host_ports", "leaves", "spines", "cores"}`` (counts).

    Raises
    ------
    InvalidTopology
        (path ``storage``) when the storage fabric would need a fourth tier.
    """
    radix, host_total = sw.radix, hosts * len(nic_locals)
    servers = _add_storage_servers(out, storage, TECHS[tech].effective_gbps)
    attrs = {**sw.attrs("leaf"), "storage": True}
    if host_total + storage <= radix:
        leaf = out.switch("sleaf0", "leaf", **attrs)
        _host_ports(out, hosts, nic_locals, [leaf], radix, tech)
        for sid in servers:
            out.link(sid, leaf, tech)
        out.notes.append(f"storage fabric: one {sw.model} holds the {host_total} host storage-NIC ports and "
                         f"{storage} storage port{'s' if storage != 1 else ''}, so it has no spine")
        return {"kind": "own", "host_ports": host_total, "leaves": 1, "spines": 0, "cores": 0}
    per_host_leaf, per_server_leaf = _per_leaf(radix, storage), _per_leaf(radix, host_total)
    host_leaves = [out.switch(f"snleaf{j}", "leaf", **attrs) for j in range(math.ceil(host_total / per_host_leaf))]
    down = _host_ports(out, hosts, nic_locals, host_leaves, per_host_leaf, tech)
    leaves = [LeafPorts(leaf, d, uplinks=min(d, storage)) for leaf, d in zip(host_leaves, down)]
    for j in range(math.ceil(storage / per_server_leaf)):
        leaf = LeafPorts(out.switch(f"sleaf{j}", "leaf", **attrs), 0)
        for sid in servers[j * per_server_leaf:(j + 1) * per_server_leaf]:
            out.link(sid, leaf.id, tech)
            leaf.down += 1
        leaf.uplinks = min(leaf.down, host_total)
        leaves.append(leaf)
    got = _storage_upper_tiers(out, leaves, sw)
    out.notes.append(f"storage fabric of its own (the hosts' storage NICs, one port each): {host_total} host "
                     f"ports on {len(host_leaves)} leaves with at most {min(per_host_leaf, storage)} uplink"
                     f"{'s' if min(per_host_leaf, storage) != 1 else ''} each (the {storage} storage port"
                     f"{'s' if storage != 1 else ''} bound what a leaf can carry), {storage} storage port"
                     f"{'s' if storage != 1 else ''} on {_count(len(leaves) - len(host_leaves), 'leaf', 'leaves')}, "
                     f"{len(got['spines'])} storage spine{'s' if len(got['spines']) != 1 else ''}; the compute "
                     f"fabric is sized without them")
    return {"kind": "own", "host_ports": host_total, "leaves": len(leaves), "spines": len(got["spines"]),
            "cores": len(got["cores"])}


def _storage_upper_tiers(out, leaves: list[LeafPorts], sw: SwitchSpec) -> dict:
    """Spines above the storage fabric's leaves (two tiers when a spine has a port per leaf)."""
    extra = {"storage": True}
    if len(leaves) <= sw.radix:
        return {"spines": wire_two_tier(out, leaves, sw, spines=None, prefix="sspine", extra=extra), "cores": []}
    if len(leaves) > sw.radix * (sw.radix // 2):
        _fail("storage", f"the storage fabric needs {len(leaves)} leaves; three tiers of {sw.radix}-port "
                         f"{sw.model} hold at most {sw.radix * (sw.radix // 2)}")
    first = len(out.doc["nodes"])
    pods = [leaves[i:i + sw.radix // 2] for i in range(0, len(leaves), sw.radix // 2)]
    got = wire_three_tier(out, pods, sw, spines=None, names=("sspine", "score"), extra=extra)
    for node in out.doc["nodes"][first:]:  # not the compute fabric's pods (pods.group_pods)
        if "pod" in node["attrs"]:
            node["attrs"]["storage_pod"] = node["attrs"].pop("pod")
    return got


def shared_storage_leaves(out, sw: SwitchSpec, tech: str, storage: int, only_leaf: str | None) -> list[LeafPorts]:
    """Shared design: storage servers, one port each, on their own leaves (a one-leaf fabric: on
    that leaf), to be wired onto the compute spines (``clos.storage_bundles``)."""
    per_leaf = min(STORAGE_PER_LEAF, sw.radix // 2)
    if only_leaf is not None and out.ports_used.get(only_leaf, 0) + storage > sw.radix:
        _fail("storage", f"{only_leaf} has {out.ports_used.get(only_leaf, 0)} host ports; {storage} storage "
                         f"ports more exceed its {sw.radix} (pass spines=N for storage leaves)")
    leaves, gbps = [], TECHS[tech].effective_gbps
    for i in range(storage):
        sid = _add_storage_servers(out, 1, gbps, first=i)[0]
        if only_leaf is None and i % per_leaf == 0:
            leaves.append(LeafPorts(out.switch(f"sleaf{i // per_leaf}", "leaf", storage=True,
                                               **sw.attrs("leaf")), 0, 1.0, storage=True))
        out.link(sid, only_leaf or leaves[-1].id, tech)
        if only_leaf is None:
            leaves[-1].down += 1
    return leaves


def storage_pods(leaves: list[LeafPorts], radix: int) -> list[list[LeafPorts]]:
    """Shared design, three tiers: the storage leaves as pods of their own (radix / 2 each)."""
    return [leaves[i:i + radix // 2] for i in range(0, len(leaves), radix // 2)] if leaves else []

"""CollNet (Direct): all-reduce with in-network reduction (SHARP) in the fabric switches.

Only where the fabric declares in-network-reduction switches: every switch the participants'
compute NICs are wired to has ``attrs.sharp: true`` (:data:`designer.engine.catalog.SHARP_ATTR`).
Inside each host of m GPUs the data is reduce-scattered and, at the end, all-gathered GPU to GPU
(``S/m`` to every local peer, twice); GPU ``c`` of every host — the head of rail ``c`` — sends
its reduced shard ``S/heads`` up to the switches, which reduce it across hosts and send the
result back down: one shard out and one shard in per NIC, whatever the host count.

Flows end at GPUs (routing has no switch endpoints), so the in-switch reduction is represented
by the traffic it puts on the NIC ports: per rail, the heads form a ring of ``S/heads`` hops
(each NIC sends one shard and receives one shard, as with SHARP). On a rail-optimized fabric
the heads share their rail's leaf and these are exactly SHARP's NIC and leaf-port loads; where
a ring hop crosses spines SHARP would reduce at the leaf first and load the spine less.
"""
from __future__ import annotations

import numpy as np

from designer.engine.catalog import SHARP_ATTR
from designer.engine.traffic.collectives.common import Group, empty, nearest_nics

__all__ = ["flows", "sharp_switches", "supports"]


def sharp_switches(topo) -> list[int]:
    """Switch nodes that declare in-network reduction."""
    return [i for i, k in enumerate(topo.node_kind) if k == "switch" and topo.node_attrs[i].get(SHARP_ATTR) is True]


def _first_switches(topo, group: Group) -> set[int]:
    out = set()
    for block in group.blocks:
        for g in block.tolist():
            for nic in nearest_nics(topo, g):
                out |= {v for v, _ in topo.adjacency[nic] if topo.node_kind[v] == "switch"}
    return out


def supports(topo, group: Group) -> str | None:
    """All-reduce over two or more hosts whose NICs all reach SHARP-capable switches."""
    if group.kind != "allreduce":
        return f"collnet implements allreduce only here, not {group.kind}"
    if group.nodes < 2:
        return "collnet reduces across hosts; the participants are in one host"
    if not sharp_switches(topo):
        return f"collnet needs in-network-reduction switches (a switch with attrs.{SHARP_ATTR}: true); the fabric has none"
    plain = sorted(_first_switches(topo, group) - set(sharp_switches(topo)))
    if plain:
        return f"collnet needs SHARP on every switch the GPUs' NICs reach; {topo.node_ids[plain[0]]} has no attrs.{SHARP_ATTR}"
    return None


def flows(topo, group: Group):
    """Intra-host reduce-scatter/all-gather flows plus, per rail, the heads' shard exchange."""
    if group.n < 2 or not group.rails:
        return empty()
    parts = []
    for block in group.blocks:
        k = len(block)
        if k > 1:
            src, dst = np.repeat(block, k), np.tile(block, k)
            keep = src != dst
            parts.append((src[keep], dst[keep], np.full(int(keep.sum()), 2 * group.size / k)))
    shard = group.size / len(group.rails)
    for c in group.rails:
        heads = np.array([b[c % len(b)] for b in group.blocks], dtype=np.int64)
        parts.append((heads, np.roll(heads, -1), np.full(len(heads), shard)))
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))

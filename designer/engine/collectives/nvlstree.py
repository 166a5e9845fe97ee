"""NVLSTree: NVLS inside every host, a double binary tree between hosts (multi-host all-reduce).

Inside each host of m GPUs the NVSwitch plane reduce-scatters (every GPU then holds one reduced
S/m shard) and, at the end, multicasts the shards back (see :mod:`.nvls`): ``S·(m+1)/m`` up and
down per GPU. In between, the shards are all-reduced across hosts by one *head* GPU per rail whose NIC is up
in every host (NCCL's NVLS heads, one per NIC it finds): head ``c`` of every host all-reduces
``S/heads`` with its peers of the same local position over NIC ``c`` — rail-aligned — along the
two binary trees of :func:`.tree.node_trees`, half on each, up and down every edge.
"""
from __future__ import annotations

import numpy as np

from designer.engine.collectives.common import Group, empty
from designer.engine.collectives.nvls import plane_flows
from designer.engine.collectives.tree import edges_both_ways, node_trees

__all__ = ["flows", "supports"]


def supports(topo, group: Group) -> str | None:
    """All-reduce over two or more hosts, each with an NVSwitch gen3+ plane."""
    if group.kind != "allreduce":
        return f"nvlstree implements allreduce only, not {group.kind}"
    if group.nodes < 2:
        return "nvlstree needs two or more hosts (one host uses nvls)"
    return group.nvls_gap(topo)


def flows(topo, group: Group):
    """Plane flows of every host plus the per-rail inter-host trees."""
    if group.n < 2:
        return empty()
    parts = []
    for block in group.blocks:
        m = len(block)
        parts.append(plane_flows(topo, block, group.size * (m + 1) / m, group.size * (m + 1) / m))
    rails = group.rails
    for c in rails:
        heads = np.array([b[c % len(b)] for b in group.blocks], dtype=np.int64)
        for parent, child in node_trees(len(heads)):
            s, d = edges_both_ways(heads[child], heads[parent])
            parts.append((s, d, np.full(len(s), group.size / (2 * len(rails)))))
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))

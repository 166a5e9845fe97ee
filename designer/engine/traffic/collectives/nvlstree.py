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

from designer.engine.traffic.collectives.common import Group, block_key, empty, nvswitch_plane
from designer.engine.traffic.collectives.nvls import plane_flows
from designer.engine.traffic.collectives.tree import edges_both_ways, node_trees

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
    parts = _plane_flows_of_blocks(topo, group.blocks, group.size)
    rails = group.rails
    for c in rails:
        heads = np.array([b[c % len(b)] for b in group.blocks], dtype=np.int64)
        for parent, child in node_trees(len(heads)):
            s, d = edges_both_ways(heads[child], heads[parent])
            parts.append((s, d, np.full(len(s), group.size / (2 * len(rails)))))
    return (np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts]),
            np.concatenate([p[2] for p in parts]))


def _plane_flows_of_blocks(topo, blocks: list, size: float) -> list:
    """[:func:`.nvls.plane_flows` of every block (``S(m+1)/m`` up and down), concatenated in block
    order — each block's GPUs to its plane, then the plane to them — built in one pass].

    Why: one ``plane_flows`` per host (six small arrays each) is 2,048 calls when planning a
    16,384-GPU ring; only the plane look-up stays per host."""
    lens = np.array([len(b) for b in blocks], dtype=np.int64)
    if len(blocks) == 0 or not (lens > 0).all():   # never (a block holds a participant): as before
        return [plane_flows(topo, b, size * (len(b) + 1) / len(b), size * (len(b) + 1) / len(b)) for b in blocks]
    gpus = np.concatenate(blocks).astype(np.int64, copy=False)
    hubs = np.array([nvswitch_plane(topo, block_key(topo, int(b[0])))[0] for b in blocks], dtype=np.int64)
    volume = np.array([size * (m + 1) / m for m in lens.tolist()], dtype=np.float64)
    start = np.cumsum(lens) - lens                     # of each block among the GPUs
    owner = np.repeat(np.arange(len(blocks)), lens)
    at = np.arange(len(gpus)) + start[owner]           # a GPU's up flow: 2·start + j
    back = at + lens[owner]                            # its down flow: 2·start + m + j
    src, dst = np.empty(2 * len(gpus), dtype=np.int64), np.empty(2 * len(gpus), dtype=np.int64)
    src[at], dst[at] = gpus, hubs[owner]
    src[back], dst[back] = hubs[owner], gpus
    sizes = np.empty(2 * len(gpus))
    sizes[at] = sizes[back] = volume[owner]
    return [(src, dst, sizes)]

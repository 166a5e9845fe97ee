"""Tree: NCCL's all-reduce tree — a chain of GPUs inside each host and, across hosts, a double
binary tree per channel, rail-aligned.

Channel ``c`` (one per local GPU position whose NIC is up, like the ring's channels) chains each host's GPUs
starting at local GPU ``c`` (the host's head in that channel); the heads of the hosts form two
binary trees (the second over the host order shifted by one, so a host that is interior in one
is a leaf in the other: NCCL's double binary tree), and every tree edge joins head GPUs of the
same local position, so it crosses the fabric on one rail (NIC ``c`` to NIC ``c``). Each tree
carries half of the channel's data; every edge — chain or tree — carries it up (reduce) and down
(broadcast): ``S / (2·channels)`` per edge per direction per tree.

On a direct GPU mesh (AMD xGMI, no NVSwitch) the chain of channel ``c`` is the Hamiltonian path
of :func:`~.mesh.rail_paths` that starts at GPU ``c`` instead of the rotation, so the channels'
chains load every directed GPU⇄GPU link equally (each by two channels, a path and its reverse)
rather than all riding the links ``i ⇄ i+1``.
"""
from __future__ import annotations

import numpy as np

from designer.engine.traffic.collectives.common import Group, empty
from designer.engine.traffic.collectives.mesh import chain_paths

__all__ = ["edges_both_ways", "flows", "node_trees", "supports"]


def supports(topo, group: Group) -> str | None:
    """NCCL's tree implements all-reduce only."""
    return None if group.kind == "allreduce" else f"tree implements allreduce only, not {group.kind}"


def node_trees(count: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """(parent, child) rank pairs of NCCL's double binary tree over ``count`` ranks
    (NVIDIA/nccl ``src/graph/trees.cc``: ``ncclGetBtree``, ``ncclGetDtree``).

    The first tree is the bit tree rooted at 0: a rank's parent clears its lowest set bit and sets
    the next one up (1, 3 → 2; 2, 6 → 4), or only clears it when that is out of range. Its odd
    ranks are its leaves. The second tree mirrors it (rank r → count−1−r) when ``count`` is even,
    or shifts it by one rank when odd — so a rank that forwards in one tree is a leaf in the other
    (about), and no host carries two trees' interior traffic at once: the property that gives the
    double binary tree its full bandwidth."""
    if count < 2:
        return [(np.zeros(0, np.int64), np.zeros(0, np.int64))] * 2
    child = np.arange(1, count, dtype=np.int64)
    low = child & -child
    up = (child ^ low) | (low << 1)
    parent = np.where(up >= count, child ^ low, up)
    if count % 2 == 0:
        second = (count - 1 - parent, count - 1 - child)
    else:
        second = ((parent + 1) % count, (child + 1) % count)
    return [(parent, child), second]


def edges_both_ways(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Edges a–b as flows in both directions (up then down)."""
    return np.concatenate([a, b]), np.concatenate([b, a])


def _block_table(blocks) -> np.ndarray | None:
    """The blocks as rows of one array when they all have one size of two or more, else None."""
    sizes = {len(b) for b in blocks}
    return np.stack(blocks) if len(sizes) == 1 and sizes.pop() > 1 else None


def _chains_of_table(table: np.ndarray, c: int, srcs: list, dsts: list) -> np.ndarray:
    """Channel ``c``'s chain flows of every host at once (the same flows, in the same order, as
    :func:`_chains_of_blocks`: per host its chain edges up then down, twice); its heads."""
    chain = np.roll(table, -(c % table.shape[1]), axis=1)
    s = np.concatenate([chain[:, 1:], chain[:, :-1]], axis=1)
    d = np.concatenate([chain[:, :-1], chain[:, 1:]], axis=1)
    srcs.append(np.concatenate([s, s], axis=1).reshape(-1))   # the chain serves both trees
    dsts.append(np.concatenate([d, d], axis=1).reshape(-1))
    return np.ascontiguousarray(chain[:, 0])


def _chains_of_blocks(blocks, mesh, c: int, srcs: list, dsts: list) -> np.ndarray:
    """Channel ``c``'s chain flows host by host (a direct GPU mesh, or hosts of unequal size)."""
    heads = []
    for block in blocks:
        chain = block[mesh[c]] if mesh else np.roll(block, -(c % len(block)))
        heads.append(chain[0])
        if len(chain) > 1:
            s, d = edges_both_ways(chain[1:], chain[:-1])
            srcs += [s, s]            # the chain serves both trees
            dsts += [d, d]
    return np.array(heads, dtype=np.int64)


def flows(topo, group: Group):
    """Chain + double-binary-tree flows of every channel."""
    if group.n < 2:
        return empty()
    starts = group.rails or list(range(group.per_node))
    channels = group.channels or len(starts)
    mesh = chain_paths(topo, group.blocks)   # per-head chains over a direct GPU mesh, or None
    srcs, dsts = [], []
    table = _block_table(group.blocks) if not mesh else None
    for k in range(channels):
        c = starts[k % len(starts)]
        if table is not None:
            heads = _chains_of_table(table, c, srcs, dsts)
        else:
            heads = _chains_of_blocks(group.blocks, mesh, c, srcs, dsts)
        for parent, child in node_trees(len(heads)):
            s, d = edges_both_ways(heads[child], heads[parent])
            srcs.append(s)
            dsts.append(d)
    return np.concatenate(srcs), np.concatenate(dsts), group.size / (2 * channels)

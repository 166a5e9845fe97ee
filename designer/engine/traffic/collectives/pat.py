"""PAT (Parallel Aggregated Trees): NCCL's logarithmic all-gather / reduce-scatter for one GPU per
host (NCCL 2.23+, ``ncclPatEnable``: "PAT only supports 1 GPU per node").

Modelled as Bruck's algorithm: at step k every rank r exchanges with rank r + 2^k the
``min(2^k, n − 2^k)`` shards of S/n it has aggregated so far (reduce-scatter runs the same steps
backwards), so each rank moves ``(n−1)/n × S`` in ⌈log2 n⌉ steps — the ring's volume with
logarithmic latency. All steps are solved concurrently (steady state).
"""
from __future__ import annotations

import numpy as np

from designer.engine.traffic.collectives.common import Group, empty

__all__ = ["flows", "supports"]


def supports(topo, group: Group) -> str | None:
    """All-gather / reduce-scatter with exactly one participant per host."""
    if group.kind not in ("allgather", "reducescatter"):
        return f"pat implements allgather and reducescatter only, not {group.kind}"
    if group.per_node != 1 or max(len(b) for b in group.blocks) != 1:
        return "pat needs exactly one GPU per host (NCCL ncclPatEnable)"
    return None


def flows(topo, group: Group):
    """Distance-doubling exchanges (direction reversed for reduce-scatter: same links, same load)."""
    p = group.participants
    n = len(p)
    if n < 2:
        return empty()
    srcs, dsts, sizes = [], [], []
    k = 1
    while k < n:
        srcs.append(p)
        dsts.append(np.roll(p, -k))
        sizes.append(np.full(n, min(k, n - k) * group.size / n))
        k *= 2
    return np.concatenate(srcs), np.concatenate(dsts), np.concatenate(sizes)

"""Ring: NCCL's ring, split into rail-aligned channels (see :func:`~.common.ring_orders`).

Per GPU, to its ring successor: all-reduce ``2(n−1)/n × S`` (reduce-scatter then all-gather
around the ring), all-gather and reduce-scatter ``(n−1)/n × S`` — NCCL's ``PERFORMANCE.md``
bus-bandwidth accounting — divided evenly over the channels.
"""
from __future__ import annotations

import numpy as np

from designer.engine.traffic.collectives.common import Group, empty, ring_orders

__all__ = ["KINDS", "flows", "supports"]

KINDS = ("allreduce", "allgather", "reducescatter")


def supports(topo, group: Group) -> str | None:
    """Ring runs everywhere (two or more participants)."""
    return None if group.kind in KINDS else f"ring does not implement {group.kind}"


def flows(topo, group: Group):
    """Ring flows: every GPU to its successor in every channel."""
    n = group.n
    if n < 2:
        return empty()
    orders = ring_orders(topo, group.participants, group.channels, group.rails if group.nodes > 1 else None)
    if not orders:
        return empty()
    src = np.concatenate(orders)
    dst = np.concatenate([np.roll(o, -1) for o in orders])
    factor = 2.0 if group.kind == "allreduce" else 1.0
    return src, dst, factor * (n - 1) / n * group.size / len(orders)

"""Ring: NCCL's ring, split into rail-aligned channels (see :func:`~.common.ring_orders`).

Per GPU, to its ring successor: all-reduce ``2(n−1)/n × S`` (reduce-scatter then all-gather
around the ring), all-gather and reduce-scatter ``(n−1)/n × S`` — NCCL's ``PERFORMANCE.md``
bus-bandwidth accounting — divided evenly over the channels.

Broadcast and reduce (the rooted collectives) run on the same rings as a pipelined *chain*
from (to) the root: NCCL's ring broadcast sends every chunk from the root down the ring and the
last rank does not send it back (NVIDIA/nccl ``src/device/broadcast.h``; reduce,
``src/device/reduce.h``, is the same chain ending at the root). Every chain link carries the
whole ``S`` (split over the channels), so the bandwidth is the ring's bottleneck link and the
latency is ``n−1`` steps (:func:`.protocols.latency_us`).
"""
from __future__ import annotations

import numpy as np

from designer.engine.traffic.collectives.common import Group, empty, ring_orders

__all__ = ["CHAIN_KINDS", "KINDS", "chain", "flows", "supports"]

#: Rooted collectives run as a chain on the ring's channels.
CHAIN_KINDS = ("broadcast", "reduce")
KINDS = ("allreduce", "allgather", "reducescatter") + CHAIN_KINDS


def supports(topo, group: Group) -> str | None:
    """Ring runs everywhere (two or more participants)."""
    return None if group.kind in KINDS else f"ring does not implement {group.kind}"


def flows(topo, group: Group):
    """Ring flows: every GPU to its successor in every channel (the chain of a rooted kind)."""
    n = group.n
    if n < 2:
        return empty()
    orders = ring_orders(topo, group.participants, group.channels, group.rails if group.nodes > 1 else None)
    if not orders:
        return empty()
    if group.kind in CHAIN_KINDS:
        return chain(orders, group)
    src = np.concatenate(orders)
    dst = np.concatenate([np.roll(o, -1) for o in orders])
    factor = 2.0 if group.kind == "allreduce" else 1.0
    return src, dst, factor * (n - 1) / n * group.size / len(orders)


def chain(orders: list[np.ndarray], group: Group):
    """Each channel's ring cut open at the root: ``n−1`` links, each carrying ``S / channels``.

    Broadcast starts at the root (the ring rotated so the root is first); reduce ends at it (the
    root last), so the data flows the ring's way in both and a reduce is a broadcast reversed
    in time, not in links.
    """
    root = group.participants[0] if group.root is None else group.root
    src, dst = [], []
    for order in orders:
        at = int(np.flatnonzero(order == root)[0])
        shift = at if group.kind == "broadcast" else at + 1
        line = np.roll(order, -shift)
        src.append(line[:-1])
        dst.append(line[1:])
    return np.concatenate(src), np.concatenate(dst), group.size / len(orders)

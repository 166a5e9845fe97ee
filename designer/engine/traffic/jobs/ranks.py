"""The design's GPUs in rank order, for imported traces whose ranks are numbers (Chakra).

Rank ``r`` is the ``r``-th GPU in the order a layout uses (:mod:`.layout`): hosts (NVLink
domains) as they first appear in the document, GPUs by local index inside each, so consecutive
ranks share a host as a launcher such as ``torchrun`` places them.
"""
from __future__ import annotations

import numpy as np

from designer.engine.traffic.collectives.common import host_blocks

__all__ = ["rank_gpu_ids"]


def rank_gpu_ids(topo) -> list[str]:
    """Node ids of the topology's GPUs in rank order (empty when it has none)."""
    gpus = np.array([i for i, k in enumerate(topo.node_kind) if k == "gpu"], dtype=np.int64)
    if not len(gpus):
        return []
    return [topo.node_ids[int(i)] for i in np.concatenate(host_blocks(topo, gpus))]

"""All-to-all as NCCL runs it: point-to-point channels, one send/receive per peer pair.

Every participant sends ``S/n`` to every other one (S = its send buffer). Cross-host pairs take
the NIC the routing's NIC policy gives them — under ``pxn`` the data first crosses NVLink to the
peer GPU on the destination's rail (NCCL's PXN), as for any flow.
"""
from __future__ import annotations

import numpy as np

from designer.engine.traffic.collectives.common import Group

__all__ = ["flows", "supports"]


def supports(topo, group: Group) -> str | None:
    """P2P implements all-to-all."""
    return None if group.kind == "alltoall" else f"p2p implements alltoall only, not {group.kind}"


def flows(topo, group: Group):
    """Every ordered pair of distinct participants."""
    p = group.participants
    n = len(p)
    src = np.repeat(p, n)
    dst = np.tile(p, n)
    keep = src != dst
    return src[keep], dst[keep], group.size / max(n, 1)

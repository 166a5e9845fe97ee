"""Point-to-point collectives: all-to-all as NCCL runs it (one send/receive per peer pair), and
nccl-tests' grouped send/receive collectives — gather, scatter and hypercube.

- all-to-all: every participant sends ``S/n`` to every other one (S = its send buffer);
- scatter: the root sends ``S/n`` to every other rank; gather: every other rank sends ``S/n`` to
  the root (nccl-tests ``src/scatter.cu`` / ``src/gather.cu``: ``ncclSend``/``ncclRecv`` to and
  from the root in one group; S the root's whole buffer), so the root's links are the
  bottleneck;
- hypercube: nccl-tests' recursive-doubling all-gather (``src/hypercube.cu``): in step ``k``
  (``mask = 2^k``) rank ``r`` exchanges ``S·mask/n`` with rank ``r XOR mask``, ``log2 n`` steps
  (``n`` a power of two). All steps are solved concurrently (steady state), as for
  :mod:`.pat`: each rank moves ``(n−1)/n × S`` in all.

Ranks are the participants in order (nccl-tests' rank order). Cross-host pairs take the NIC
the routing's NIC policy gives them: under the default ``affinity`` (and ``pxn``) the data
first crosses NVLink to the local GPU on the destination's rail and leaves by its NIC —
NCCL's PXN, its default for send/receive (docs/ENGINE.md, Routing); ``own_nic`` is PXN off.
"""
from __future__ import annotations

import numpy as np

from designer.engine.routing.nic_policies import NCCL_P2P_KINDS
from designer.engine.traffic.collectives.common import Group, empty

__all__ = ["KINDS", "ROOTED", "flows", "supports"]

#: The kinds this module runs — the ones whose sends take PXN under ``affinity`` (routing).
KINDS = NCCL_P2P_KINDS
#: The p2p kinds with a root.
ROOTED = ("gather", "scatter")


def supports(topo, group: Group) -> str | None:
    """P2P implements all-to-all, gather, scatter and hypercube."""
    return None if group.kind in KINDS else f"p2p implements {', '.join(KINDS)} only, not {group.kind}"


def flows(topo, group: Group):
    """The sends of the kind (see the module docstring)."""
    p = group.participants
    n = len(p)
    if n < 2:
        return empty()
    if group.kind in ROOTED:
        root = p[0] if group.root is None else group.root
        others = p[p != root]
        ends = (np.full(len(others), root, np.int64), others)
        src, dst = ends if group.kind == "scatter" else ends[::-1]
        return src, dst, group.size / n
    if group.kind == "hypercube":
        return _hypercube(p, group.size)
    src = np.repeat(p, n)
    dst = np.tile(p, n)
    keep = src != dst
    return src[keep], dst[keep], group.size / max(n, 1)


def _hypercube(p: np.ndarray, size: float):
    """Every step's exchanges: rank ``r`` sends ``size·mask/n`` to ``r ^ mask``."""
    n = len(p)
    rank = np.arange(n)
    src, dst, sizes = [], [], []
    mask = 1
    while mask < n:
        partner = rank ^ mask
        ok = partner < n   # always, for a power of two (checked by the pattern)
        src.append(p[ok])
        dst.append(p[partner[ok]])
        sizes.append(np.full(int(ok.sum()), size * mask / n))
        mask <<= 1
    return np.concatenate(src), np.concatenate(dst), np.concatenate(sizes)

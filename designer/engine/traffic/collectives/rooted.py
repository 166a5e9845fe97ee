"""The pattern fields of nccl-tests' rooted and send/receive collectives: a root for broadcast,
reduce, gather and scatter, and the power-of-two rank count of hypercube.

``root`` is a node id among the participants (the rank nccl-tests' ``-r`` names, as a node);
without it the first participant is the root, as nccl-tests' default ``-r 0``.
"""
from __future__ import annotations

import numpy as np

from designer.engine.errors import Problem

__all__ = ["ROOTED_KINDS", "rooted_fields"]

#: Collective kinds with a root (nccl-tests ``broadcast_perf``, ``reduce_perf``, ``gather_perf``,
#: ``scatter_perf``).
ROOTED_KINDS = ("broadcast", "reduce", "gather", "scatter")


def rooted_fields(topo, raw: dict, kind: str, where: str, out: dict, problems: list) -> None:
    """Resolve ``root`` into ``out["root"]`` (a node index) and check hypercube's rank count;
    problems located (``workload[0].root: 'h0/gpu9' is not a participant``)."""
    participants = out.get("participants")
    if kind == "hypercube":
        n = 0 if participants is None else len(participants)
        if n and n & (n - 1):
            problems.append(Problem(f"{where}.participants", f"hypercube needs a power-of-two number of "
                                                             f"ranks (nccl-tests skips others), got {n}"))
        return
    if kind not in ROOTED_KINDS:
        return
    root = raw.get("root")
    if root is None:
        out["root"] = None if participants is None else int(participants[0])
        return
    if not isinstance(root, str) or root not in topo.node_index:
        problems.append(Problem(f"{where}.root", f"unknown node {root!r} (give the id of a participant)"))
        return
    index = topo.node_index[root]
    if participants is not None and not np.any(participants == index):
        problems.append(Problem(f"{where}.root", f"{root!r} is not a participant"))
        return
    out["root"] = int(index)

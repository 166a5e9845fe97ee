"""Collective algorithms over the unified topology, and the time model that picks among them.

Each algorithm turns a collective pattern into *flows* (source, destination, bytes) that are
routed and solved like any other traffic, so they contend with other patterns and react to
failures. Modules (one per algorithm):

- :mod:`.ring` — rail-aligned rings, one per channel (all-reduce, all-gather, reduce-scatter),
  and the chain on them from / to a root (broadcast, reduce);
- :mod:`.tree` — NCCL's tree: an intra-host chain plus a rail-aligned double binary tree across
  hosts per channel (all-reduce);
- :mod:`.nvls` — NVLink SHARP: the NVSwitch plane as the reduction endpoint (one host,
  NVSwitch gen3+); :mod:`.nvlstree` — NVLS in each host + trees between hosts;
- :mod:`.collnet` — in-network reduction in SHARP switches (``attrs.sharp: true``);
- :mod:`.pat` — logarithmic all-gather / reduce-scatter with one GPU per host;
- :mod:`.p2p` — all-to-all as point-to-point channels, and nccl-tests' grouped send/receive
  collectives: gather, scatter (to / from a root) and hypercube (recursive doubling);
- :mod:`.protocols` — LL / LL128 / Simple and NCCL's latency model (tuning.cc tables);
- :mod:`.ceilings` — NCCL's per-architecture bandwidth ceilings on a plan, and the GPU
  architecture / CPU vendor they are indexed by;
- :mod:`.select` — :func:`plan_pattern`: NCCL-tuner-style choice of algorithm and protocol;
- :mod:`.staging` — GPUDirect RDMA off: network legs staged through host memory (``gdr_off``);
- :mod:`.launch` — one host thread issuing a collective on several GPUs (nccl-tests ``-g``): the
  floor of its completion (``gpus_per_thread``);
- :mod:`.summary` — the result fields of a collective pattern and its fallback under failures;
- :mod:`.common` — participant groups, ring orders, nccl-tests' bus-bandwidth factors;
  :mod:`.domains` — what a collective treats as one node (NVLink domain or host) and its
  NVSwitch plane;
- :mod:`.rooted` — the ``root`` of broadcast / reduce / gather / scatter patterns and
  hypercube's power-of-two check;
- :mod:`.mesh` — channels over a switchless direct GPU mesh (AMD xGMI): link-disjoint rings on
  one host, rail-aligned Hamiltonian paths across hosts, the tree's chains.
"""
from __future__ import annotations

from designer.engine.traffic.collectives.common import (
    busbw_factor,
    group_of,
    host_blocks,
    ring_orders,
)
from designer.engine.traffic.collectives.protocols import PROTOCOLS
from designer.engine.traffic.collectives.select import (
    ALGORITHMS,
    MODULES,
    Plan,
    candidates,
    check_algorithm,
    plan_pattern,
)
from designer.engine.traffic.collectives.summary import collective_fields, fallback_fields

__all__ = [
    "ALGORITHMS",
    "COLLECTIVE_KINDS",
    "PROTOCOLS",
    "Plan",
    "build_flows",
    "busbw_factor",
    "candidates",
    "check_algorithm",
    "collective_fields",
    "fallback_fields",
    "flow_bound",
    "group_of",
    "host_blocks",
    "plan_pattern",
    "ring_orders",
]

COLLECTIVE_KINDS = ("allreduce", "allgather", "reducescatter", "alltoall", "broadcast", "reduce", "gather",
                    "scatter", "hypercube")


# Upper bounds on a collective's flows known before the topology is looked at (n participants,
# ch channels, default 8 = a host's GPU count): a ring n·ch; a tree's chain and tree edges,
# both ways, in two trees 4·n·ch; CollNet's host exchange (one per local peer) and head ring
# 2·n·ch; NVLS 2n; NVLSTree 2n + per rail 4 per host ≤ 6n; PAT n per doubling step.
_BOUNDS = {"ring": lambda n, ch: n * ch, "tree": lambda n, ch: 4 * n * ch, "collnet": lambda n, ch: 2 * n * ch,
           "nvls": lambda n, ch: 2 * n, "nvlstree": lambda n, ch: 6 * n,
           "pat": lambda n, ch: n * max(1, (n - 1).bit_length()),
           "p2p": lambda n, ch: n * max(1, (n - 1).bit_length())}   # hypercube; gather/scatter n−1


def flow_bound(kind: str, algorithm: str, n: int, channels: int | None = None, over=max) -> int:
    """Bound on the flows of a collective of ``n`` participants, for limits checked before any
    flow is built. ``auto`` is bounded over the algorithms of ``kind``: ``over=max`` the most any
    of them could make, ``over=min`` the fewest (what the workload makes at least, whichever
    algorithm the planner picks)."""
    if kind == "alltoall":
        return n * (n - 1)
    names = candidates(kind) if algorithm == "auto" else [algorithm]
    return over(_BOUNDS[a](n, channels or 8) for a in names)


def build_flows(topo, pattern: dict, algorithm: str):
    """``(src, dst, bytes)`` of ``algorithm`` for a normalized collective pattern."""
    return MODULES[algorithm].flows(topo, group_of(topo, pattern))

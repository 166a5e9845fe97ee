"""NCCL's protocols and its latency model: per-algorithm base latency, per-hop hardware latency,
protocol bandwidth efficiency — the figures NCCL's tuner uses to pick an algorithm and protocol.

Source of every table: NVIDIA/nccl ``src/graph/tuning.cc`` (``baseLat``, ``hwLat``,
``ncclTopoTuneModel``; the NCCL 2.23+ tables, https://github.com/NVIDIA/nccl/blob/master/src/graph/tuning.cc).
Times are in microseconds as NCCL states them; :func:`latency_us` turns a step count into the
collective's latency exactly as ``ncclTopoTuneModel`` does.

Protocols
---------
- ``LL``: 8-byte stores of 4 data bytes + a 4-byte flag, so half the wire carries data —
  bandwidth × 1/2 (tuning.cc: ring LL ``busBw * .5``); lowest latency.
- ``LL128``: 128-byte lines of 120 data bytes + an 8-byte flag — × 0.92 (tuning.cc: "0.92
  /*120.0/128.0*/"); enabled by default on NVLink systems.
- ``Simple``: whole buffers and a fence per step — full bandwidth, highest per-step latency.
  NVLS, NVLSTree, CollNet and PAT are Simple only (tuning.cc skips the others).
"""
from __future__ import annotations

import math

__all__ = [
    "BASE_LAT_US",
    "EFFICIENCY",
    "bandwidth_efficiency",
    "HW_LAT_US",
    "NET_OVERHEAD_BY_VENDOR_US",
    "NET_OVERHEAD_US",
    "PROTOCOLS",
    "ROUTED_NET_STEP_ALGORITHMS",
    "latency_us",
    "protocols_for",
]

PROTOCOLS = ("LL", "LL128", "Simple")

# Bandwidth efficiency of each protocol (see the module docstring; NCCL tuning.cc).
EFFICIENCY = {"LL": 0.5, "LL128": 0.92, "Simple": 1.0}

# NCCL's "various model refinements" of the tree's bus bandwidth (tuning.cc, NCCL 2.23+): an
# all-reduce tree × 0.92; then LL × 1/3.8, LL128 × 7/9 on one node (120/128 across nodes).
TREE_ALLREDUCE_FACTOR = 0.92
TREE_PROTOCOL_FACTOR = {"LL": 1.0 / 3.8, "Simple": 1.0}
TREE_LL128_FACTOR = {"one_node": 7.0 / 9.0, "nodes": 120.0 / 128.0}
# PAT's bus bandwidth × 0.75 (tuning.cc).
PAT_FACTOR = 0.75

# baseLat (µs) per algorithm × protocol {LL, LL128, Simple}: NCCL tuning.cc ``baseLat``.
BASE_LAT_US = {
    "tree": (6.8, 14.0, 8.4), "ring": (6.6, 14.0, 8.4),
    "collnet": (0.0, 0.0, 0.0), "nvls": (0.0, 0.0, 0.0), "nvlstree": (0.0, 0.0, 0.0),
    "pat": (0.0, 0.0, 0.0), "p2p": (6.6, 14.0, 8.4),
}
# hwLat (µs) per hop technology × algorithm × protocol: NCCL tuning.cc ``hwLat`` (NVLINK, PCI,
# NET). CollNet is CollNetDirect's row; PAT uses its own formula (see :func:`latency_us`);
# all-to-all (P2P) runs ring-like point-to-point steps, so it takes the ring row.
HW_LAT_US = {
    "nvlink": {"tree": (0.6, 1.25, 4.0), "ring": (0.6, 1.9, 3.4), "collnet": (0.0, 0.0, 3.7),
               "nvls": (0.0, 0.0, 25.0), "nvlstree": (0.0, 0.0, 25.0)},
    "pci": {"tree": (1.0, 1.9, 4.0), "ring": (1.0, 2.5, 5.7), "collnet": (0.0, 0.0, 3.7),
            "nvls": (0.0, 0.0, 0.0), "nvlstree": (0.0, 0.0, 0.0)},
    "net": {"tree": (5.0, 8.5, 14.0), "ring": (2.7, 4.0, 14.0), "collnet": (0.0, 0.0, 31.0),
            "nvls": (0.0, 0.0, 18.0), "nvlstree": (0.0, 0.0, 14.0)},
}
# Per-step network post overhead of the hosts' CPUs, ×3 for Simple: tuning.cc ``getNetOverhead``
# ("Network post overhead": x86 Intel 1.0 µs, x86 AMD 2.0 µs, anything else 1.0 µs).
NET_OVERHEAD_US = 1.0
NET_OVERHEAD_BY_VENDOR_US = {"intel": 1.0, "amd": 2.0}

_SIMPLE_ONLY = {"nvls", "nvlstree", "collnet", "pat"}


def bandwidth_efficiency(algorithm: str, protocol: str, kind: str, nodes: int) -> float:
    """Fraction of the bottleneck rate ``algorithm`` moves data at under ``protocol``, as NCCL's
    tuner models it (``ncclTopoTuneModel``'s refinements of ``busBw``): the ring keeps the plain
    protocol figure; the tree pays 0.92 on an all-reduce and its own LL / LL128 factors; PAT
    × 0.75. NVLS / NVLSTree / CollNet are Simple only (their efficiency is the catalog's).

    Parameters
    ----------
    algorithm, protocol : str
    kind : str
        Collective kind (``allreduce``, ``allgather`` …).
    nodes : int
        Hosts the collective spans (the tree's LL128 factor differs on one node).
    """
    if algorithm == "tree":
        base = TREE_ALLREDUCE_FACTOR if kind == "allreduce" else 1.0
        if protocol == "LL128":
            return base * TREE_LL128_FACTOR["one_node" if nodes <= 1 else "nodes"]
        return base * TREE_PROTOCOL_FACTOR[protocol]
    if algorithm == "pat":
        return PAT_FACTOR * EFFICIENCY[protocol]
    return EFFICIENCY[protocol]


def protocols_for(algorithm: str) -> tuple[str, ...]:
    """Protocols NCCL runs ``algorithm`` with."""
    return ("Simple",) if algorithm in _SIMPLE_ONLY else PROTOCOLS


def _hw(table: str, algorithm: str, protocol: str) -> float:
    row = HW_LAT_US[table].get("ring" if algorithm in ("p2p", "pat") else algorithm)
    return row[PROTOCOLS.index(protocol)]


# Algorithms whose steps across hosts are plain point-to-point sends of NCCL's network transport
# (ring, the trees between hosts, all-to-all's P2P): a topology-derived network step
# (``net_step_us``, :func:`designer.engine.model.hop_latency.network_step`) replaces the tuner's one NET
# figure. NVLS / CollNet across hosts reduce in the switches and PAT's formula is a fit, not
# a step count: they keep the tuner's NET latency.
ROUTED_NET_STEP_ALGORITHMS = ("ring", "tree", "nvlstree", "p2p")


def latency_us(algorithm: str, protocol: str, kind: str, n: int, nodes: int, intra: str = "nvlink",
               net_overhead: float = NET_OVERHEAD_US, net_step_us: float | None = None,
               plugin_latency_us: float = 0.0) -> float:
    """Latency (µs) of one collective as NCCL's tuner models it.

    Parameters
    ----------
    algorithm, protocol : str
    kind : str
        ``allreduce``, ``allgather``, ``reducescatter`` or ``alltoall``.
    n, nodes : int
        Ranks and hosts (nodes) taking part.
    intra : {"nvlink", "pci"}
        Technology of the intra-host hops.
    net_overhead : float
        The hosts' network post overhead, µs (:data:`NET_OVERHEAD_BY_VENDOR_US`; default Intel's).
    net_step_us : float, optional
        Latency (µs) of one step across hosts on the topology's own path under ``protocol``
        (:func:`designer.engine.model.hop_latency.network_step`); used instead of the tuner's NET hwLat by
        the algorithms of :data:`ROUTED_NET_STEP_ALGORITHMS`. Default: the tuner's figure.
    plugin_latency_us : float
        The network latency the hosts' NCCL net plugin reports
        (:func:`designer.engine.catalog.net_plugin_latency_us`): added to every step across
        hosts, twice under Simple, as NCCL's tuner does (``latencyInter``, "the flush extra latency").

    Notes
    -----
    - ring: ``baseLat + (nsteps − nInterSteps)·intraLat + nInterSteps·interLat`` with nsteps =
      2(n−1) for all-reduce, n−1 for all-gather/reduce-scatter, and nInterSteps the same in hosts;
      with several hosts intraLat is at least the network post overhead;
    - tree: ``baseLat + 2·((n/nodes − 1)·intraLat + log2(nodes)·interLat)``;
    - nvls: ``intraLat`` (+ interLat with several hosts); nvlstree: ``intraLat + 2·log2(nodes)·interLat``;
    - collnet (direct): ``2·(min(1, ppn−1)·intraLat + 0.4·(ppn−1)) + interLat``;
    - pat: ``8 + log2(nodes)·interLat/3.5 + 2.8·n``, interLat of the tree (one GPU per node);
    - alltoall (P2P): the ring's base latency plus one step of each technology it crosses (all
      peers are served in parallel).
    """
    if n < 2:
        return 0.0
    p = PROTOCOLS.index(protocol)
    base = BASE_LAT_US[algorithm][p]
    ppn = max(1, n // max(nodes, 1))
    intra_lat = _hw(intra, algorithm, protocol)
    inter_lat = _hw("net", "tree" if ppn == 1 else algorithm, protocol)
    if net_step_us is not None and algorithm in ROUTED_NET_STEP_ALGORITHMS:
        inter_lat = float(net_step_us)
    inter_lat += plugin_latency_us * (2 if protocol == "Simple" else 1)
    log_nodes = int(math.log2(nodes)) if nodes > 1 else 0
    if algorithm == "ring":
        reduce_twice = 2 if kind == "allreduce" else 1
        nsteps = reduce_twice * (n - 1)
        inter_steps = reduce_twice * (nodes - 1) if nodes > 1 else 0
        if nodes > 1:
            intra_lat = max(intra_lat, net_overhead * (3 if protocol == "Simple" else 1))
        return base + (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat
    if algorithm == "tree":
        return base + 2 * ((ppn - 1) * intra_lat + log_nodes * inter_lat)
    if algorithm == "nvls":
        return intra_lat + (inter_lat if nodes > 1 else 0.0)
    if algorithm == "nvlstree":
        return base + intra_lat + 2 * log_nodes * inter_lat
    if algorithm == "collnet":
        return base + 2 * (min(1, ppn - 1) * intra_lat + 0.4 * (ppn - 1)) + inter_lat
    if algorithm == "pat":
        return 8.0 + log_nodes * _hw("net", "tree", protocol) / 3.5 + 2.8 * n
    # alltoall as point-to-point channels
    return base + intra_lat + (inter_lat if nodes > 1 else 0.0)

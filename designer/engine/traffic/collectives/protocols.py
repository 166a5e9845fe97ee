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
- All-to-all's point-to-point sends are not tuned: LL up to 16 KiB a peer, else Simple
  (:func:`p2p_protocol`).

Bandwidth refinements of the same tuner, applied to the engine's solved rates: the per-
architecture ceilings of ring and tree (``llMaxBws``, ``perChMax*Bws``; :func:`tuner_efficiency`)
and the tree's medium-size correction (``treeCorrectionFactor``; :func:`tree_correction`). From
NCCL 2.28 the tables live in ``src/tuning/cost_model.cc``; the figures are unchanged. A latency
refinement of the same tuner: the ring's Simple "plateau" (:func:`ring_plateau`).
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
    "TREE_CORRECTION",
    "TREE_CORRECTION_LIMIT",
    "ARCHS",
    "ARCH_BY_NVLINK",
    "LL_MAX_BW",
    "PER_CH_MAX_RING_LL128_BW",
    "PER_CH_MAX_TREE_BW",
    "PER_CH_MAX_TREE_LL128_BW",
    "P2P_LL_THRESHOLD",
    "RING_PLATEAU",
    "latency_us",
    "ll_max_bw",
    "p2p_protocol",
    "protocols_for",
    "ring_plateau",
    "tree_correction",
    "tuner_efficiency",
]

PROTOCOLS = ("LL", "LL128", "Simple")

# Bandwidth efficiency of each protocol (see the module docstring; NCCL tuning.cc).
EFFICIENCY = {"LL": 0.5, "LL128": 0.92, "Simple": 1.0}
# A ring's LL128 with fewer than two ranks a host: NCCL's ``LL128Ratio`` 0.7 instead of 0.92 ("if
# ppn < 2, then we are sending/receiving at the same GPU through the NIC, apply some bw discount";
# NVIDIA/nccl src/graph/tuning.cc, ``nRanks / nNodes < 2``).
RING_LL128_ONE_PER_HOST = 0.7


def _ring_ll128(ranks_per_host: float | None) -> float:
    one = ranks_per_host is not None and ranks_per_host < 2
    return RING_LL128_ONE_PER_HOST if one else EFFICIENCY["LL128"]

# NCCL's "various model refinements" of the tree's bus bandwidth (tuning.cc, NCCL 2.23+): an
# all-reduce tree × 0.92; then LL × 1/3.8, LL128 × 7/9 on one node (120/128 across nodes).
TREE_ALLREDUCE_FACTOR = 0.92
TREE_PROTOCOL_FACTOR = {"LL": 1.0 / 3.8, "Simple": 1.0}
TREE_LL128_FACTOR = {"one_node": 7.0 / 9.0, "nodes": 120.0 / 128.0}
# PAT's bus bandwidth × 0.75 (tuning.cc).
PAT_FACTOR = 0.75

# NCCL's correction of the tree's bandwidth at medium sizes (tuning.cc ``treeCorrectionFactor``,
# applied in ``ncclTopoGetAlgoTime`` to tree all-reduce: "Trees are not perfectly sticking to the
# model for medium sizes. Applying a static correction factor is not ideal but works quite
# well."). One row per protocol {LL, LL128, Simple}, indexed by log2(nBytes >> 6); NCCL applies it
# to the tree for indices 0–22 (64 B … 256 MiB, ``logSize < 23``), larger sizes take 1. The NCCL
# 2.23+ table (24 entries; the last one serves NVLSTree on Blackwell, not modelled here).
TREE_CORRECTION_LIMIT = 23
TREE_CORRECTION = {
    "LL": (1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7, .7, .7, .6, .5, .4, .4, .5, .6, .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0),
    "LL128": (1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7, .6, .6, .6, .6, .6, .6, .8, .9, .9, .9, .9, 1.0, 1.0, 1.0),
    "Simple": (.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9),
}

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

# NCCL's per-architecture ceilings on the tuner's bus bandwidth (GB/s), NVIDIA/nccl
# src/graph/tuning.cc (src/tuning/cost_model.cc from NCCL 2.28), ``ncclTunerConstantsDefaults``;
# columns N1 / N2 / N4 = one host, two hosts, more. ``llMaxBws`` caps the LL protocol's whole bus
# bandwidth; the ``perChMax*`` rows cap it per channel (× the channel count). NCCL keeps the same
# NVLink latency rows for Hopper and Blackwell: these bandwidth rows are what tell them apart.
#: Rows by GPU architecture, read from the GPUs' NVLink generation (:data:`ARCH_BY_NVLINK`).
ARCHS = ("volta", "ampere", "hopper", "blackwell")
ARCH_BY_NVLINK = {2: "volta", 3: "ampere", 4: "hopper", 5: "blackwell"}
LL_MAX_BW = {"volta": (39.0, 39.0, 20.4), "ampere": (87.7, 22.5, 19.0), "hopper": (141.0, 45.0, 35.0),
             "blackwell": (2 * 141.0, 2 * 45.0, 2 * 35.0)}
PER_CH_MAX_RING_LL128_BW = {"volta": (20.0, 20.0, 20.0), "ampere": (20.0, 20.0, 20.0),
                            "hopper": (36.7, 36.7, 36.7), "blackwell": (40.0, 40.0, 40.0)}
PER_CH_MAX_TREE_LL128_BW = {"volta": (20.0, 20.0, 20.0), "ampere": (20.0, 20.0, 20.0),
                            "hopper": (36.7, 36.7, 29.0), "blackwell": (55.6, 31.67, 20.0)}
PER_CH_MAX_TREE_BW = {"volta": (26.5, 18.5, 10.0), "ampere": (24.0, 23.6, 17.8), "hopper": (38.7, 41.4, 36.0),
                      "blackwell": (70.0, 42.8, 24.0)}


def ll_max_bw(arch: str, nodes: int, cpu_amd: bool = False) -> float:
    """NCCL's ``llMaxBw`` (GB/s): on one host the GPU architecture's row; across hosts the CPU's —
    AMD (or mixed) hosts take the Ampere row, others the Volta row (tuning.cc: "LL: for single
    node, we look at GPU type; for multi-node, we look at CPU type")."""
    row = arch if nodes <= 1 else ("ampere" if cpu_amd else "volta")
    return LL_MAX_BW[row][_node_column(nodes)]


def _node_column(nodes: int) -> int:
    return 0 if nodes <= 1 else 1 if nodes == 2 else 2


def tuner_efficiency(algorithm: str, protocol: str, kind: str, nodes: int, busbw_gbs: float,
                     arch: str | None, channels: int, cpu_amd: bool = False,
                     ranks_per_host: float | None = None) -> float:
    """:func:`bandwidth_efficiency` with NCCL's per-architecture ceilings applied, in NCCL's
    order (``ncclTopoTuneModel``): ring LL ``min(llMaxBw, busBw·½)``, ring LL128
    ``min(busBw·0.92, nc·perChMaxRingLL128Bw)``; tree all-reduce ``min(busBw·0.92,
    nc·perChMaxTreeBw)``, then LL ``min(·/3.8, llMaxBw)``, LL128 ``min(·×(7/9 | 120/128),
    nc·perChMaxTreeLL128Bw)``. Other algorithms, and an unknown ``arch``: no ceiling.

    Parameters
    ----------
    algorithm, protocol, kind : str
    nodes : int
        Hosts the collective spans.
    busbw_gbs : float
        The algorithm's bus bandwidth at the full rate of its links, GB/s (NCCL's
        ``nChannels × bw``: the per-GPU rate the ring or tree runs at).
    arch : str or None
        One of :data:`ARCHS`.
    channels : int
        NCCL's channel count ``nc`` for the algorithm.
    cpu_amd : bool
        The hosts' CPUs are AMD (:func:`ll_max_bw` across hosts).
    ranks_per_host : float, optional
        nRanks / nNodes (a ring's LL128 under 2: :data:`RING_LL128_ONE_PER_HOST`).

    Returns
    -------
    float
        Rate after the ceilings / ``busbw_gbs`` (≤ :func:`bandwidth_efficiency`).
    """
    base = bandwidth_efficiency(algorithm, protocol, kind, nodes, ranks_per_host)
    if arch not in LL_MAX_BW or not busbw_gbs > 0 or not math.isfinite(busbw_gbs):
        return base
    col, b = _node_column(nodes), float(busbw_gbs)
    ll_max = ll_max_bw(arch, nodes, cpu_amd)
    if algorithm == "ring":
        if protocol == "LL":
            return min(ll_max, b * EFFICIENCY["LL"]) / b
        if protocol == "LL128":
            return min(b * _ring_ll128(ranks_per_host), channels * PER_CH_MAX_RING_LL128_BW[arch][col]) / b
        return base
    if algorithm == "tree" and kind == "allreduce":
        tree = min(b * TREE_ALLREDUCE_FACTOR, channels * PER_CH_MAX_TREE_BW[arch][col])
        if protocol == "LL":
            tree = min(tree * TREE_PROTOCOL_FACTOR["LL"], ll_max)
        elif protocol == "LL128":
            tree = min(tree * TREE_LL128_FACTOR["one_node" if nodes <= 1 else "nodes"],
                       channels * PER_CH_MAX_TREE_LL128_BW[arch][col])
        return tree / b
    return base


def bandwidth_efficiency(algorithm: str, protocol: str, kind: str, nodes: int,
                         ranks_per_host: float | None = None) -> float:
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
    ranks_per_host : float, optional
        nRanks / nNodes: a ring's LL128 under 2 ranks a host is :data:`RING_LL128_ONE_PER_HOST`.
    """
    if algorithm == "tree":
        base = TREE_ALLREDUCE_FACTOR if kind == "allreduce" else 1.0
        if protocol == "LL128":
            return base * TREE_LL128_FACTOR["one_node" if nodes <= 1 else "nodes"]
        return base * TREE_PROTOCOL_FACTOR[protocol]
    if algorithm == "pat":
        return PAT_FACTOR * EFFICIENCY[protocol]
    if algorithm == "ring" and protocol == "LL128":
        return _ring_ll128(ranks_per_host)
    return EFFICIENCY[protocol]


def tree_correction(protocol: str, nbytes: float) -> float:
    """NCCL's medium-size correction of a tree all-reduce's bandwidth (:data:`TREE_CORRECTION`):
    the factor at ``log2(nbytes >> 6)`` below :data:`TREE_CORRECTION_LIMIT` (< 512 MiB), else 1
    (and 1 below 64 B).

    Parameters
    ----------
    protocol : str
    nbytes : float
        The collective's size in bytes (nccl-tests' size S, NCCL's ``nBytes``).
    """
    units = int(nbytes) >> 6
    if units < 1:
        return 1.0
    row = TREE_CORRECTION[protocol]
    log_size = units.bit_length() - 1   # NCCL log2i: floor(log2)
    return row[log_size] if log_size < TREE_CORRECTION_LIMIT else 1.0


#: NCCL's ring Simple "plateau" factor on the latency (NVIDIA/nccl ``src/tuning/ring.cc``,
#: ``ncclTuningRingModelSim``; ``ncclTopoGetAlgoTime`` in ``src/graph/tuning.cc`` before 2.28):
#: ``factor`` 1.9 below compute capability 8.0, 1.4 from Ampere on; on one Blackwell NVLink
#: domain the excess 0.4 is scaled by the ring's steps (each step past the first keeps
#: ``step_delta / 0.4`` of what is left to full scale) and lowered by up to ``step_delta`` as the
#: bytes a rank and channel get grow from ``scale_from`` to twice that; applied from ``min_bytes``
#: a rank and channel.
RING_PLATEAU = {"factor_pre_ampere": 1.9, "factor": 1.4, "step_delta": 0.1, "scale_from": 256 * 1024,
                "min_bytes": 64}


def ring_plateau(kind: str, n: int, nodes: int, nbytes: float, channels: int, arch: str | None,
                 intra: str = "nvlink") -> float:
    """Factor on a ring Simple collective's latency, as NCCL's ring model applies it ("Plateau
    effect of ring"; :data:`RING_PLATEAU`).

    NCCL multiplies the ring Simple latency when (a) the ring all-reduce spans several hosts, or
    (b) on one host (NVLink domain) of Blackwell GPUs joined by NVLink, for all-reduce, all-gather
    and reduce-scatter — in both cases only once every rank's share of a channel,
    ``nbytes // (channels × n)``, is at least 64 bytes. In (a) the factor is 1.9 before Ampere and
    1.4 after; in (b) it is ``1 + stepScale × delta`` with ``stepScale = 1 − (0.1/0.4)^(nSteps−1)``
    (nSteps 2(n−1) for all-reduce, n−1 otherwise) and ``delta = 0.4 − 0.1 × min(1, (b − 256 KiB) /
    256 KiB)`` for ``b`` bytes a rank and channel above 256 KiB (0.4 below).

    Parameters
    ----------
    kind : str
        Collective kind.
    n, nodes : int
        Ranks and hosts.
    nbytes : float
        NCCL's ``nBytes`` (nccl-tests' size S; the whole buffer for all-gather / reduce-scatter).
    channels : int
        The communicator's channel count (:func:`.sizing.channels_full` of the ring).
    arch : str or None
        The GPUs' architecture (:data:`ARCHS`); None (no NVLink: compute capability unknown, or
        RCCL) applies no factor.
    intra : {"nvlink", "pci"}
        The ring's intra-host links (the Blackwell case needs NVLink).

    Returns
    -------
    float
        ≥ 1; 1 where NCCL applies none.
    """
    if arch is None or n < 2:
        return 1.0
    per_rank_channel = int(nbytes) // max(1, int(channels) * n)
    if per_rank_channel < RING_PLATEAU["min_bytes"]:
        return 1.0
    factor = RING_PLATEAU["factor_pre_ampere"] if arch == "volta" else RING_PLATEAU["factor"]
    if nodes > 1:
        return factor if kind == "allreduce" else 1.0
    if arch != "blackwell" or intra != "nvlink" or kind not in ("allreduce", "allgather", "reducescatter"):
        return 1.0
    delta, most = RING_PLATEAU["step_delta"], factor - 1.0
    steps = 2 * (n - 1) if kind == "allreduce" else n - 1
    step_scale = 1.0 - (delta / most) ** max(0, steps - 1)
    excess = most
    if per_rank_channel > RING_PLATEAU["scale_from"]:
        excess -= delta * min(1.0, (per_rank_channel - RING_PLATEAU["scale_from"]) / RING_PLATEAU["scale_from"])
    return 1.0 + step_scale * excess


def protocols_for(algorithm: str, peer_bytes: float | None = None) -> tuple[str, ...]:
    """Protocols NCCL runs ``algorithm`` with.

    Parameters
    ----------
    algorithm : str
    peer_bytes : float, optional
        For ``p2p`` (all-to-all): the bytes one peer gets. Given, the answer is the one protocol
        NCCL picks for them (:func:`p2p_protocol`); omitted, any of the three (an explicit
        protocol is checked against this).

    Returns
    -------
    tuple of str
    """
    if algorithm == "p2p" and peer_bytes is not None:
        return (p2p_protocol(peer_bytes),)
    return ("Simple",) if algorithm in _SIMPLE_ONLY else PROTOCOLS


#: Bytes per peer up to which NCCL sends a point-to-point operation with LL (``NCCL_P2P_LL_THRESHOLD``,
#: default 16384; NVIDIA/nccl ``src/enqueue.cc``, ``addP2pToPlan``).
P2P_LL_THRESHOLD = 16384


def p2p_protocol(peer_bytes: float) -> str:
    """The protocol NCCL gives one send or receive of ``peer_bytes`` (an all-to-all's S/n per peer).

    NCCL does not tune point-to-point operations: ``addP2pToPlan`` (NVIDIA/nccl ``src/enqueue.cc``)
    takes LL when the connection has LL buffers and ``bytes <= NCCL_P2P_LL_THRESHOLD`` (16 KiB),
    else Simple — never LL128, whatever is faster.

    Parameters
    ----------
    peer_bytes : float
        Bytes sent to one peer.

    Returns
    -------
    str
        ``"LL"`` or ``"Simple"``.
    """
    return "LL" if peer_bytes <= P2P_LL_THRESHOLD else "Simple"


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
        ``allreduce``, ``allgather``, ``reducescatter``, ``alltoall``, ``broadcast``, ``reduce``,
        ``gather``, ``scatter`` or ``hypercube``.
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
    - alltoall, gather, scatter (P2P): the ring's base latency plus one step of each technology
      it crosses (all peers are served in parallel); hypercube: that step ``log2 n`` times;
    - broadcast, reduce (ring chain): the ring's formula with ``n−1`` steps.
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
    # alltoall, gather, scatter as point-to-point channels (all peers served at once); hypercube's
    # log2(n) exchanges follow one another (nccl-tests src/hypercube.cu: one group per step).
    rounds = max(1, (n - 1).bit_length()) if kind == "hypercube" else 1
    return base + rounds * (intra_lat + (inter_lat if nodes > 1 else 0.0))

"""Size-dependent bandwidth of a collective: channels in use and pipeline fill.

NCCL does not move a small collective at the rate of a large one. Two mechanisms of NCCL's own
code make the achieved bandwidth grow with the message size; both are modelled here, as a factor
``size_factor(...) ∈ (0, 1]`` that divides the data time (``latency + data_time / (efficiency ×
size_factor)``). The latency term stays NCCL's tuning model (:mod:`.protocols`).

1. **Channels in use.** NCCL sizes a communicator's channel count (one CUDA block each) so that
   the channels together fill the links: its topology search builds one ring per NVLink (or
   NIC) and duplicates them (NCCL maintainer in NVIDIA/nccl#1429: "Hopper generation GPUs have
   18 NVLink channels between the GPU and NVSwitch and the number of NCCL channels is directly
   related to that"; 8-NVLink H800: 16 coll channels, NVIDIA/nccl#892; 12-NVLink A100: 24,
   NVIDIA/nccl#1785; 8-NIC H100 nodes across hosts: 16, NVIDIA/nccl#1453), capped at
   ``MAXCHANNELS`` = 32. The solved rate is therefore the rate of *all* channels, each carrying
   an equal share: the rate is channel-limited once fewer channels run. For a given collective,
   ring and tree use fewer channels while the per-channel work is small: NVIDIA/nccl
   ``src/enqueue.cc`` (``topoGetAlgoInfo``, NCCL 2.2x–2.28) removes channels while
   ``nBytes < nc × nthreads × threadThreshold`` (thresholds per protocol from
   ``src/graph/tuning.cc``: LL 8 — × nRanks for the ring —, LL128 8, Simple 64 bytes per
   thread; NCCL logs them as ``threadThresholds 8/8/64 | 64/8/64`` for 8 ranks,
   NVIDIA/nccl#892; threads per channel LL 512, LL128 640, Simple 512, ``src/include/device.h``).
   NVLS always runs its ``nvlsChannels`` (catalog :func:`~designer.engine.catalog.nvls_channels`:
   16 on Hopper; on Blackwell 24 in one host or NVLink domain, 32 across hosts, NVIDIA/nccl
   ``src/transport/nvls.cc``).
   sjeaugey confirms in NVIDIA/nccl#1785 that a small message uses a subset of the channels.

2. **Pipeline fill (Simple).** Within a channel NCCL moves data in chunks through a FIFO of
   ``NCCL_STEPS`` = 8 slots (``NCCL_BUFFSIZE`` 4 MiB → 512 KiB a slot; sjeaugey,
   NVIDIA/nccl#391: rings use 2 slots per chunk, trees and chains all 8 with 512 KiB chunks).
   Simple posts a flag per slice: a stage forwards a chunk only once it has all of it (LL and
   LL128 carry a flag in every 8- / 128-byte line and forward as lines arrive: no fill). A
   channel that moves ``k`` chunks through ``d`` store-and-forward stages takes ``k + d − 1``
   chunk times instead of ``k``: the fill factor is ``k / (k + d − 1)``.

   - **ring**: ``d`` does not apply — on every one of its 2(n−1) steps *every* rank sends a chunk
     to its successor, so all links are busy from the first step (the per-step cost is NCCL's
     latency term, already charged): factor 1.
   - **tree** (up then down a chain of m−1 GPUs and log2(nodes) network levels): ``d = 2·(m − 1 +
     ⌈log2 nodes⌉)``, chunks of one slot (512 KiB; ``calcCollChunking`` keeps it for Simple),
     ``k = ⌈S / (channels × chunk)⌉``.
   - **nvls** (one host): three stages — the inputs copied into the NVLS buffers, the
     multimem load-reduce / multicast store, the results copied out (the scatter / reduce /
     gather thread groups of NCCL's NVLS all-reduce kernel, ``src/device/all_reduce.h``) —
     ``d = 3``; the chunk of ``calcCollChunking``: ``nvlsChunkSize`` 128 KiB, 64 KiB below
     64 × concurrent ops, 32 KiB below 8 ×, 16 KiB below 2 × (concurrent ops = channels × heads,
     a head per local GPU), and ``k = ⌈S / (channels × heads × chunk)⌉``.
   - **nvlstree**: NVLS's three stages plus the network tree up and down, ``d = 3 + 2·⌈log2
     nodes⌉``; chunk 128 KiB, 64 KiB below 4 × concurrent ops, 32 KiB below 1 ×.
   - collnet, pat, p2p (all-to-all): factor 1 (not modelled).

AMD GPUs on an xGMI mesh run RCCL, which overrides NCCL's channel count and thread thresholds
(``rcclOverrideChannels``, ``rcclUpdateThreadThreshold`` in ROCm/rccl): factor 1 there
(:func:`runs_rccl`), not NCCL's rules.

Everything here is a function of the topology and the pattern (GPU count, hosts, NVLinks and NICs
per host, algorithm, protocol, size): no per-platform constant.
"""
from __future__ import annotations

import math

__all__ = ["BUFFSIZE", "MAXCHANNELS", "NCCL_STEPS", "NTHREADS", "THREAD_THRESHOLD", "NVLS_CHUNK",
           "channels_full", "channels_in_use", "nvls_chunk", "nvlstree_chunk", "pipeline_factor",
           "runs_rccl", "size_factor", "size_factor_for", "size_factors_for"]

# --- NCCL's protocol and buffer constants (one place; sources in the module docstring) ---------
#: FIFO slots per connection (``src/include/device.h`` ``NCCL_STEPS``).
NCCL_STEPS = 8
#: Per-connection FIFO bytes per protocol (``src/include/device.h`` ``DEFAULT_*_BUFFSIZE``:
#: LL 8 lines × 512 threads × 8 steps × 16 B; LL128 120 elements × 640 threads × 8 steps × 8 B;
#: Simple 4 MiB, ``NCCL_BUFFSIZE``).
BUFFSIZE = {"LL": 8 * 512 * NCCL_STEPS * 16, "LL128": 120 * 640 * NCCL_STEPS * 8, "Simple": 1 << 22}
#: Threads per channel (``NCCL_LL_MAX_NTHREADS``, ``NCCL_LL128_MAX_NTHREADS``, ``NCCL_SIMPLE_MAX_NTHREADS``).
NTHREADS = {"LL": 512, "LL128": 640, "Simple": 512}
#: Bytes per thread below which a channel is dropped (``src/graph/tuning.cc``
#: ``NCCL_LL_THREAD_THRESHOLD``, ``NCCL_LL128_THREAD_THRESHOLD``, ``NCCL_SIMPLE_THREAD_THRESHOLD``);
#: the ring's LL threshold is multiplied by the rank count.
THREAD_THRESHOLD = {"LL": 8, "LL128": 8, "Simple": 64}
#: Channel ceiling (``src/include/device.h`` ``MAXCHANNELS``).
MAXCHANNELS = 32
#: NVLS chunk (``nvlsChunkSize``, ``NCCL_NVLS_CHUNKSIZE`` default 128 KiB).
NVLS_CHUNK = 128 * 1024
#: Store-and-forward stages of NCCL's single-host NVLS all-reduce (scatter, reduce, gather).
NVLS_STAGES = 3


def channels_in_use(full: int, nbytes: float, algorithm: str, protocol: str, n: int) -> int:
    """Channels a ring or tree collective of ``nbytes`` runs on (``full`` at large sizes): one
    fewer while ``nbytes < nc × nthreads × threshold`` (NCCL ``topoGetAlgoInfo``)."""
    full = max(1, int(full))
    if algorithm not in ("ring", "tree"):
        return full
    per_channel = NTHREADS[protocol] * THREAD_THRESHOLD[protocol] * (n if (algorithm == "ring" and protocol == "LL") else 1)
    return max(1, min(full, int(nbytes // per_channel)))


def nvls_chunk(nbytes: float, concurrent: int) -> int:
    """NVLS chunk bytes at this size (``calcCollChunking``, one host)."""
    chunk = NVLS_CHUNK
    for times, smaller in ((64, 65536), (8, 32768), (2, 16384)):
        if nbytes < times * concurrent * chunk and chunk > smaller:
            chunk = smaller
    return chunk


def nvlstree_chunk(nbytes: float, concurrent: int) -> int:
    """NVLS-tree chunk bytes at this size (``calcCollChunking``)."""
    chunk = NVLS_CHUNK
    for times, smaller in ((32, 262144), (16, 131072), (4, 65536), (1, 32768)):
        if nbytes < times * concurrent * chunk and chunk > smaller:
            chunk = smaller
    return chunk


def _fill(chunks: float, stages: int) -> float:
    k = max(1, math.ceil(chunks))
    return k / (k + max(stages, 1) - 1)


def pipeline_factor(algorithm: str, protocol: str, nbytes: float, channels: int, per_node: int,
                    nodes: int) -> float:
    """Pipeline-fill factor ``k / (k + d − 1)`` of a Simple collective (1 for LL / LL128 and for
    the ring; see the module docstring)."""
    if protocol != "Simple" or nbytes <= 0:
        return 1.0
    levels = math.ceil(math.log2(nodes)) if nodes > 1 else 0
    if algorithm == "tree":
        chunk = BUFFSIZE["Simple"] // NCCL_STEPS
        return _fill(nbytes / (channels * chunk), 2 * (max(per_node, 1) - 1 + levels))
    if algorithm in ("nvls", "nvlstree"):
        concurrent = channels * max(per_node, 1)
        chunk_of = nvls_chunk if algorithm == "nvls" else nvlstree_chunk
        stages = NVLS_STAGES if algorithm == "nvls" else NVLS_STAGES + 2 * levels

        def fill(size):
            return _fill(size / (concurrent * chunk_of(size, concurrent)), stages)

        # NCCL doubles the chunk at fixed multiples of concurrent ops × chunk; the larger chunk
        # pays off in per-chunk overheads this model does not count, so the fill is taken as
        # never falling with size: the best fill at or below this size (just under each point
        # where the chunk grows).
        edges = [t * concurrent * c for t in _CHUNK_EDGES[algorithm] for c in (16384, 32768, 65536, 131072)]
        return max([fill(nbytes)] + [fill(e - 1) for e in edges if 1 < e <= nbytes])
    return 1.0


# The multiples of concurrent ops × chunk at which calcCollChunking changes the chunk.
_CHUNK_EDGES = {"nvls": (2, 8, 64), "nvlstree": (1, 4, 16, 32)}


def size_factor(algorithm: str, protocol: str, nbytes: float, full: int, n: int, per_node: int,
                nodes: int) -> float:
    """(channels in use / channels at full size) × pipeline fill, in (0, 1]."""
    used = channels_in_use(full, nbytes, algorithm, protocol, n)
    return used / max(1, int(full)) * pipeline_factor(algorithm, protocol, nbytes, used, per_node, nodes)


def channels_full(topo, group, algorithm: str) -> int:
    """NCCL's channel count for ``algorithm`` on this topology: NVLS its ``nvlsChannels``
    (catalog); ring and tree one ring per NVLink of a GPU, duplicated (2 × NVLinks of the first
    participant), across hosts at most 2 × the NICs of its host, capped at :data:`MAXCHANNELS`."""
    from designer.engine.catalog import TECHS, nvls_channels, nvswitch_generation
    from designer.engine.model.topology import kind_nodes
    from designer.engine.routing.intra import is_nvlink

    g = int(group.participants[0])
    if algorithm in ("nvls", "nvlstree"):
        gens = [nvswitch_generation(topo, v) for v, _ in topo.adjacency[g] if topo.node_kind[v] == "nvswitch"]
        gen = max((x for x in gens if x is not None), default=None)
        return nvls_channels(gen, group.nodes > 1)
    links = 0
    for v, link in topo.adjacency[g]:
        if topo.node_kind[v] in ("nvswitch", "gpu") and is_nvlink(topo, link):
            info = TECHS.get(topo.link_tech[link])   # no (or an unknown) tech: one link
            links += max(1, int(info.width)) if info is not None else 1
    full = 2 * links if links else 2
    if group.nodes > 1:
        host = topo.node_host[g]
        nics = sum(1 for i in kind_nodes(topo, "nic").tolist()
                   if topo.node_host[i] == host and topo.node_attrs[i].get("role", "compute") == "compute")
        if nics:
            full = min(full, 2 * nics)
    return max(1, min(MAXCHANNELS, full))


def runs_rccl(topo, group) -> bool:
    """Whether the participants are AMD GPUs on an xGMI mesh: RCCL, whose channel counts and
    thread thresholds are its own (ROCm/rccl overrides them: ``rcclOverrideChannels``,
    ``rcclUpdateThreadThreshold``), so NCCL's rules above are not applied there."""
    from designer.engine.catalog import TECHS

    g = int(group.participants[0])
    return any(getattr(TECHS.get(topo.link_tech[link]), "family", None) == "xgmi" for _, link in topo.adjacency[g])


def size_factor_for(topo, group, algorithm: str, protocol: str) -> float:
    """:func:`size_factor` of ``algorithm`` under ``protocol`` for the pattern ``group`` (1 for
    algorithms not modelled and for RCCL hosts, :func:`runs_rccl`)."""
    return size_factors_for(topo, group, algorithm)(protocol)


def size_factors_for(topo, group, algorithm: str):
    """``protocol -> size factor`` of ``algorithm`` for ``group``: the topology is read once
    (channel count, RCCL or not); each protocol then costs only the arithmetic."""
    if (algorithm not in ("ring", "tree", "nvls", "nvlstree") or group.n < 2 or group.size <= 0
            or runs_rccl(topo, group)):
        return lambda protocol: 1.0
    full = channels_full(topo, group, algorithm)
    return lambda protocol: size_factor(algorithm, protocol, group.size, full, group.n, group.per_node,
                                        group.nodes)

"""The catalog's NVSwitch figures for collectives: generation, NVLS efficiency, channels and the
plane's own all-reduce limit (owned by the collectives work, designer/engine/traffic/collectives/;
re-exported by :mod:`designer.engine.catalog`, where callers read them)."""
from __future__ import annotations

__all__ = ["NVSWITCH_GEN_BY_NVLINK", "NVLS_EFFICIENCY", "NVLS_CHANNELS", "NVLS_CHANNELS_MULTI_NODE",
           "NVLS_BUS_GBYTES", "SHARP_ATTR", "nvswitch_generation", "nvls_channels", "nvls_efficiency",
           "nvls_bus_gbytes"]

# ---- collectives (15a) ---------------------------------------------------------------------------
# NVSwitch generation and in-switch reduction (NVLS) efficiency. Owned by the collectives work
# (designer/engine/traffic/collectives/); the link-rate/NIC/latency parts above are calibrated separately.
#
# NVSwitch generation by the NVLink generation of its links: NVSwitch gen2 = NVLink 3 (A100 HGX),
# gen3 = NVLink 4 (H100 HGX, the first with NVLink SHARP: in-switch reduction and multicast,
# "NVLS"), gen4 = NVLink 5 (B200 HGX). Source: NVIDIA NVLink/NVSwitch product pages
# (https://www.nvidia.com/en-us/data-center/nvlink/). A document can state it on the node:
# ``attrs.generation`` of an ``nvswitch`` node wins over the link-derived figure.
NVSWITCH_GEN_BY_NVLINK = {2: 1, 3: 2, 4: 3, 5: 4}
# Fraction of the NVLink rate an NVLS collective sustains through the switch's reduction and
# multicast engines: NCCL src/tuning/nvls.cc ``nvlsEfficiency`` (also in older
# src/graph/tuning.cc): 0.85 on Hopper (NVSwitch gen3), 0.74 on Blackwell (gen4).
NVLS_EFFICIENCY = {3: 0.85, 4: 0.74}
# NCCL also keeps one of the NVLS channels for synchronization: src/tuning/nvls.cc scales the
# NVLS bandwidth by (nChannels - 1) / nChannels. NVLS channels by architecture: NVIDIA/nccl
# src/transport/nvls.cc ``ncclNvlsInit`` — NVLS_NCHANNELS_SM90 16 (Hopper); on Blackwell
# NVLS_NCHANNELS_SM100_NVL 24 when every rank sits in one host or one NVLink domain ("Use a
# reduced number of channels for single node/MNNVL domain on Blackwell") and NVLS_NCHANNELS_SM100
# 32 across hosts. H100 logs agree ("NVLS multicast support is available on dev N
# (NVLS_NCHANNELS 16)"). Keyed by NVSwitch generation (3 = Hopper's, 4 = Blackwell's).
NVLS_CHANNELS = {3: 16, 4: 24}
#: NVLS channels when the ranks span several hosts (NVLS_NCHANNELS_SM100 32; SM90 keeps 16).
NVLS_CHANNELS_MULTI_NODE = {3: 16, 4: 32}
# What the NVSwitch plane's reduction and multicast sustain per GPU of an NVLS all-reduce, as
# nccl-tests' bus bandwidth (GB/s), by NVSwitch generation. The GPU's own NVLinks carry S·(m+1)/m
# each way for m GPUs (traffic/collectives/nvls.py), so that limit's bus bandwidth grows with the
# domain (×1.25 from 8 to 72 GPUs); NCCL's tuner instead models NVLS bus bandwidth as the same for
# every domain size (src/tuning/nvls.cc). Measured, it grows from 8 to 16 GPUs and then stops:
# 840-842 (8), 901 (16), 909 (32), 910 (64), 877 (72) GB/s on GCP A4X GB200 NVL72
# (https://github.com/yangwhale/gpu-tpu-pedia/blob/main/gpu/a4x/10-production-ops/README.en.md,
# section 8.2, 16 GiB, NCCL 2.30.4), 930 (64) on OCI GB300 NVL72
# (https://github.com/oracle-quickstart/oci-gpu-quickstarts/blob/main/nvidia/GB300/README-GB300.md,
# 16 GiB, NCCL 2.28.7) — calibration cases of docs/FIDELITY.md. Past 16 GPUs the switch, not the
# links, is the limit: this figure, fitted to those runs (the median of published ÷ the engine's
# pipeline fill at that size). Hopper (gen3) has no published NVLink domain beyond 8 GPUs, where
# the links bind first: no figure (no limit).
NVLS_BUS_GBYTES = {4: 920.0}
# Switch attribute that declares in-network reduction (SHARP) for CollNet: ``attrs.sharp: true``.
SHARP_ATTR = "sharp"


def nvswitch_generation(topo, node: int) -> int | None:
    """NVSwitch generation of ``node`` (``attrs.generation``, else from its NVLink links' tech
    ``nvlink{g}x{n}``), or None when neither says."""
    gen = topo.node_attrs[node].get("generation")
    if isinstance(gen, int) and not isinstance(gen, bool):
        return gen
    nvlink = set()
    for _, link in topo.adjacency[node]:
        tech = (topo.link_tech[link] or "").lower()
        if tech.startswith("nvlink") and tech[6:7].isdigit():
            nvlink.add(int(tech[6]))
    return NVSWITCH_GEN_BY_NVLINK.get(min(nvlink)) if nvlink else None


def nvls_channels(generation: int | None, multi_node: bool = False) -> int:
    """NCCL's NVLS channel count for an NVSwitch generation: :data:`NVLS_CHANNELS` inside one
    host or NVLink domain, :data:`NVLS_CHANNELS_MULTI_NODE` across hosts (NCCL
    src/transport/nvls.cc); unknown or newer generations take the newest known figure."""
    table = NVLS_CHANNELS_MULTI_NODE if multi_node else NVLS_CHANNELS
    return table.get(generation, table[max(table)])


def nvls_efficiency(generation: int | None, multi_node: bool = False) -> float:
    """NVLS efficiency of an NVSwitch generation: :data:`NVLS_EFFICIENCY` × (channels − 1) /
    channels (:func:`nvls_channels`; ``multi_node``: the ranks span several hosts), NCCL's own
    NVLS bandwidth model; newer generations take the newest known figures."""
    if generation is None or generation < min(NVLS_EFFICIENCY):
        raise ValueError(f"NVSwitch generation {generation} has no in-switch reduction (NVLS)")
    newest = max(NVLS_EFFICIENCY)
    channels = nvls_channels(generation, multi_node)
    return NVLS_EFFICIENCY.get(generation, NVLS_EFFICIENCY[newest]) * (channels - 1) / channels


def nvls_bus_gbytes(generation: int | None) -> float | None:
    """:data:`NVLS_BUS_GBYTES` of an NVSwitch generation (None: no figure, no limit); newer
    generations than the table's take its newest figure."""
    if generation is None or not NVLS_BUS_GBYTES or generation < min(NVLS_BUS_GBYTES):
        return None
    return NVLS_BUS_GBYTES.get(generation, NVLS_BUS_GBYTES[max(NVLS_BUS_GBYTES)])

"""Catalog of link technologies and node kinds: the figures a topology document defaults from.

Every technology has a *raw* line rate and an *effective* rate (what is left after protocol
overhead, as NCCL models it in ``src/graph/topo.h``), both in **Gb/s per direction** (links are
full duplex), and a default one-way latency in ns. Vendors quote most figures in GB/s; they are multiplied by 8
here. The default basis is ``"effective"``: a document's link takes its
``capacity_gbps`` from the effective figure unless it says ``"capacity_basis": "raw"``.

Names
-----
- PCIe: ``pcie{gen}x{width}``, gen 3..6, width 1, 2, 4, 8, 16 (``pcie4x16``, ``pcie5x8``).
- NVLink: ``nvlink{gen}x{links}``, gen 3..5, links 1..18 (``nvlink3x12``, ``nvlink4x18``).
- Inter-socket: ``upi-skylake``, ``upi-spr``, ``upi-emr``, ``xgmi-zen2``, ``xgmi-zen3``,
  ``xgmi-zen4``, ``xgmi-zen5``; ``upi`` and ``xgmi`` are the Sapphire Rapids / Zen 4 figures.
- Memory: ``ddr4``/``ddr5`` (one channel) and ``ddr4x{n}``/``ddr5x{n}``, n 1..16 channels.
- Network: ``eth100 eth200 eth400 eth800``, ``ib-edr ib-hdr ib-ndr ib-xdr``; per NIC model, with a
  measured effective rate: ``cx6-ib-hdr cx6-roce-200 cx7-ib-ndr cx7-roce-400 efa-100``,
  ``cx8-ib-xdr cx8-roce-800 bf3-ib-ndr bf3-roce-400 efa-200`` (:data:`NIC_MODELS`).
- GPU fabric (AMD Infinity Fabric between GPUs, one x16 link): ``xgmi-mi300``, ``xgmi-mi325``.

Measured, per direction
-----------------------
NCCL's planning figures (the ``effective`` basis) use one rate per technology for both directions.
Measurements differ by direction and by who moves the data: :data:`PCIE_MEASURED_GBYTES` holds
host→device / device→host copy rates and the shared budget when both run at once,
:data:`NVLINK_MEASURED_GBYTES` GPU-pair copy rates. They are *not* applied to the templates by
default (see :func:`gpu_direction_capacities` for why and how to opt in per link with
``capacity_ab_gbps`` / ``capacity_ba_gbps``); docs/FIDELITY.md compares both with the engine.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["TechInfo", "TECHS", "NODE_KINDS", "GROUP_KINDS", "DEFAULT_BASIS", "tech_info",
           "catalog_as_dict", "GBPS_PER_GBYTE",
           "PCIE_MEASURED_GBYTES", "NVLINK_MEASURED_GBYTES", "NIC_MODELS", "gpu_direction_capacities",
           "NET_PLUGIN_LATENCY_US", "net_plugin_latency_us",
           "NVSWITCH_GEN_BY_NVLINK", "NVLS_EFFICIENCY", "NVLS_CHANNELS", "NVLS_CHANNELS_MULTI_NODE", "SHARP_ATTR",
           "nvswitch_generation", "nvls_channels", "nvls_efficiency", "nvls_bus_gbytes"]

GBPS_PER_GBYTE = 8.0  # GB/s -> Gb/s
DEFAULT_BASIS = "effective"


@dataclass(frozen=True)
class TechInfo:
    """One link technology.

    Attributes
    ----------
    name : str
        Catalog name (``pcie4x16``).
    family : str
        ``pcie``, ``nvlink``, ``xgmi`` (AMD GPU⇄GPU Infinity Fabric), ``inter_socket``, ``memory``,
        ``ethernet`` or ``infiniband``.
    generation : str
        ``"4"`` for PCIe Gen4, ``"spr"`` for Sapphire Rapids UPI, ``"ndr"`` …
    width : int
        Lanes (PCIe), bonded links (NVLink), channels (DDR), 1 otherwise.
    raw_gbps, effective_gbps : float
        Line rate and protocol-overhead rate, Gb/s per direction.
    latency_ns : float
        Default one-way latency of the link, ns.
    source : str
        Where the figures come from.
    """

    name: str
    family: str
    generation: str
    width: int
    raw_gbps: float
    effective_gbps: float
    latency_ns: float
    source: str

    def capacity_gbps(self, basis: str = DEFAULT_BASIS) -> float:
        """Capacity per direction in Gb/s for ``basis`` (``"effective"`` or ``"raw"``)."""
        return self.raw_gbps if basis == "raw" else self.effective_gbps

    def as_dict(self) -> dict:
        return asdict(self)


# ---------------------------------------------------------------------------- PCIe
# Per-x16 figures in GB/s per direction. Raw: PCIe base specs (8/16/32/64 GT/s, 128b/130b for
# Gen3-5, FLIT/PAM4 for Gen6). Effective: NCCL's src/graph/topo.h models PCI_BW = 12 GB/s for Gen3 x16,
# and the later generations scale it (24/48/96).
_PCIE_X16_GBYTES = {3: (15.75, 12.0), 4: (31.5, 24.0), 5: (63.0, 48.0), 6: (121.0, 96.0)}
# One PCIe hop (switch or root port traversal) is ~100-150 ns (Broadcom PEX datasheets quote
# ~100 ns cut-through latency); the link itself is a few ns. We charge 100 ns per PCIe link.
_PCIE_LATENCY_NS = 100.0
_PCIE_WIDTHS = (1, 2, 4, 8, 16)

# ---------------------------------------------------------------------------- NVLink
# Per link, GB/s per direction: raw = NVIDIA (A100: 12 links x 25 GB/s = 300 GB/s; H100: 18 links,
# 450 GB/s per direction; B200: 18 links, 900 GB/s). Effective = NCCL topo.h SM80_NVLINK_BW 20.0,
# SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1.
_NVLINK_LINK_GBYTES = {3: (25.0, 20.0), 4: (25.0, 20.6), 5: (50.0, 40.1)}
# NVLink/NVSwitch hop latency is a few hundred ns end to end; ~100 ns per link (NVIDIA GTC talks).
_NVLINK_LATENCY_NS = 100.0
# NVLink-C2C, Grace CPU <-> Blackwell GPU inside a GB200 superchip: 900 GB/s bidirectional =
# 450 GB/s per direction (https://www.nvidia.com/en-us/data-center/gb200-nvl72/ ; NVIDIA
# Grace Blackwell superchip brief). NCCL's topo.h has no planning figure for it, so the
# effective rate is the raw one (no overhead fraction is invented here).
_NVLINK_C2C_GBYTES = 450.0
_NVLINK_C2C_SOURCE = ("NVIDIA GB200 NVL72 page: NVLink-C2C 900 GB/s bidirectional per Grace-GPU "
                      "(https://www.nvidia.com/en-us/data-center/gb200-nvl72/); effective = raw")

# ---------------------------------------------------------------------------- inter-socket
# Effective GB/s: NCCL topo.h (SKL_QPI_BW 10, SRP_QPI_BW 22, ERP_QPI_BW 40, AMD Zen3/4 24, Zen5 32;
# Zen 2 uses NCCL's older generic AMD_BW 16). Raw GB/s per direction, summed
# over the socket-to-socket links: Intel datasheets (Skylake-SP 3 x UPI 10.4 GT/s = 62.4; SPR
# 4 x UPI 2.0 16 GT/s = 128; EMR 4 x 20 GT/s = 160); AMD (4 xGMI x16 links: Zen2/3 at 16 GT/s
# = 128, Zen4/5 at 32 GT/s = 256). Latency: ~100-150 ns extra for a remote access (vendor
# NUMA latency figures), charged here as 130 ns.
_INTER_SOCKET = {
    "upi-skylake": ("upi", "skylake", 62.4, 10.0),
    "upi-spr": ("upi", "spr", 128.0, 22.0),
    "upi-emr": ("upi", "emr", 160.0, 40.0),
    "xgmi-zen2": ("xgmi", "zen2", 128.0, 16.0),
    "xgmi-zen3": ("xgmi", "zen3", 128.0, 24.0),
    "xgmi-zen4": ("xgmi", "zen4", 256.0, 24.0),
    "xgmi-zen5": ("xgmi", "zen5", 256.0, 32.0),
}
_INTER_SOCKET_ALIASES = {"upi": "upi-spr", "xgmi": "xgmi-zen4"}
_INTER_SOCKET_LATENCY_NS = 130.0

# ---------------------------------------------------------------------------- memory
# GB/s per channel: DDR4-3200 = 25.6, DDR5-4800 = 38.4 (JEDEC: 64-bit channel x transfer rate).
# Effective ~80% of peak: STREAM typically sustains 75-85% of theoretical DRAM bandwidth.
# Latency: ~90 ns DRAM access (vendor figures for DDR4/DDR5 loaded-idle latency).
_DDR_CHANNEL_GBYTES = {4: 25.6, 5: 38.4}
_DDR_EFFECTIVE_FRACTION = 0.8
_DDR_LATENCY_NS = 90.0

# ---------------------------------------------------------------------------- network
# Gb/s per port (data rate after encoding/FEC; NCCL uses the port speed as is, so effective =
# raw). InfiniBand: EDR 100, HDR 200, NDR 400, XDR 800 per 4x port (IBTA).
# Latency: a few metres of cable (~5 ns/m) plus PHY/FEC; ~100 ns per link (switch forwarding is
# modelled by the latency module per hop, not here).
_NETWORK = {
    "eth100": ("ethernet", "100g", 100.0), "eth200": ("ethernet", "200g", 200.0),
    "eth400": ("ethernet", "400g", 400.0), "eth800": ("ethernet", "800g", 800.0),
    "ib-edr": ("infiniband", "edr", 100.0), "ib-hdr": ("infiniband", "hdr", 200.0),
    "ib-ndr": ("infiniband", "ndr", 400.0), "ib-xdr": ("infiniband", "xdr", 800.0),
}
_NETWORK_LATENCY_NS = 100.0

# ---------------------------------------------------------------------------- GPU fabrics (AMD)
# Infinity Fabric / xGMI links *between GPUs* (family ``xgmi``; the socket-to-socket xGMI above is
# ``inter_socket``). One link joins each pair of GPUs of an 8-GPU MI300X platform (a full mesh of
# 7 links per GPU, no switch). Raw 64 GB/s per direction per link ("128 GB/s bidirectional"), usable
# ~48 GB/s after CRC and protocol overhead: AMD ROCm blog "Understanding RCCL Bandwidth and xGMI
# Performance on AMD Instinct MI300X" (https://rocm.blogs.amd.com/software-tools-optimization/
# mi300x-rccl-xgmi/README.html); RCCL models the same 48 GB/s (ROCm/rccl src/graph/topo.h,
# GFX94X_XGMI_WIDTH 48.0). MI325X keeps the MI300X links (same 8-OAM platform, 896 GB/s of peer
# links per GPU = 7 x 128 GB/s: AMD Instinct MI325X platform data sheet), GFX94X in RCCL as well.
# Latency: one direct hop, charged like an NVLink hop (~100 ns).
_GPU_FABRIC = {
    "xgmi-mi300": ("mi300", 64.0, 48.0),
    "xgmi-mi325": ("mi325", 64.0, 48.0),
}
_GPU_FABRIC_SOURCE = ("AMD ROCm blog 'Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct "
                      "MI300X' (64 GB/s raw, ~48 GB/s usable per link); ROCm/rccl topo.h GFX94X_XGMI_WIDTH 48")


def _build_techs() -> dict[str, TechInfo]:
    techs: dict[str, TechInfo] = {}
    for gen, (raw16, eff16) in _PCIE_X16_GBYTES.items():
        for width in _PCIE_WIDTHS:
            name = f"pcie{gen}x{width}"
            techs[name] = TechInfo(name, "pcie", str(gen), width, raw16 * width / 16 * GBPS_PER_GBYTE,
                                   eff16 * width / 16 * GBPS_PER_GBYTE, _PCIE_LATENCY_NS,
                                   "PCIe base spec; NCCL topo.h (12 GB/s per Gen3 x16, scaled)")
    for gen, (raw, eff) in _NVLINK_LINK_GBYTES.items():
        for count in range(1, 19):
            name = f"nvlink{gen}x{count}"
            techs[name] = TechInfo(name, "nvlink", str(gen), count, raw * count * GBPS_PER_GBYTE,
                                   eff * count * GBPS_PER_GBYTE, _NVLINK_LATENCY_NS,
                                   "NVIDIA NVLink specs; NCCL topo.h SMxx_NVLINK_BW")
    for name, (kind, gen, raw, eff) in _INTER_SOCKET.items():
        techs[name] = TechInfo(name, "inter_socket", gen, 1, raw * GBPS_PER_GBYTE,
                               eff * GBPS_PER_GBYTE, _INTER_SOCKET_LATENCY_NS,
                               f"{kind.upper()} vendor specs; NCCL topo.h inter-socket BW")
    for alias, target in _INTER_SOCKET_ALIASES.items():
        t = techs[target]
        techs[alias] = TechInfo(alias, t.family, t.generation, 1, t.raw_gbps, t.effective_gbps,
                                t.latency_ns, t.source)
    for gen, per_channel in _DDR_CHANNEL_GBYTES.items():
        for channels in range(1, 17):
            name = f"ddr{gen}" if channels == 1 else f"ddr{gen}x{channels}"
            raw = per_channel * channels * GBPS_PER_GBYTE
            techs[name] = TechInfo(name, "memory", str(gen), channels, raw,
                                   raw * _DDR_EFFECTIVE_FRACTION, _DDR_LATENCY_NS,
                                   "JEDEC DDR4-3200 / DDR5-4800 per channel; ~80% sustained (STREAM)")
        techs[f"ddr{gen}x1"] = techs[f"ddr{gen}"]
    for name, (family, gen, gbps) in _NETWORK.items():
        techs[name] = TechInfo(name, family, gen, 1, gbps, gbps, _NETWORK_LATENCY_NS,
                               "IEEE 802.3 / IBTA port speeds")
    for name, (gen, raw, eff) in _GPU_FABRIC.items():
        techs[name] = TechInfo(name, "xgmi", gen, 1, raw * GBPS_PER_GBYTE, eff * GBPS_PER_GBYTE,
                               _NVLINK_LATENCY_NS, _GPU_FABRIC_SOURCE)
    c2c = _NVLINK_C2C_GBYTES * GBPS_PER_GBYTE
    techs["nvlink-c2c"] = TechInfo("nvlink-c2c", "nvlink", "c2c", 1, c2c, c2c, _NVLINK_LATENCY_NS,
                                   _NVLINK_C2C_SOURCE)
    return techs


TECHS: dict[str, TechInfo] = _build_techs()

# ---------------------------------------------------------------------------- measured figures
# PCIe x16 copies between host memory and a GPU, GB/s, by who measured what. "h2d"/"d2h": one
# direction alone; "duplex_total": both directions at once (the sum — a shared budget, below the
# 2 × one-way a full-duplex link would allow).
PCIE_MEASURED_GBYTES = {
    "pcie4x16": {
        "h2d": (25.13, "NVIDIA/nvbandwidth#42: A100-SXM4-40GB host_to_device_memcpy_sm, 512 MiB-1 GiB"),
        "d2h": (25.0, "NVIDIA/nvbandwidth#53: A100-SXM4-80GB, D2H ~25 GB/s (kept when both run)"),
        "duplex_total": (36.0, "NVIDIA/nvbandwidth#53: bidirectional H2D ~11 + D2H ~25 GB/s"),
    },
    "pcie5x16": {
        "h2d": (35.2, "NVIDIA/nvbandwidth#24: H100 host_to_device_memcpy_sm 35.0-35.4 GB/s"),
        "d2h": (52.77, "NVIDIA/nvbandwidth#24: H100 device_to_host_memcpy_sm 52.76-52.78 GB/s"),
    },
}

# GPU-pair copy rates over NVLink (one direction, and both at once), GB/s.
NVLINK_MEASURED_GBYTES = {
    3: {"one_way": (230.0, "NVIDIA/nccl-tests#149 (sjeaugey): A100 12 NVLinks reach ~230 GB/s from SMs")},
    4: {"one_way": (380.0, "NVIDIA/nccl#1264: H100 SXM p2pBandwidthLatencyTest unidirectional ~380 GB/s"),
        "duplex_total": (749.0, "NVIDIA/nccl#1264: bidirectional 742-749 GB/s")},
}

# NIC models: port speed and the rate NCCL / perftest reach through one port, Gb/s per direction.
NIC_MODELS = {
    "ConnectX-6": {"port_gbps": 200.0, "host": "pcie4x16", "effective_gbps": 192.0,
                   "source": "NVIDIA/nccl-tests#119 (sjeaugey): 24 GB/s is the peak per 200G NIC "
                             "(12 GB/s per 100G NIC)"},
    "ConnectX-7": {"port_gbps": 400.0, "host": "pcie5x16", "effective_gbps": 388.0,
                   "roce_effective_gbps": 392.0,
                   "source": "NVIDIA/nccl-tests#267 (AddyLaddy): CX-7 at NDR should reach 48-49 GB/s per NIC; "
                             "NVIDIA/nccl#2409: perftest 392 Gb/s on CX-7 400G RoCEv2"},
    "EFA": {"port_gbps": 100.0, "host": "pcie4x8", "effective_gbps": 100.0,
            "source": "AWS p4d (4 x 100 Gb/s EFA) and p5 (32 x 100 Gb/s EFA) instance pages; no per-NIC "
                      "NCCL figure found, so effective = port speed"},
    # 800G and current NICs. ConnectX-8 SuperNIC: one 800 Gb/s port (XDR InfiniBand or
    # 800GbE), PCIe Gen6 x16 host interface with an integrated PCIe Gen6 switch (48 lanes).
    "ConnectX-8": {"port_gbps": 800.0, "host": "pcie6x16", "effective_gbps": 800.0,
                   "source": "NVIDIA ConnectX-8 SuperNIC product page (800 Gb/s, PCIe Gen6 x16, integrated "
                             "PCIe Gen6 switch: https://www.nvidia.com/en-us/networking/products/ethernet/"
                             "supernic/connectx-8/); no published per-NIC NCCL/perftest figure found, so "
                             "effective = port speed"},
    # BlueField-3 DPU: its network controller is a ConnectX-7 (pci.ids 15b3:a2dc "BlueField-3
    # integrated ConnectX-7 network controller"; DOCA docs: BlueField-3 network interfaces are
    # ConnectX-7 compatible), so it carries the ConnectX-7 measured rates; 400 Gb/s per card.
    "BlueField-3": {"port_gbps": 400.0, "host": "pcie5x16", "effective_gbps": 388.0,
                    "roce_effective_gbps": 392.0,
                    "source": "DGX B200 user guide (2 x dual-port BlueField-3, up to 400 Gb/s: https://docs."
                              "nvidia.com/dgx/dgxb200-user-guide/introduction-to-dgxb200.html); rates of its "
                              "ConnectX-7 core: NVIDIA/nccl-tests#267, NVIDIA/nccl#2409"},
    # EFA v3 (p5en): 16 devices x 200 Gb/s = 3,200 Gb/s per instance.
    "EFAv3": {"port_gbps": 200.0, "host": "pcie5x8", "effective_gbps": 200.0,
              "source": "AWS P5 instance page (p5en.48xlarge: 3,200 Gbps EFAv3, https://aws.amazon.com/ec2/"
                        "instance-types/p5/); 16 EFA devices (meta-pytorch/torchx#995 p5en devices "
                        "EFA_DEVICE 16); no per-NIC NCCL figure found, so effective = port speed"},
}

# The network latency a NIC's NCCL net plugin reports (``ncclNetProperties_t.latency``, µs). NCCL's
# tuner adds it to every step across hosts, twice under Simple ("the flush extra latency":
# src/graph/tuning.cc, ``interLat += graphs[a]->latencyInter``). NVIDIA's own IB/RoCE transport
# and Google's TCPX plugin report 0; AWS's aws-ofi-nccl reports a per-platform figure for EFA,
# which carries the libfabric/SRD software path and the proxy's completion handling that a
# verbs NIC does not have (its tuner notes "overheads from libfabric and NCCL's proxy thread").
NET_PLUGIN_LATENCY_US = {
    "EFA": (75.0, "aws/aws-ofi-nccl src/platform-aws.cpp platform_data_map: p4d.24xlarge, p4de.24xlarge and "
                  "p5/p5e .latency = 75.0 (commit 01666ec)"),
    "EFAv3": (35.0, "aws/aws-ofi-nccl src/platform-aws.cpp: the p-series entry (p5en.48xlarge, p6 and later) "
                    ".latency = 35.0, \"based on an empirical search\" (aws/aws-ofi-nccl#901)"),
}


def net_plugin_latency_us(model: str | None) -> float:
    """Network latency (µs) the NIC model's NCCL net plugin reports (:data:`NET_PLUGIN_LATENCY_US`);
    0 for verbs NICs (NCCL's IB/RoCE transport reports none) and unknown models."""
    entry = NET_PLUGIN_LATENCY_US.get(model or "")
    return entry[0] if entry else 0.0


# Link techs of a NIC port by model (raw = port speed, effective = the measured figure above).
_NIC_MODEL_TECHS = {
    "cx6-ib-hdr": ("infiniband", "hdr", "ConnectX-6", "effective_gbps"),
    "cx6-roce-200": ("ethernet", "200g", "ConnectX-6", "effective_gbps"),
    "cx7-ib-ndr": ("infiniband", "ndr", "ConnectX-7", "effective_gbps"),
    "cx7-roce-400": ("ethernet", "400g", "ConnectX-7", "roce_effective_gbps"),
    "efa-100": ("ethernet", "100g", "EFA", "effective_gbps"),
    "cx8-ib-xdr": ("infiniband", "xdr", "ConnectX-8", "effective_gbps"),
    "cx8-roce-800": ("ethernet", "800g", "ConnectX-8", "effective_gbps"),
    "bf3-ib-ndr": ("infiniband", "ndr", "BlueField-3", "effective_gbps"),
    "bf3-roce-400": ("ethernet", "400g", "BlueField-3", "roce_effective_gbps"),
    "efa-200": ("ethernet", "200g", "EFAv3", "effective_gbps"),
}


def _nic_model_techs() -> dict[str, TechInfo]:
    out = {}
    for name, (family, gen, model, key) in _NIC_MODEL_TECHS.items():
        m = NIC_MODELS[model]
        out[name] = TechInfo(name, family, gen, 1, m["port_gbps"], m[key], _NETWORK_LATENCY_NS, m["source"])
    return out


TECHS.update(_nic_model_techs())


def gpu_direction_capacities(tech: str, gpu_end: str) -> dict:
    """Measured per-direction capacities (Gb/s) of a PCIe link with a GPU at ``gpu_end``.

    Returns ``{"capacity_ab_gbps": .., "capacity_ba_gbps": ..}`` for a document link (toward the
    GPU = host→device, ``h2d``; away from it = ``d2h``), or ``{}`` when nothing was measured for
    ``tech``. Not applied by default: the measured H2D figure is an SM copy *reading* host memory,
    while a NIC delivering into the GPU moves data by posted writes across the same link direction
    at the NCCL planning rate (2-node nccl-tests reach ~48 GB/s per H100 NIC), so one rate per
    link direction cannot serve both; opt in per link for host-memory copy studies.

    Raises
    ------
    ValueError
        ``gpu_end`` is not ``"a"`` or ``"b"``.
    """
    if gpu_end not in ("a", "b"):
        raise ValueError('gpu_end must be "a" or "b"')
    measured = PCIE_MEASURED_GBYTES.get(tech, {})
    if "h2d" not in measured or "d2h" not in measured:
        return {}
    to_gpu, from_gpu = measured["h2d"][0] * GBPS_PER_GBYTE, measured["d2h"][0] * GBPS_PER_GBYTE
    ab, ba = (from_gpu, to_gpu) if gpu_end == "a" else (to_gpu, from_gpu)
    return {"capacity_ab_gbps": ab, "capacity_ba_gbps": ba}

# Node kinds with what they model. ``default_capacity_gbps`` is None where a node is not a
# resource by default; templates set a capacity where one matters (e.g. a root complex).
NODE_KINDS: dict[str, dict] = {
    "gpu": {"description": "GPU (endpoint; forwards only as an explicit PXN relay). GPUs join NVSwitches, "
                           "or each other directly: NVLink, or AMD Infinity Fabric (xgmi-* techs, no switch)",
            "default_capacity_gbps": None},
    "cpu": {"description": "CPU socket or one of its PCIe root complexes / host bridges "
                           "(attrs.socket; attrs.role socket|root_complex)",
            "default_capacity_gbps": None},
    "memory": {"description": "host DRAM of one socket (endpoint)", "default_capacity_gbps": None},
    "pcie_switch": {"description": "PCIe switch (forwards host traffic)", "default_capacity_gbps": None},
    "nvswitch": {"description": "NVSwitch chip (forwards NVLink traffic)", "default_capacity_gbps": None},
    "nic": {"description": "network adapter (attrs.rail, port_gbps, role compute|storage)",
            "default_capacity_gbps": None},
    "nvme": {"description": "NVMe drive (endpoint)", "default_capacity_gbps": None},
    "switch": {"description": "fabric switch (attrs.role tor|leaf|spine|core, attrs.rail)",
               "default_capacity_gbps": None},
    "storage": {"description": "remote storage server attached to the fabric (endpoint)",
                "default_capacity_gbps": None},
}

GROUP_KINDS: dict[str, str] = {
    "host": "one server", "rack": "a rack of servers", "pod": "a pod / scalable unit",
    "row": "a row of racks", "cluster": "a whole cluster", "plane": "a network plane or rail",
    "nvlink_domain": "GPUs of several hosts (trays) sharing one NVLink switch fabric (GB200 NVL72)",
    "nvlink_switch_tray": "an NVLink-switch tray: the NVSwitch chips of a rack-scale NVLink domain",
    "other": "anything else",
}


def tech_info(name: str) -> TechInfo:
    """Catalog entry of ``name``.

    Raises
    ------
    KeyError
        When ``name`` is not in the catalog (the message lists close names).
    """
    try:
        return TECHS[name]
    except KeyError:
        import difflib

        close = difflib.get_close_matches(str(name), list(TECHS), n=4, cutoff=0.6)
        hint = f" (did you mean {', '.join(close)}?)" if close else ""
        raise KeyError(f"unknown link technology {name!r}{hint}") from None


def catalog_as_dict() -> dict:
    """The whole catalog as JSON-ready data (for the REST API): techs, node kinds, group kinds,
    measured figures, NIC models and GPU compute figures (``gpus``, :data:`GPU_COMPUTE`)."""
    return {"basis_default": DEFAULT_BASIS, "units": {"capacity": "Gb/s per direction", "latency": "ns"},
            "techs": {name: t.as_dict() for name, t in TECHS.items()},
            "node_kinds": {k: dict(v) for k, v in NODE_KINDS.items()},
            "group_kinds": dict(GROUP_KINDS),
            "measured": {"pcie_gbytes": _measured_json(PCIE_MEASURED_GBYTES),
                         "nvlink_gbytes": _measured_json(NVLINK_MEASURED_GBYTES)},
            "nic_models": {k: dict(v) for k, v in NIC_MODELS.items()},
            "gpus": {k: asdict(v) for k, v in GPU_COMPUTE.items()}}


def _measured_json(table: dict) -> dict:
    return {str(k): {what: {"value": v, "source": src} for what, (v, src) in row.items()} for k, row in table.items()}


# ---- collectives: NVSwitch generation and NVLS figures live in catalog_nvswitch.py ----------------
from designer.engine.catalog_nvswitch import (  # noqa: E402,F401  (re-exported: callers read catalog.*)
    NVLS_BUS_GBYTES, NVLS_CHANNELS, NVLS_CHANNELS_MULTI_NODE, NVLS_EFFICIENCY, NVSWITCH_GEN_BY_NVLINK,
    SHARP_ATTR, nvls_bus_gbytes, nvls_channels, nvls_efficiency, nvswitch_generation)


# ---- switch models ---------------------------------------------------------------------------------
# Fabric switches the generators build from (fabrics.py) and the bill of materials counts (bom.py).
# Owned by the fabrics work; the link rates above and the collectives section are not touched here.
# A model has one native port mode and breakout modes (the same SerDes lanes regrouped into more,
# slower ports: a 51.2 Tb/s chip is 64 x 800G, 128 x 400G or 256 x 200G). ``tech`` is the link
# family ("ethernet" or "infiniband"). Ids are generic; the vendor class is only a note.
# Power: typical system watts as the vendor states them, *without* optics. The figures below were
# not found in the stored reference pages and are marked as such: treat them as order-of-magnitude
# planning values until checked against the linked datasheet.
@dataclass(frozen=True)
class SwitchModel:
    """One fabric switch model.

    Attributes
    ----------
    id : str
        Catalog id (``eth-51t2``).
    name : str
        Human name (``51.2 Tb/s Ethernet, 64 x 800G``).
    tech : str
        ``ethernet`` or ``infiniband``.
    radix, port_gbps : int, float
        Native ports and their rate, Gb/s.
    breakouts : tuple of (int, float)
        Other (ports, Gb/s) modes of the same switch, native first excluded.
    power_w : float
        Typical power of the switch without optics, W.
    power_source : str
        Where ``power_w`` comes from (URL, with a note when it is unverified).
    vendor_class : str
        Products of this class (a note, not a dependency).
    """

    id: str
    name: str
    tech: str
    radix: int
    port_gbps: float
    breakouts: tuple
    power_w: float
    power_source: str
    vendor_class: str

    def modes(self) -> list[tuple[int, float]]:
        """Every (ports, Gb/s) mode, native first."""
        return [(self.radix, self.port_gbps), *self.breakouts]

    def mode_for(self, gbps: float) -> tuple[int, float] | None:
        """The (ports, Gb/s) mode whose port rate is ``gbps``, or None."""
        return next((m for m in self.modes() if abs(m[1] - gbps) < 1e-9), None)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["breakouts"] = [{"ports": p, "port_gbps": g} for p, g in self.breakouts]
        d["capacity_tbps"] = self.radix * self.port_gbps / 1000
        return d


_UNVERIFIED = " (typical figure; not found in the stored pages, check the datasheet)"
SWITCH_MODELS: dict[str, SwitchModel] = {m.id: m for m in (
    # Broadcom Tomahawk 5 / NVIDIA Spectrum-4 class: 51.2 Tb/s, 64 OSFP 800G ports (SN5600 breaks out to
    # 256 x 100/200G: https://docs.nvidia.com/networking/display/sn5000/speed+and+switching+capabilities)
    SwitchModel("eth-51t2", "51.2 Tb/s Ethernet, 64 x 800G", "ethernet", 64, 800.0,
                ((128, 400.0), (256, 200.0), (512, 100.0)), 1100.0,
                "https://www.nvidia.com/en-us/networking/ethernet-switching/spectrum-sn5000/" + _UNVERIFIED,
                "Broadcom Tomahawk 5 / NVIDIA Spectrum-4 (SN5600, the switch of the Spectrum-X800 "
                "platform: 64 x 800G) class"),
    # Broadcom Tomahawk 4 / NVIDIA Spectrum-3 SN4700 class: 25.6 Tb/s, 64 x 400G in 2U (or 32 x 800G)
    SwitchModel("eth-25t6", "25.6 Tb/s Ethernet, 64 x 400G", "ethernet", 64, 400.0,
                ((128, 200.0), (256, 100.0)), 650.0,
                "https://www.nvidia.com/en-us/networking/ethernet-switching/spectrum-sn4000/" + _UNVERIFIED,
                "Broadcom Tomahawk 4 class"),
    # NVIDIA Quantum-2 QM9700 class: 64 NDR 400G ports on 32 OSFP cages, each cage 2 logical ports, NDR200
    # split gives 128 x 200G (https://docs.nvidia.com/networking/display/QM97X0PUB/Interfaces)
    SwitchModel("ib-ndr-64", "InfiniBand NDR, 64 x 400G", "infiniband", 64, 400.0,
                ((128, 200.0),), 750.0,
                "https://docs.nvidia.com/networking/display/QM97X0PUB/Specifications" + _UNVERIFIED,
                "NVIDIA Quantum-2 QM9700 / QM9790 class"),
    # NVIDIA Quantum-X800 Q3400 class: 144 XDR 800G ports, 200G-per-lane SerDes
    # (https://quantum-computing.news/what-is-nvidia-quantum-x800-how-it-works/); 400G split assumed
    SwitchModel("ib-xdr-144", "InfiniBand XDR, 144 x 800G", "infiniband", 144, 800.0,
                ((288, 400.0),), 3000.0,
                "https://www.nvidia.com/en-us/networking/products/infiniband/quantum-x800/" + _UNVERIFIED,
                "NVIDIA Quantum-X800 (Q3400) class"),
)}
# Catalog link tech of one port of a switch family at a rate (host links and switch links).
SWITCH_PORT_TECH = {("ethernet", 100.0): "eth100", ("ethernet", 200.0): "eth200",
                    ("ethernet", 400.0): "eth400", ("ethernet", 800.0): "eth800",
                    ("infiniband", 100.0): "ib-edr", ("infiniband", 200.0): "ib-hdr",
                    ("infiniband", 400.0): "ib-ndr", ("infiniband", 800.0): "ib-xdr"}
__all__ += ["SwitchModel", "SWITCH_MODELS", "SWITCH_PORT_TECH"]


@dataclass(frozen=True)
class GpuCompute:
    """Published per-GPU figures job templates time compute and decode with: ``bf16_tflops``,
    ``fp8_tflops`` (dense tensor-core peak without sparsity, TFLOPS; None without FP8 tensor
    cores), ``hbm_gbytes_s`` (HBM bandwidth, GB/s: decode reads every weight once per token) and
    the vendor datasheet they come from (``source``)."""
    bf16_tflops: float
    fp8_tflops: float | None
    hbm_gbytes_s: float
    source: str


# Vendors quote the sparse figure first; the dense one is half of it. NVIDIA's Blackwell pages
# quote a whole system (8 GPUs for HGX, 72 for NVL72), divided here per GPU.
GPU_COMPUTE: dict[str, GpuCompute] = {
    "a100": GpuCompute(312.0, None, 2039.0, "https://www.nvidia.com/en-us/data-center/a100/ (A100 80GB SXM: "
                       "BF16 312 TFLOPS dense, 2,039 GB/s)"),
    "h100": GpuCompute(989.0, 1979.0, 3350.0, "https://www.nvidia.com/en-us/data-center/h100/ (H100 SXM: BF16 "
                       "1,979 / FP8 3,958 TFLOPS with sparsity, 3.35 TB/s)"),
    "h200": GpuCompute(989.0, 1979.0, 4800.0, "https://www.nvidia.com/en-us/data-center/h200/ (H200 SXM: BF16 "
                       "1,979 / FP8 3,958 TFLOPS with sparsity, 4.8 TB/s)"),
    "b200": GpuCompute(2250.0, 4500.0, 7700.0, "https://www.nvidia.com/en-us/data-center/hgx/ (HGX B200, 8 GPUs: "
                       "FP16/BF16 36 / FP8 72 PFLOPS with sparsity; per GPU 7.7 TB/s)"),
    "gb200": GpuCompute(2500.0, 5000.0, 8000.0, "https://www.nvidia.com/en-us/data-center/gb200-nvl72/ (72 GPUs: "
                        "FP16/BF16 360 / FP8 720 PFLOPS with sparsity, 576 TB/s)"),
    "b300": GpuCompute(2250.0, 4500.0, 7700.0, "https://www.nvidia.com/en-us/data-center/hgx/ (HGX B300, 8 GPUs: "
                       "FP16/BF16 36 / FP8 72 PFLOPS with sparsity; per GPU 7.7 TB/s)"),
    "gb300": GpuCompute(2500.0, 5000.0, 8000.0, "https://www.nvidia.com/en-us/data-center/gb300-nvl72/ (72 GPUs: "
                        "FP16/BF16 360 / FP8 720 PFLOPS with sparsity, 576 TB/s)"),
    "h800": GpuCompute(989.0, 1979.0, 3350.0, "https://www.philisun.com/technical-analysis/nvidia-h800-vs-h100-a-"
                       "technical-deep-dive-into-politically-defined-ai-chips/ (H100 compute, NVLink cut)"),
    "h20": GpuCompute(148.0, 296.0, 4000.0, "https://willitrunai.com/es/gpus/h20-96gb (H20: 96 GB HBM3 at "
                      "4.0 TB/s, 148 TFLOPS FP16 dense; NVIDIA publishes no H20 datasheet page)"),
    "gh200": GpuCompute(989.0, 1979.0, 4000.0, "https://www.nvidia.com/en-us/data-center/grace-hopper-superchip/ "
                        "(GH200: H100-class FP8 3,958 TFLOPS with sparsity; 96 GB HBM3 at 4 TB/s)"),
    "mi300x": GpuCompute(1307.4, 2614.9, 5300.0, "https://www.amd.com/en/products/accelerators/instinct/mi300/"
                         "mi300x.html (BF16 1,307.4 / FP8 2,614.9 TFLOPS dense, 5.3 TB/s)"),
    "mi325x": GpuCompute(1307.4, 2614.9, 6000.0, "https://www.amd.com/en/products/accelerators/instinct/mi300/"
                         "mi325x.html (BF16 1,307.4 / FP8 2,614.9 TFLOPS dense, 6 TB/s)"),
}
__all__ += ["GpuCompute", "GPU_COMPUTE"]

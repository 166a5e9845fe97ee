"""Catalog of link technologies and node kinds: the figures a topology document defaults from.

Every technology has a *raw* line rate and an *effective* rate (what is left after protocol
overhead, as NCCL models it in ``src/graph/topo.h``), both in **Gb/s per direction** (links are
full duplex), and a default one-way latency in ns. REFERENCE.md quotes most figures in GB/s; they
are multiplied by 8 here. The default basis is ``"effective"``: a document's link takes its
``capacity_gbps`` from the effective figure unless it says ``"capacity_basis": "raw"``.

Names
-----
- PCIe: ``pcie{gen}x{width}``, gen 3..6, width 1, 2, 4, 8, 16 (``pcie4x16``, ``pcie5x8``).
- NVLink: ``nvlink{gen}x{links}``, gen 3..5, links 1..18 (``nvlink3x12``, ``nvlink4x18``).
- Inter-socket: ``upi-skylake``, ``upi-spr``, ``upi-emr``, ``xgmi-zen2``, ``xgmi-zen3``,
  ``xgmi-zen4``, ``xgmi-zen5``; ``upi`` and ``xgmi`` are the Sapphire Rapids / Zen 4 figures.
- Memory: ``ddr4``/``ddr5`` (one channel) and ``ddr4x{n}``/``ddr5x{n}``, n 1..16 channels.
- Network: ``eth100 eth200 eth400 eth800``, ``ib-edr ib-hdr ib-ndr ib-xdr``.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

__all__ = ["TechInfo", "TECHS", "NODE_KINDS", "GROUP_KINDS", "DEFAULT_BASIS", "tech_info",
           "catalog_as_dict", "GBPS_PER_GBYTE"]

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
        ``pcie``, ``nvlink``, ``inter_socket``, ``memory``, ``ethernet`` or ``infiniband``.
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
# Gen3-5, FLIT/PAM4 for Gen6) as in REFERENCE.md. Effective: NCCL topo.h models PCI_BW = 12 GB/s
# for Gen3 x16 and scales by generation (24/48/96) — REFERENCE.md.
_PCIE_X16_GBYTES = {3: (15.75, 12.0), 4: (31.5, 24.0), 5: (63.0, 48.0), 6: (121.0, 96.0)}
# One PCIe hop (switch or root port traversal) is ~100-150 ns (Broadcom PEX datasheets quote
# ~100 ns cut-through latency); the link itself is a few ns. We charge 100 ns per PCIe link.
_PCIE_LATENCY_NS = 100.0
_PCIE_WIDTHS = (1, 2, 4, 8, 16)

# ---------------------------------------------------------------------------- NVLink
# Per link, GB/s per direction: raw = NVIDIA (A100: 12 links x 25 GB/s = 300 GB/s; H100: 18 links,
# 450 GB/s per direction; B200: 18 links, 900 GB/s). Effective = NCCL topo.h SM80_NVLINK_BW 20.0,
# SM90_NVLINK_BW 20.6, SM100_NVLINK_BW 40.1 (REFERENCE.md).
_NVLINK_LINK_GBYTES = {3: (25.0, 20.0), 4: (25.0, 20.6), 5: (50.0, 40.1)}
# NVLink/NVSwitch hop latency is a few hundred ns end to end; ~100 ns per link (NVIDIA GTC talks).
_NVLINK_LATENCY_NS = 100.0

# ---------------------------------------------------------------------------- inter-socket
# Effective GB/s: NCCL topo.h (SKL_QPI_BW 10, SRP_QPI_BW 22, ERP_QPI_BW 40, AMD Zen3/4 24, Zen5 32
# as in REFERENCE.md; Zen 2 uses NCCL's older generic AMD_BW 16). Raw GB/s per direction, summed
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
# raw). InfiniBand: EDR 100, HDR 200, NDR 400, XDR 800 per 4x port (REFERENCE.md / IBTA).
# Latency: a few metres of cable (~5 ns/m) plus PHY/FEC; ~100 ns per link (switch forwarding is
# modelled by the latency module per hop, not here).
_NETWORK = {
    "eth100": ("ethernet", "100g", 100.0), "eth200": ("ethernet", "200g", 200.0),
    "eth400": ("ethernet", "400g", 400.0), "eth800": ("ethernet", "800g", 800.0),
    "ib-edr": ("infiniband", "edr", 100.0), "ib-hdr": ("infiniband", "hdr", 200.0),
    "ib-ndr": ("infiniband", "ndr", 400.0), "ib-xdr": ("infiniband", "xdr", 800.0),
}
_NETWORK_LATENCY_NS = 100.0


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
    return techs


TECHS: dict[str, TechInfo] = _build_techs()

# Node kinds with what they model. ``default_capacity_gbps`` is None where a node is not a
# resource by default; templates set a capacity where one matters (e.g. a root complex).
NODE_KINDS: dict[str, dict] = {
    "gpu": {"description": "GPU (endpoint; forwards only as an explicit PXN relay)",
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
    """The whole catalog as JSON-ready data (for the REST API): techs, node kinds, group kinds."""
    return {"basis_default": DEFAULT_BASIS, "units": {"capacity": "Gb/s per direction", "latency": "ns"},
            "techs": {name: t.as_dict() for name, t in TECHS.items()},
            "node_kinds": {k: dict(v) for k, v in NODE_KINDS.items()},
            "group_kinds": dict(GROUP_KINDS)}

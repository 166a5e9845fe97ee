"""Rack-scale system templates: several hosts (trays) sharing one NVLink domain (GB200 NVL72).

A rack-scale template is a ``fabricscope.host-template/1`` spec with three extra keys that
:func:`designer.engine.model.templates.build_host` understands:

- ``kind``: the kind of the instance's top group, here ``nvlink_domain`` (not ``host``): the
  system is one NVLink domain made of several hosts;
- ``groups``: sub-groups with local ids (``tray3``, kind ``host``; ``nvs4``, kind
  ``nvlink_switch_tray``), each node naming its sub-group in ``group``;
- ``rack_scale`` (the system fills a rack: the fabric generator puts one per rack) and ``rails``
  (compute NICs per tray: the default rail count of a rail-optimized fabric).

Built as ``h0`` the GB200 NVL72 gives::

    rack0 (rack)
    └── h0 (nvlink_domain, template gb200-nvl72)
        ├── h0/tray0 … h0/tray17 (host: one OS image each)
        │     cpu0 cpu1 (Grace) ── mem0 mem1 (LPDDR5X)
        │     gpu0 gpu1 ─C2C─ cpu0,  gpu2 gpu3 ─C2C─ cpu1
        │     nic0 nic1 ─PCIe─ cpu0, nic2 nic3 ─PCIe─ cpu1  (ConnectX-7, rails 0-3)
        │     nic4 ─ cpu0, nic5 ─ cpu1                      (BlueField-3, storage / in-band)
        └── h0/nvs0 … h0/nvs8 (nvlink_switch_tray): nvswitch0, nvswitch1
              every GPU of every tray ─ one NVLink 5 link ─ every one of the 18 NVSwitch chips

Routing keeps GPU⇄GPU traffic of one domain on NVLink, across trays too
(:mod:`designer.engine.routing.domain`); traffic between domains leaves through the trays' NICs.
"""
from __future__ import annotations

from designer.engine.errors import InvalidTopology, Problem
from designer.engine.model.host_spec import SpecBuilder

__all__ = ["rack_fabric_nics", "RACK_BUILDERS", "RACK_PARAM_HELP", "NVL72_TRAYS", "NVL72_SWITCH_TRAYS",
           "NVSWITCH_CHIPS_PER_TRAY", "GPUS_PER_TRAY", "domain_links_per_gpu"]

# ---------------------------------------------------------------------------- published facts
# DGX GB200 user guide, "Rack Configuration" / "Compute Trays"
# (https://docs.nvidia.com/dgx/dgxgb200-user-guide/hardware.html): 18 x 1RU compute trays, each
# 2 Grace CPUs and 4 Blackwell GPUs; 9 x 1RU NVLink switch trays; cluster network 4 x
# ConnectX-7 single-port 400G OSFP per tray; storage/management 2 x BlueField-3 per tray.
# Multi-node tuning guide (https://docs.nvidia.com/multi-node-nvlink-systems/multi-node-tuning-guide/
# system.html): the 72x1 configuration, 18 compute trays + 9 NVL72 NVLink switch trays; BF-3
# NICs carry the external (400G ports) and in-band (200G) networks.
NVL72_TRAYS = 18
NVL72_SWITCH_TRAYS = 9
GPUS_PER_TRAY = 4
# Two NVLink 5 switch ASICs per switch tray ("Each Switch tray contains two NVLink5 ASICs",
# https://setloop.io/blog/gb200-nvl72-architecture), 72 NVLink 5 ports each: one port per GPU
# of the rack. So a GPU has 18 NVLink 5 links, one to each chip: 18 x 50 GB/s = 900 GB/s per
# direction, the 1.8 TB/s bidirectional per GPU of https://www.nvidia.com/en-us/data-center/gb200-nvl72/.
NVSWITCH_CHIPS_PER_TRAY = 2
# GB200 NVL72 spec table (https://www.nvidia.com/en-us/data-center/gb200-nvl72/): CPU memory up to
# 17 TB LPDDR5X at up to 18.4 TB/s for the 36 Grace CPUs -> 18.4 / 36 = 0.511 TB/s per Grace.
GRACE_MEMORY_GBYTES = 18_400.0 / 36
GRACE_MEMORY_LATENCY_NS = 90.0   # DRAM access, as catalog ddr* (no LPDDR5X figure published)
# ConnectX-7 and BlueField-3 are PCIe Gen5 x16 devices (NVIDIA ConnectX-7 / BlueField-3 product
# briefs); on the Grace side they sit on its PCIe Gen5 root ports. Which Grace holds which NIC is
# not in the stored documents: two ConnectX-7 and one BlueField-3 per Grace (the GPUs 0,1 and
# 2,3 halves of the tray, NUMA nodes 0 and 1 — NVIDIA srt-slurm#164), so each GPU's nearest NIC
# is on its own Grace.
NIC_PCIE_TECH = "pcie5x16"


def rack_fabric_nics(spec: dict, nics: list[dict], rails: int | None) -> tuple[list[dict], int, int]:
    """How the fabric generator wires a rack-scale system: its compute NICs tray-major (tray 0
    rails 0-3, tray 1 rails 0-3, …) so that NIC ``i`` lands on rail ``i % rails``, the rail
    count (default the NICs per tray, ``spec["rails"]``) and one system per rack.

    Returns
    -------
    (list of dict, int, int)
        Ordered NIC nodes, rails, hosts per rack (always 1: the system is the rack).
    """
    ordered = sorted(nics, key=lambda n: n["attrs"].get("tray", 0))  # stable: rail order kept per tray
    return ordered, rails or int(spec.get("rails") or len(nics)), 1


def domain_links_per_gpu(switch_trays: int = NVL72_SWITCH_TRAYS) -> int:
    """NVLink links per GPU in a rack of ``switch_trays`` switch trays (one per NVSwitch chip)."""
    return switch_trays * NVSWITCH_CHIPS_PER_TRAY


def _tray(b, t: int, gpu_model: str, nic_gbps: float, nic_model: str) -> None:
    """Compute tray ``tray{t}``: 2 Grace + 4 GPUs (C2C), 4 compute NICs, 2 BlueField-3."""
    p = f"tray{t}/"
    for s in range(2):
        b.node(f"{p}cpu{s}", "cpu", None, socket=s, role="socket", model="NVIDIA Grace", tray=t)
        b.node(f"{p}mem{s}", "memory", None, socket=s, tray=t)
        b.link(f"{p}cpu{s}", f"{p}mem{s}", None, GRACE_MEMORY_GBYTES * 8, GRACE_MEMORY_LATENCY_NS)
    # One OS spans both Graces (NUMA nodes 0 and 1, srt-slurm#164), so they are joined coherently;
    # taken as NVLink-C2C like the Grace CPU Superchip's Grace<->Grace link (an assumption: no
    # published figure for the GB200 tray itself).
    b.link(f"{p}cpu0", f"{p}cpu1", "nvlink-c2c")
    for k in range(GPUS_PER_TRAY):
        s = k // 2
        b.node(f"{p}gpu{k}", "gpu", None, model=gpu_model, index=k, socket=s, tray=t,
               domain_index=GPUS_PER_TRAY * t + k)
        b.link(f"{p}gpu{k}", f"{p}cpu{s}", "nvlink-c2c")
        b.node(f"{p}nic{k}", "nic", None, port_gbps=float(nic_gbps), role="compute", socket=s, model=nic_model,
               rail=k)
        b.link(f"{p}nic{k}", f"{p}cpu{s}", NIC_PCIE_TECH)
    for s in range(2):
        b.node(f"{p}nic{GPUS_PER_TRAY + s}", "nic", None, port_gbps=400.0, role="storage", socket=s,
               model="BlueField-3", ports=2)
        b.link(f"{p}nic{GPUS_PER_TRAY + s}", f"{p}cpu{s}", NIC_PCIE_TECH)
    for node in b.spec["nodes"]:
        if node["local"].startswith(p):
            node["group"] = f"tray{t}"
            node["attrs"].setdefault("tray", t)


def _gb200_nvl72(trays: int = NVL72_TRAYS, switch_trays: int = NVL72_SWITCH_TRAYS,
                 gpu_model: str = "B200 (GB200)", nic_gbps: float = 400, nic_model: str = "ConnectX-7") -> dict:
    """GB200 NVL72: 18 compute trays (2 Grace + 4 B200 each, NVLink-C2C), 9 NVLink-switch trays.

    One NVLink domain of ``4 × trays`` GPUs: every GPU has one NVLink 5 link to each of the
    ``2 × switch_trays`` NVSwitch gen-4 chips (18 links, 900 GB/s per direction). Each tray is a
    host with 4 ConnectX-7 400G compute NICs (rails 0-3, two per Grace on PCIe Gen5 x16) and 2
    BlueField-3 (storage / in-band role). ``trays`` / ``switch_trays`` below 18 / 9 model a
    partly populated rack (tests, what-ifs); ``nic_gbps=800, nic_model="ConnectX-8"`` the GB300
    NVL72 trays' NICs (NVIDIA NVL72 AI factory RA: 4 ConnectX-8 per GB300 tray).
    """
    for name, value in (("trays", trays), ("switch_trays", switch_trays)):
        if value < 1:
            raise InvalidTopology(f"{name} must be at least 1", [Problem(f"params.{name}", "must be at least 1")])
    b = SpecBuilder("gb200-nvl72", "NVIDIA GB200 NVL72 rack (one 72-GPU NVLink domain)")
    b.spec.update({"kind": "nvlink_domain", "rack_scale": True, "rails": GPUS_PER_TRAY, "groups": []})
    groups = b.spec["groups"]
    for t in range(trays):
        groups.append({"local": f"tray{t}", "kind": "host", "template": "gb200-compute-tray"})
        _tray(b, t, gpu_model, nic_gbps, nic_model)
    chips = []
    for s in range(switch_trays):
        groups.append({"local": f"nvs{s}", "kind": "nvlink_switch_tray"})
        for c in range(NVSWITCH_CHIPS_PER_TRAY):
            chip = b.node(f"nvs{s}/nvswitch{c}", "nvswitch", None, index=NVSWITCH_CHIPS_PER_TRAY * s + c,
                          generation=4, switch_tray=s, model="NVLink Switch (NVSwitch gen 4)")
            b.spec["nodes"][-1]["group"] = f"nvs{s}"
            chips.append(chip)
    for t in range(trays):
        for k in range(GPUS_PER_TRAY):
            for chip in chips:
                b.link(f"tray{t}/gpu{k}", chip, "nvlink5x1")
    return b.spec


RACK_BUILDERS = {"gb200-nvl72": _gb200_nvl72}
RACK_PARAM_HELP = {
    "trays": "compute trays (4 GPUs each; 18 in an NVL72)",
    "switch_trays": "NVLink-switch trays (2 NVSwitch chips each; 9 in an NVL72)",
    "nic_model": "compute NIC model string",
}

"""Host templates from published server topologies (REFERENCE.md), and user-saved templates.

A template is a *host-local* spec: nodes and links with local ids (``gpu0``, ``pcie3``,
``gpu0-pcie0``). :func:`build_host` instantiates it for one host as a document fragment whose ids
are ``<host>/<local>`` and whose nodes sit in a ``host`` group. Built-in templates and user
templates (:func:`template_from_host`) share that spec format, ``fabricscope.host-template/1``,
which is plain JSON.

Modelling the CPU side (why it looks like this)
-----------------------------------------------
- ``cpu{s}`` (kind ``cpu``, ``attrs.role = "socket"``) is socket *s*: its internal fabric (mesh /
  Infinity Fabric), its memory controllers and its end of the inter-socket link. ``mem{s}``
  (kind ``memory``) is that socket's DRAM, joined by a DDR link of the socket's channel count,
  so GPU⇄host-memory traffic has a real path (``gpu → pcie → rc → cpu → mem``).
- A PCIe *root complex / host bridge* is a ``cpu``-kind node too: the socket node itself in the
  simple case (commodity server: every slot hangs off ``cpu0``), or separate ``rc{k}`` nodes
  (``attrs.role = "root_complex"``, ``attrs.socket``) when a socket has several host bridges —
  EPYC's four I/O-die quadrants (DGX A100, p5) and Sapphire Rapids' PCIe stacks (DGX H100).
  An ``rc``–``cpu`` link is the on-die fabric, given an explicit capacity
  (:data:`SOCKET_FABRIC_GBPS`) that is deliberately not a bottleneck.
- Path classes then follow from the ``cpu`` nodes a path crosses (see ``pathclass.py``): one →
  PHB, several of one socket → NODE, two sockets → SYS; ``pcie_switch`` nodes give PIX/PXB.
- A root complex may carry ``capacity_gbps`` (peer-to-peer throughput through it); only the
  commodity template sets one, and only when asked (``root_complex_gbps``).

Per template: see the builder docstrings (``_dgx_a100`` …). AMD platforms have no switch between
GPUs: one direct ``gpu``–``gpu`` link per pair (catalog family ``xgmi``), which routing and path
classes treat like a direct NVLink (``NV1``: one bonded link). NIC ``attrs``: ``rail`` (compute
NICs, 0-based, = index among compute NICs), ``port_gbps``, ``role`` (``compute``/``storage``),
``socket``, ``model``; GPU ``attrs``: ``model``, ``index``, ``socket``; CPU ``attrs``: ``socket``.
"""
from __future__ import annotations

import copy
import functools
import json

from designer.engine.catalog import TECHS
from designer.engine.errors import InvalidTopology, Problem

__all__ = ["TEMPLATES", "TEMPLATE_FORMAT", "MAX_TEMPLATE_COUNT", "SOCKET_FABRIC_GBPS", "build_host", "host_document",
           "template_spec", "template_from_host", "compute_nics", "XGMI_TECH_BY_MODEL"]

TEMPLATE_FORMAT = "fabricscope.host-template/1"
# On-die fabric between a root complex and its socket: AMD quotes ~>1 TB/s Infinity Fabric
# bisection per socket; kept well above any PCIe x16 so it never shows as a false bottleneck.
SOCKET_FABRIC_GBPS = 4096.0
SOCKET_FABRIC_LATENCY_NS = 50.0


class _Spec:
    """Accumulates a host-local template spec."""

    def __init__(self, name: str, description: str) -> None:
        self.spec = {"format": TEMPLATE_FORMAT, "name": name, "description": description,
                     "nodes": [], "links": []}

    def node(self, local: str, kind: str, capacity_gbps: float | None = None, **attrs) -> str:
        node = {"local": local, "kind": kind, "attrs": attrs}
        if capacity_gbps is not None:
            node["capacity_gbps"] = float(capacity_gbps)
        self.spec["nodes"].append(node)
        return local

    def link(self, a: str, b: str, tech: str | None, capacity_gbps: float | None = None,
             latency_ns: float | None = None) -> None:
        link = {"local": f"{a}-{b}", "a": a, "b": b}
        if tech is not None:
            link["tech"] = tech
        if capacity_gbps is not None:
            link["capacity_gbps"] = float(capacity_gbps)
        if latency_ns is not None:
            link["latency_ns"] = float(latency_ns)
        self.spec["links"].append(link)

    def sockets(self, n: int, model: str, inter: str, memory: str, capacity_gbps=None) -> None:
        for s in range(n):
            self.node(f"cpu{s}", "cpu", capacity_gbps, socket=s, role="socket", model=model)
            self.node(f"mem{s}", "memory", None, socket=s)
            self.link(f"cpu{s}", f"mem{s}", memory)
        if n == 2:
            self.link("cpu0", "cpu1", inter)

    def root_complex(self, k: int, socket: int) -> str:
        rc = self.node(f"rc{k}", "cpu", None, socket=socket, role="root_complex")
        self.link(rc, f"cpu{socket}", None, SOCKET_FABRIC_GBPS, SOCKET_FABRIC_LATENCY_NS)
        return rc

    def switch_on_root_complex(self, k: int, socket: int, uplink_tech: str) -> str:
        """PCIe switch ``pcie{k}`` on its own root complex ``rc{k}`` of ``socket``."""
        self.root_complex(k, socket)
        sw = self.node(f"pcie{k}", "pcie_switch", None, level=1, socket=socket)
        self.link(sw, f"rc{k}", uplink_tech)
        return sw

    def gpu(self, i: int, model: str, socket: int) -> str:
        return self.node(f"gpu{i}", "gpu", None, model=model, index=i, socket=socket)

    def nic(self, i: int, *, rail: int | None, port_gbps: float, socket: int, model: str,
            role: str = "compute", ports: int = 1) -> str:
        attrs = {"port_gbps": float(port_gbps), "role": role, "socket": socket, "model": model}
        if rail is not None:
            attrs["rail"] = rail
        if ports != 1:
            attrs["ports"] = ports
        return self.node(f"nic{i}", "nic", None, **attrs)

    def nvswitches(self, links_per_switch: list[int], gen: int, gpus: int) -> None:
        for j, count in enumerate(links_per_switch):
            self.node(f"nvswitch{j}", "nvswitch", None, index=j)
            for i in range(gpus):
                self.link(f"gpu{i}", f"nvswitch{j}", f"nvlink{gen}x{count}")


# ============================================================================ built-in templates
def _dgx_a100(nvme: int = 8, gpu_model: str = "A100-SXM4-80GB") -> dict:
    """DGX A100: 8 A100, 6 NVSwitches (2 NVLink3 per GPU each: NV12), 2 x EPYC 7742 (Zen 2).

    Per socket two quadrants q (root complex ``rc{q}``); each holds a level-1 PCIe Gen4 switch
    ``pcie{q}`` with GPUs 2q, 2q+1, and a level-2 switch ``pcie{4+q}`` with compute NICs 2q, 2q+1
    (ConnectX-6 200G) — so GPU⇄own NIC crosses two switches (PXB) as on the real machine.
    The level-1⇄level-2 link is PCIe Gen4 x16 per NIC below it (both NICs at full rate).
    ``nic8`` is the dual-port ConnectX-6 storage NIC on ``rc0``; NVMe drives 2 per level-1 switch.
    """
    b = _Spec("dgx-a100", "NVIDIA DGX A100")
    b.sockets(2, "AMD EPYC 7742", "xgmi-zen2", "ddr4x8")
    for q in range(4):
        s = q // 2
        b.switch_on_root_complex(q, s, "pcie4x16")
        b.node(f"pcie{4 + q}", "pcie_switch", None, level=2, socket=s)
        b.link(f"pcie{4 + q}", f"pcie{q}", "pcie4x16", 2 * TECHS["pcie4x16"].effective_gbps)
        for i in (2 * q, 2 * q + 1):
            b.gpu(i, gpu_model, s)
            b.link(f"gpu{i}", f"pcie{q}", "pcie4x16")
            b.nic(i, rail=i, port_gbps=200, socket=s, model="ConnectX-6")
            b.link(f"nic{i}", f"pcie{4 + q}", "pcie4x16")
    b.nic(8, rail=None, port_gbps=200, socket=0, model="ConnectX-6", role="storage", ports=2)
    b.link("nic8", "rc0", "pcie4x16")
    for d in range(nvme):
        b.node(f"nvme{d}", "nvme", None, socket=(d // 2) % 4 // 2)
        b.link(f"nvme{d}", f"pcie{(d // 2) % 4}", "pcie4x4")
    b.nvswitches([2] * 6, 3, 8)
    return b.spec


def _dgx_h100(nvme: int = 8, gpu_model: str = "H100-SXM5-80GB") -> dict:
    """DGX H100: 8 H100, 4 NVSwitches (5+4+4+5 NVLink4 per GPU: NV18), 2 x Xeon 8480C (SPR).

    One PCIe Gen5 switch ``pcie{i}`` per GPU on its own root complex ``rc{i}`` (4 per socket),
    holding GPU i and compute NIC i (ConnectX-7 400G, rail i) — GPU⇄own NIC is PIX, other NICs
    on the socket NODE, the other socket SYS. Two dual-port ConnectX-7 storage NICs ``nic8`` /
    ``nic9`` on the sockets; U.2 NVMe (Gen4 x4) one per PCIe switch.
    """
    b = _Spec("dgx-h100", "NVIDIA DGX H100")
    b.sockets(2, "Intel Xeon Platinum 8480C", "upi-spr", "ddr5x8")
    for i in range(8):
        s = i // 4
        b.switch_on_root_complex(i, s, "pcie5x16")
        b.gpu(i, gpu_model, s)
        b.link(f"gpu{i}", f"pcie{i}", "pcie5x16")
        b.nic(i, rail=i, port_gbps=400, socket=s, model="ConnectX-7")
        b.link(f"nic{i}", f"pcie{i}", "pcie5x16")
    for s in range(2):
        b.nic(8 + s, rail=None, port_gbps=400, socket=s, model="ConnectX-7", role="storage", ports=2)
        b.link(f"nic{8 + s}", f"cpu{s}", "pcie5x16")
    for d in range(nvme):
        b.node(f"nvme{d}", "nvme", None, socket=(d % 8) // 4)
        b.link(f"nvme{d}", f"pcie{d % 8}", "pcie4x4")
    b.nvswitches([5, 4, 4, 5], 4, 8)
    return b.spec


def _aws_p4d(nvme: int = 8, gpu_model: str = "A100-SXM4-40GB") -> dict:
    """AWS p4d.24xlarge: 8 A100 + 6 NVSwitches (NV12), 2 x Xeon 8275CL (Cascade Lake, UPI).

    Four PCIe Gen4 switches ``pcie{q}`` (2 per socket, each on root complex ``rc{q}``, Gen3 x16
    uplink as the CPU is Gen3) each holding GPUs 2q, 2q+1 and EFA NIC q (100G, rail q): GPU⇄own
    NIC is PIX. 4 x 100G = 400G per host. NVMe 2 per switch.
    """
    b = _Spec("aws-p4d", "AWS p4d.24xlarge")
    b.sockets(2, "Intel Xeon Platinum 8275CL", "upi-skylake", "ddr4x6")
    for q in range(4):
        s = q // 2
        b.switch_on_root_complex(q, s, "pcie3x16")
        for i in (2 * q, 2 * q + 1):
            b.gpu(i, gpu_model, s)
            b.link(f"gpu{i}", f"pcie{q}", "pcie4x16")
        b.nic(q, rail=q, port_gbps=100, socket=s, model="EFA")
        b.link(f"nic{q}", f"pcie{q}", "pcie4x16")
    for d in range(nvme):
        b.node(f"nvme{d}", "nvme", None, socket=(d // 2) % 4 // 2)
        b.link(f"nvme{d}", f"pcie{(d // 2) % 4}", "pcie4x4")
    b.nvswitches([2] * 6, 3, 8)
    return b.spec


def _aws_p5(nvme: int = 8, gpu_model: str = "H100-SXM5-80GB") -> dict:
    """AWS p5.48xlarge: 8 H100 + 4 NVSwitches (NV18), 2 x EPYC 7R13 (Zen 3, xGMI).

    One PCIe switch ``pcie{i}`` per GPU (root complex ``rc{i}``, Gen4 x16 uplink) holding GPU i
    (Gen5 x16) and EFA NICs 4i..4i+3 (100G, Gen4 x8, rails 4i..4i+3): 32 NICs, 3.2 Tb/s.
    One NVMe per switch.
    """
    b = _Spec("aws-p5", "AWS p5.48xlarge")
    b.sockets(2, "AMD EPYC 7R13", "xgmi-zen3", "ddr4x8")
    for i in range(8):
        s = i // 4
        b.switch_on_root_complex(i, s, "pcie4x16")
        b.gpu(i, gpu_model, s)
        b.link(f"gpu{i}", f"pcie{i}", "pcie5x16")
        for k in range(4):
            n = 4 * i + k
            b.nic(n, rail=n, port_gbps=100, socket=s, model="EFA")
            b.link(f"nic{n}", f"pcie{i}", "pcie4x8")
    for d in range(nvme):
        b.node(f"nvme{d}", "nvme", None, socket=(d % 8) // 4)
        b.link(f"nvme{d}", f"pcie{d % 8}", "pcie4x4")
    b.nvswitches([5, 4, 4, 5], 4, 8)
    return b.spec


# ---------------------------------------------------------------------------- issue 21: current parts
# Each builder's docstring names its sources (it is the template's ``details`` in the API and the
# editor); the rates of the links themselves and their sources are in catalog.py.

#: xGMI GPU-link tech of an AMD GPU model (catalog ``xgmi`` family); MI300X figures otherwise.
XGMI_TECH_BY_MODEL = {"MI300X": "xgmi-mi300", "MI325X": "xgmi-mi325"}


def _gpu_switches(b: _Spec, *, gpu_model: str, gpu_tech: str, uplink_tech: str, nic_model: str,
                  nic_gbps: float, nic_tech: str, nics_per_gpu: int = 1, gpus: int = 8) -> None:
    """One PCIe switch ``pcie{i}`` per GPU on its own root complex ``rc{i}`` (half the GPUs per
    socket), holding GPU i and its compute NICs (rails ``nics_per_gpu * i + k``): GPU⇄own NIC is
    PIX, the socket's other NICs NODE, the other socket's SYS."""
    for i in range(gpus):
        s = i // (gpus // 2)
        b.switch_on_root_complex(i, s, uplink_tech)
        b.gpu(i, gpu_model, s)
        b.link(f"gpu{i}", f"pcie{i}", gpu_tech)
        for k in range(nics_per_gpu):
            n = nics_per_gpu * i + k
            b.nic(n, rail=n, port_gbps=nic_gbps, socket=s, model=nic_model)
            b.link(f"nic{n}", f"pcie{i}", nic_tech)


def _storage_nics(b: _Spec, first: int, model: str, gbps: float, tech: str) -> None:
    """One dual-port storage / in-band NIC per socket, on the socket's own root port."""
    for s in range(2):
        b.nic(first + s, rail=None, port_gbps=gbps, socket=s, model=model, role="storage", ports=2)
        b.link(f"nic{first + s}", f"cpu{s}", tech)


def _nvme_per_switch(b: _Spec, nvme: int, switches: int = 8) -> None:
    for d in range(nvme):
        b.node(f"nvme{d}", "nvme", None, socket=(d % switches) // (switches // 2))
        b.link(f"nvme{d}", f"pcie{d % switches}", "pcie4x4")


def _dgx_b200(nvme: int = 8, gpu_model: str = "B200") -> dict:
    """DGX B200: 8 B200, 2 NVSwitch chips (9 + 9 NVLink 5 per GPU: NV18, 900 GB/s), 2 x Xeon 8570.

    NVIDIA DGX B200 user guide: 8 x B200, 2 x Intel Xeon 8570 (PCIe Gen5, Emerald Rapids: UPI
    ``upi-emr``), 2 x 5th-generation NVLink switches, 8 single-port ConnectX-7 (400 Gb/s IB) behind
    4 OSFP cages, 2 dual-port BlueField-3 (storage / in-band, up to 400 Gb/s), 8 U.2 NVMe, 2 TB DDR5
    in 32 DIMMs (8 channels per socket). The B200 has 18 NVLink 5 links (50 GB/s per direction
    each); 18 x 8 = 144 GPU ports on two 72-port NVSwitch chips = 9 links per GPU per chip. PCIe as
    on DGX H100 (same network-module design, BasePOD reference architecture): one Gen5 switch per
    GPU with its NIC (PIX, as ``nvidia-smi topo -m`` of B200 systems shows). NVMe Gen4 x4 (the
    guide does not state the generation). Sources: https://docs.nvidia.com/dgx/dgxb200-user-guide/
    introduction-to-dgxb200.html; DGX BasePOD RA, https://docs.nvidia.com/dgx-basepod/
    reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html.
    """
    b = _Spec("dgx-b200", "NVIDIA DGX B200")
    b.sockets(2, "Intel Xeon Platinum 8570", "upi-emr", "ddr5x8")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie5x16", uplink_tech="pcie5x16",
                  nic_model="ConnectX-7", nic_gbps=400, nic_tech="pcie5x16")
    _storage_nics(b, 8, "BlueField-3", 400, "pcie5x16")
    _nvme_per_switch(b, nvme)
    b.nvswitches([9, 9], 5, 8)
    return b.spec


def _hgx_b300(nvme: int = 8, gpu_model: str = "B300") -> dict:
    """HGX B300: 8 B300, 2 NVSwitch chips (NV18, NVLink 5), 8 ConnectX-8 800G on the GPU board.

    Unlike HGX B200, the eight ConnectX-8 SuperNICs sit on the GPU baseboard (DGX B300 user guide
    photographs, read in https://vengineer.hatenablog.com/entry/2025/12/06/080000); each CX-8 has
    an integrated 48-lane PCIe Gen6 switch (NVIDIA ConnectX-8 product page), modelled as
    ``pcie{i}`` holding GPU i (Gen6 x16) and the NIC (Gen6 x16, 800 Gb/s, rail i); its uplink to the
    host is Gen5 x16 (the host CPUs are PCIe Gen5). Host side assumed as DGX B200 (2 Xeon sockets,
    EMR UPI figures; the CPU model is not taken from a source), 2 dual-port BlueField-3 storage
    NICs (DGX B300: one BlueField-3 in each of slots 1 and 2).
    """
    b = _Spec("hgx-b300", "NVIDIA HGX B300 (ConnectX-8 800G on the GPU board)")
    b.sockets(2, "Intel Xeon (HGX B300 host)", "upi-emr", "ddr5x8")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie6x16", uplink_tech="pcie5x16",
                  nic_model="ConnectX-8", nic_gbps=800, nic_tech="pcie6x16")
    _storage_nics(b, 8, "BlueField-3", 400, "pcie5x16")
    _nvme_per_switch(b, nvme)
    b.nvswitches([9, 9], 5, 8)
    return b.spec


def _dgx_h200(nvme: int = 8, gpu_model: str = "H200-SXM5-141GB") -> dict:
    """DGX H200: the DGX H100 system with H200 GPUs (141 GB HBM3e); same NVLink 4 / 4 NVSwitches.

    BasePOD reference architecture: DGX H200 and H100 share 2 x Xeon 8480C, 4 NVSwitch chips,
    8 single-port + 2 dual-port ConnectX-7 and the CPU tray; 1,128 GB of GPU memory for H200
    (8 x 141 GB). Layout as ``dgx-h100``. Source: https://docs.nvidia.com/dgx-basepod/
    reference-architecture-infrastructure-foundation-enterprise-ai/latest/core-components.html.
    """
    spec = _dgx_h100(nvme=nvme, gpu_model=gpu_model)
    spec.update(name="dgx-h200", description="NVIDIA DGX H200")
    return spec


def _hgx_h200(nvme: int = 8, gpu_model: str = "H200-SXM5-141GB", nic_gbps: float = 400.0) -> dict:
    """Generic 8 x H200 HGX server: 4 NVSwitches (NV18, NVLink 4), one NIC per GPU, 2 x Xeon (SPR).

    The HGX H200 8-GPU board is the HGX H100 board with H200 GPUs (NVLink 4, 18 links, 4 NVSwitch
    chips: 5+4+4+5); OEM hosts pair each GPU 1:1 with a 400G NIC behind a PCIe Gen5 switch
    (GPU⇄own NIC PIX). No storage NICs (OEM-specific). ``nic_gbps`` sets the compute NIC speed.
    """
    b = _Spec("hgx-h200", "8 x H200 HGX server (generic)")
    b.sockets(2, "Intel Xeon Platinum 8480+", "upi-spr", "ddr5x8")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie5x16", uplink_tech="pcie5x16",
                  nic_model="ConnectX-7" if nic_gbps == 400 else "RDMA NIC", nic_gbps=nic_gbps,
                  nic_tech="pcie5x16")
    _nvme_per_switch(b, nvme)
    b.nvswitches([5, 4, 4, 5], 4, 8)
    return b.spec


def _aws_p5e(nvme: int = 8, gpu_model: str = "H200-SXM5-141GB") -> dict:
    """AWS p5e.48xlarge: p5.48xlarge with H200 GPUs (32 x 100G EFA = 3,200 Gb/s, EPYC 7R13).

    AWS P5 page: p5e.48xlarge has 8 H200 (141 GB), 3,200 Gbps of EFA networking, 2 x 3rd-gen AMD
    EPYC, like p5; 32 EFA devices (meta-pytorch/torchx#1098: ``EFA_DEVICE: 32``). Layout as
    ``aws-p5``. Source: https://aws.amazon.com/ec2/instance-types/p5/.
    """
    spec = _aws_p5(nvme=nvme, gpu_model=gpu_model)
    spec.update(name="aws-p5e", description="AWS p5e.48xlarge")
    return spec


def _aws_p5en(nvme: int = 8, gpu_model: str = "H200-SXM5-141GB") -> dict:
    """AWS p5en.48xlarge: 8 H200 + 4 NVSwitches, 2 x Sapphire Rapids, 16 x 200G EFAv3 (3.2 Tb/s).

    AWS P5 page: p5en has Intel Sapphire Rapids CPUs with PCIe Gen5 between CPU and GPU and
    3,200 Gbps of EFAv3; 16 EFA devices (meta-pytorch/torchx#995) = 200 Gb/s each, 2 per GPU.
    One PCIe switch per GPU (root complex ``rc{i}``, Gen5 x16 uplink) holding GPU i and EFAs
    2i, 2i+1 (Gen5 x8 assumed, as p5's Gen4 x8; rails 2i, 2i+1); one NVMe per switch.
    """
    b = _Spec("aws-p5en", "AWS p5en.48xlarge")
    b.sockets(2, "Intel Xeon (Sapphire Rapids)", "upi-spr", "ddr5x8")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie5x16", uplink_tech="pcie5x16",
                  nic_model="EFAv3", nic_gbps=200, nic_tech="pcie5x8", nics_per_gpu=2)
    _nvme_per_switch(b, nvme)
    b.nvswitches([5, 4, 4, 5], 4, 8)
    return b.spec


def _xgmi_mesh(b: _Spec, gpus: int, tech: str) -> None:
    """Infinity Fabric full mesh: one direct xGMI link between every pair of GPUs (no switch)."""
    for i in range(gpus):
        for j in range(i + 1, gpus):
            b.link(f"gpu{i}", f"gpu{j}", tech)


def _amd_platform(name: str, description: str, gpu_model: str, cpu_model: str, inter: str,
                  nic_gbps: float, nvme: int) -> dict:
    b = _Spec(name, description)
    b.sockets(2, cpu_model, inter, "ddr5x12")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie5x16", uplink_tech="pcie5x16",
                  nic_model="RDMA NIC", nic_gbps=nic_gbps, nic_tech="pcie5x16")
    _nvme_per_switch(b, nvme)
    family = str(gpu_model).upper().split("-")[0]
    _xgmi_mesh(b, 8, XGMI_TECH_BY_MODEL.get(family, "xgmi-mi300"))
    return b.spec


def _amd_mi300x(nvme: int = 8, gpu_model: str = "MI300X", nic_gbps: float = 400.0) -> dict:
    """AMD Instinct MI300X platform: 8 MI300X in an xGMI full mesh (7 links per GPU), 2 x EPYC 9004.

    Each GPU joins its seven peers by one Infinity Fabric link (64 GB/s per direction raw, ~48
    usable: ``xgmi-mi300``) — no switch (AMD ROCm blog, https://rocm.blogs.amd.com/software-tools-
    optimization/mi300x-rccl-xgmi/README.html); host interface PCIe Gen5 x16. As RCCL's own
    8 x MI300X model (ROCm/rccl tools/topo_expl/models/topo_8p_940.xml): each GPU and one 400 Gb/s NIC
    share a PCIe Gen5 switch, four GPUs per NUMA node of a two-socket host (EPYC 9004: Zen 4,
    12 DDR5 channels per socket; one switch per I/O-die root complex). Matrix: GPU pairs NV1
    (one direct link), GPU⇄own NIC PIX, same socket NODE, other socket SYS.
    """
    return _amd_platform("amd-mi300x", "AMD Instinct MI300X platform (8 x MI300X)", gpu_model,
                         "AMD EPYC 9654 (Zen 4)", "xgmi-zen4", nic_gbps, nvme)


def _amd_mi325x(nvme: int = 8, gpu_model: str = "MI325X", nic_gbps: float = 400.0) -> dict:
    """AMD Instinct MI325X platform: the MI300X platform with MI325X (256 GB HBM3E), same xGMI mesh.

    AMD MI325X platform: 8 OAMs on the same baseboard design, 896 GB/s of peer Infinity Fabric per
    GPU (7 x 128 GB/s bidirectional: ``xgmi-mi325``); host as ``amd-mi300x`` with EPYC 9005
    (Zen 5 inter-socket figures).
    """
    return _amd_platform("amd-mi325x", "AMD Instinct MI325X platform (8 x MI325X)", gpu_model,
                         "AMD EPYC 9005 (Zen 5)", "xgmi-zen5", nic_gbps, nvme)


def _pcie_commodity(gpus: int = 2, nics: int = 1, sockets: int = 1, nvme: int = 1,
                    gpu_model: str = "L40S", nic_gbps: float = 100, pcie_gen: int = 4,
                    root_complex_gbps: float | None = None) -> dict:
    """Commodity PCIe server: GPUs and NICs in slots on root ports of the socket(s); no NVLink.

    GPU i and NIC j sit on ``cpu{i % sockets}`` / ``cpu{j % sockets}`` directly (the socket is
    the host bridge), so GPU⇄NIC on one socket is PHB and across sockets SYS.
    ``root_complex_gbps`` optionally limits peer-to-peer throughput through each socket.
    """
    b = _Spec("pcie-commodity", "commodity PCIe-only GPU server")
    b.sockets(sockets, "generic x86", "upi-spr", "ddr5x8", root_complex_gbps)
    x16 = f"pcie{pcie_gen}x16"
    for i in range(gpus):
        b.gpu(i, gpu_model, i % sockets)
        b.link(f"gpu{i}", f"cpu{i % sockets}", x16)
    for j in range(nics):
        b.nic(j, rail=j, port_gbps=nic_gbps, socket=j % sockets, model="RDMA NIC")
        b.link(f"nic{j}", f"cpu{j % sockets}", x16)
    for d in range(nvme):
        b.node(f"nvme{d}", "nvme", None, socket=d % sockets)
        b.link(f"nvme{d}", f"cpu{d % sockets}", f"pcie{pcie_gen}x4")
    return b.spec


_BUILDERS = {"dgx-a100": _dgx_a100, "dgx-h100": _dgx_h100, "aws-p4d": _aws_p4d,
             "aws-p5": _aws_p5, "pcie-commodity": _pcie_commodity,
             "dgx-b200": _dgx_b200, "hgx-b300": _hgx_b300, "dgx-h200": _dgx_h200, "hgx-h200": _hgx_h200,
             "aws-p5e": _aws_p5e, "aws-p5en": _aws_p5en, "amd-mi300x": _amd_mi300x,
             "amd-mi325x": _amd_mi325x}

_PARAM_HELP = {
    "nvme": "number of NVMe drives", "gpu_model": "GPU model string", "gpus": "number of GPUs",
    "nics": "number of compute NICs", "sockets": "CPU sockets (1 or 2)",
    "nic_gbps": "NIC port speed, Gb/s", "pcie_gen": "PCIe generation of the slots (3-6)",
    "root_complex_gbps": "peer-to-peer limit through each socket's root complex, Gb/s (none)",
}

# Rack-scale systems (several hosts in one NVLink domain, GB200 NVL72): designer/engine/model/racks.py.
from designer.engine.model.racks import RACK_BUILDERS, RACK_PARAM_HELP  # noqa: E402  (needs _Spec above)

_BUILDERS.update(RACK_BUILDERS)
_PARAM_HELP.update(RACK_PARAM_HELP)


def _describe(name: str, fn) -> dict:
    import inspect

    params = {p.name: {"default": p.default, "help": _PARAM_HELP.get(p.name, "")}
              for p in inspect.signature(fn).parameters.values()}
    doc = (fn.__doc__ or "").strip()
    return {"name": name, "description": doc.split("\n")[0], "details": doc, "params": params}


# name -> {"name", "description", "details", "params": {param: {"default", "help"}}}
TEMPLATES: dict[str, dict] = {name: _describe(name, fn) for name, fn in _BUILDERS.items()}


# ============================================================================ specs and instances
# Largest count parameter (gpus, nics, nvme) of a built-in template: far above any real server,
# and it keeps one host spec small (parameters arrive from API requests).
MAX_TEMPLATE_COUNT = 1024


def _check_params(name: str, params: dict) -> None:
    known = TEMPLATES[name]["params"]
    problems = []
    for key, value in params.items():
        if key not in known:
            problems.append(Problem(f"params.{key}", f"unknown parameter of template {name!r} "
                                                     f"(known: {', '.join(known) or 'none'})"))
            continue
        default = known[key]["default"]
        numeric = isinstance(default, (int, float)) or default is None and key.endswith("_gbps")
        if numeric and value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                              or value < 0):
            problems.append(Problem(f"params.{key}", f"must be a non-negative number, got {value!r}"))
        elif isinstance(default, int) and not isinstance(default, bool) and isinstance(value, float) \
                and not value.is_integer():
            problems.append(Problem(f"params.{key}", f"must be an integer, got {value!r}"))
        elif (isinstance(default, int) and not isinstance(default, bool)
              and isinstance(value, (int, float)) and value > MAX_TEMPLATE_COUNT):
            problems.append(Problem(f"params.{key}", f"at most {MAX_TEMPLATE_COUNT}, got {value!r}"))
    if params.get("sockets", 1) not in (1, 2):
        problems.append(Problem("params.sockets", "must be 1 or 2"))
    if params.get("pcie_gen", 4) not in (3, 4, 5, 6):
        problems.append(Problem("params.pcie_gen", "must be 3, 4, 5 or 6"))
    if problems:
        raise InvalidTopology(f"invalid parameters for template {name!r}", problems)


@functools.lru_cache(maxsize=64)
def _builtin_spec(name: str, frozen_params: str) -> dict:
    params = json.loads(frozen_params)
    for key, value in params.items():  # JSON keeps 8.0 as float; the builders want ints
        if isinstance(value, float) and value.is_integer() and isinstance(
                TEMPLATES[name]["params"][key]["default"], int):
            params[key] = int(value)
    return _BUILDERS[name](**params)


def template_spec(template: str | dict, **params) -> dict:
    """The host-local spec of a template (a copy; JSON-serializable).

    Parameters
    ----------
    template : str or dict
        A built-in name (see :data:`TEMPLATES`) or a user template spec.
    **params
        Parameters of a built-in template.

    Raises
    ------
    InvalidTopology
        Unknown template, unknown or bad parameters, or a malformed user template.
    """
    return copy.deepcopy(_spec(template, params))


def _spec(template, params: dict) -> dict:
    if isinstance(template, dict):
        if params:
            raise InvalidTopology("a user template takes no parameters",
                                  [Problem("params", "a user template takes no parameters")])
        _check_user_spec(template)
        return template
    if not isinstance(template, str) or template not in _BUILDERS:
        raise InvalidTopology(f"unknown template {template!r} (choose from {', '.join(_BUILDERS)})",
                              [Problem("template", f"unknown template {template!r}")])
    _check_params(template, params)
    return _builtin_spec(template, json.dumps(params, sort_keys=True))


def _check_user_spec(spec: dict) -> None:
    from designer.engine.document import FORMAT, validate

    problems = []
    if spec.get("format") != TEMPLATE_FORMAT:
        problems.append(Problem("template.format", f'expected "{TEMPLATE_FORMAT}"'))
    nodes, links = spec.get("nodes"), spec.get("links")
    if not isinstance(nodes, list) or not isinstance(links, list) or not all(
            isinstance(x, dict) for x in nodes + links):
        problems.append(Problem("template", "nodes and links must be lists of objects"))
    else:
        fragment = _instantiate(spec, "h", None)
        doc = {"format": FORMAT, "groups": fragment["groups"], "nodes": fragment["nodes"],
               "links": fragment["links"]}
        problems += [Problem(f"template.{p.path}", p.message.replace('"h/', '"'))
                     for p in validate(doc)]
    if problems:
        raise InvalidTopology("invalid host template", problems)


def _instantiate(spec: dict, host_id: str, parent: str | None) -> dict:
    prefix = f"{host_id}/"
    # A rack-scale spec (racks.py) names its top group's kind and local sub-groups (trays).
    group = {"id": host_id, "kind": spec.get("kind", "host"), "template": spec.get("name", "")}
    if parent is not None:
        group["parent"] = parent
    groups = [group] + [{**{k: v for k, v in g.items() if k != "local"}, "id": prefix + str(g.get("local")),
                         "parent": host_id} for g in spec.get("groups") or ()]
    nodes = []
    for n in spec["nodes"]:
        node = {"id": prefix + str(n.get("local")), "kind": n.get("kind"),
                "group": prefix + str(n["group"]) if n.get("group") else host_id,
                "attrs": dict(n.get("attrs") or {})}
        if n.get("capacity_gbps") is not None:
            node["capacity_gbps"] = n["capacity_gbps"]
        nodes.append(node)
    links = []
    for l in spec["links"]:
        link = {"id": prefix + str(l.get("local") or f"{l.get('a')}-{l.get('b')}"),
                "a": prefix + str(l.get("a")), "b": prefix + str(l.get("b"))}
        for key in ("tech", "capacity_gbps", "capacity_basis", "latency_ns"):
            if l.get(key) is not None:
                link[key] = l[key]
        links.append(link)
    return {"groups": groups, "nodes": nodes, "links": links}


def build_host(template: str | dict, host_id: str, *, parent: str | None = None, **params) -> dict:
    """Document fragment of one host built from a template.

    Parameters
    ----------
    template : str or dict
        Built-in template name (``dgx-a100``, ``dgx-h100``, ``dgx-h200``, ``hgx-h200``,
        ``dgx-b200``, ``hgx-b300``, ``aws-p4d``, ``aws-p5``, ``aws-p5e``, ``aws-p5en``,
        ``amd-mi300x``, ``amd-mi325x``, ``pcie-commodity``) or a user template spec
        (:func:`template_from_host`).
    host_id : str
        Id of the host group; node ids become ``<host_id>/<local>``.
    parent : str, optional
        Parent group (e.g. a rack) of the host group.
    **params
        Template parameters (see ``TEMPLATES[name]["params"]``).

    Returns
    -------
    dict
        ``{"groups": [host group], "nodes": [...], "links": [...]}``.

    Raises
    ------
    InvalidTopology
        Unknown template or parameter, or a malformed user template.
    """
    return _instantiate(_spec(template, params), host_id, parent)


def host_document(template: str | dict, *, host_id: str = "h0", name: str | None = None,
                  **params) -> dict:
    """A whole ``fabricscope.topology/1`` document holding one host (not yet normalized)."""
    from designer.engine.document import FORMAT

    fragment = build_host(template, host_id, **params)
    label = template if isinstance(template, str) else template.get("name", "host")
    return {"format": FORMAT, "name": name or str(label), **fragment}


def compute_nics(spec: dict) -> list[dict]:
    """The spec's compute NIC nodes ordered by rail (``attrs.role == "compute"``)."""
    nics = [n for n in spec["nodes"] if n.get("kind") == "nic"
            and (n.get("attrs") or {}).get("role", "compute") == "compute"]
    return sorted(nics, key=lambda n: (n["attrs"].get("rail", 1 << 30), spec["nodes"].index(n)))


def template_from_host(doc, host_id: str, name: str, description: str = "") -> dict:
    """Save one host of a document as a user template spec.

    Parameters
    ----------
    doc : dict, str or path
        A topology document containing the host group ``host_id``.
    host_id : str
        The host to copy; its nodes (in that group or its subgroups) and the links between them.
    name, description : str
        Name and description of the new template.

    Returns
    -------
    dict
        A JSON-serializable ``fabricscope.host-template/1`` spec; instantiate it with
        ``build_host(spec, "h7")``.
    """
    from designer.engine.document import normalize

    doc = normalize(doc)
    groups = {g["id"]: g for g in doc["groups"]}
    if groups.get(host_id, {}).get("kind") != "host":
        raise InvalidTopology(f'no host group "{host_id}"', [Problem("host", f'no host group "{host_id}"')])
    inside = {n["id"] for n in doc["nodes"] if _within(n.get("group"), host_id, groups)}
    prefix = f"{host_id}/"
    local = (lambda x: x[len(prefix):] if x.startswith(prefix) else x)
    spec = {"format": TEMPLATE_FORMAT, "name": name, "description": description, "nodes": [], "links": []}
    for n in doc["nodes"]:
        if n["id"] in inside:
            node = {"local": local(n["id"]), "kind": n["kind"], "attrs": copy.deepcopy(n.get("attrs") or {})}
            if n.get("capacity_gbps") is not None:
                node["capacity_gbps"] = n["capacity_gbps"]
            spec["nodes"].append(node)
    for l in doc["links"]:
        if l["a"] in inside and l["b"] in inside:
            spec["links"].append(_local_link(l, local))
    return spec


def _local_link(l: dict, local) -> dict:
    link = {"local": local(l["id"]), "a": local(l["a"]), "b": local(l["b"])}
    tech = TECHS.get(l.get("tech")) if l.get("tech") else None
    if tech is not None:
        link["tech"] = tech.name
    if tech is None or l.get("capacity_basis") == "explicit":
        link["capacity_gbps"] = l["capacity_gbps"]
    elif l.get("capacity_basis") == "raw":
        link["capacity_basis"] = "raw"
    if tech is None or l.get("latency_ns") != tech.latency_ns:
        link["latency_ns"] = l.get("latency_ns", 0.0)
    return link


def _within(group: str | None, host_id: str, groups: dict) -> bool:
    seen = set()
    while group is not None and group not in seen:
        if group == host_id:
            return True
        seen.add(group)
        group = groups.get(group, {}).get("parent")
    return False

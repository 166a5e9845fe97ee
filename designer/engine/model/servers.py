"""Built-in server templates from published server topologies (each builder cites its sources).

Each builder returns a ``fabricscope.host-template/1`` spec (:mod:`.host_spec`) of one server;
its docstring is the template's description (first line) and details, with its sources.
:data:`SERVER_BUILDERS` names them, :data:`SERVER_PARAM_HELP` describes their parameters; the
registry of every template (with the rack-scale ones of :mod:`.racks`) is
:data:`designer.engine.model.templates.TEMPLATES`. The modelling conventions are in the
:mod:`.templates` docstring.
"""
from __future__ import annotations

from designer.engine.catalog import TECHS
from designer.engine.model.host_spec import SpecBuilder

__all__ = ["SERVER_BUILDERS", "SERVER_PARAM_HELP", "XGMI_TECH_BY_MODEL"]


def _dgx_a100(nvme: int = 8, gpu_model: str = "A100-SXM4-80GB") -> dict:
    """DGX A100: 8 A100, 6 NVSwitches (2 NVLink3 per GPU each: NV12), 2 x EPYC 7742 (Zen 2).

    Per socket two quadrants q (root complex ``rc{q}``); each holds a level-1 PCIe Gen4 switch
    ``pcie{q}`` with GPUs 2q, 2q+1, and a level-2 switch ``pcie{4+q}`` with compute NICs 2q, 2q+1
    (ConnectX-6 200G) — so GPU⇄own NIC crosses two switches (PXB) as on the real machine.
    The level-1⇄level-2 link is PCIe Gen4 x16 per NIC below it (both NICs at full rate).
    ``nic8`` is the dual-port ConnectX-6 storage NIC on ``rc0``; NVMe drives 2 per level-1 switch.
    """
    b = SpecBuilder("dgx-a100", "NVIDIA DGX A100")
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
    b = SpecBuilder("dgx-h100", "NVIDIA DGX H100")
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
    b = SpecBuilder("aws-p4d", "AWS p4d.24xlarge")
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
    b = SpecBuilder("aws-p5", "AWS p5.48xlarge")
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


# ---------------------------------------------------------- current parts (Blackwell, H200, AMD MI300)
# Each builder's docstring names its sources (it is the template's ``details`` in the API and the
# editor); the rates of the links themselves and their sources are in catalog.py.

#: xGMI GPU-link tech of an AMD GPU model (catalog ``xgmi`` family); MI300X figures otherwise.
XGMI_TECH_BY_MODEL = {"MI300X": "xgmi-mi300", "MI325X": "xgmi-mi325"}


def _gpu_switches(b: SpecBuilder, *, gpu_model: str, gpu_tech: str, uplink_tech: str, nic_model: str,
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


def _storage_nics(b: SpecBuilder, first: int, model: str, gbps: float, tech: str) -> None:
    """One dual-port storage / in-band NIC per socket, on the socket's own root port."""
    for s in range(2):
        b.nic(first + s, rail=None, port_gbps=gbps, socket=s, model=model, role="storage", ports=2)
        b.link(f"nic{first + s}", f"cpu{s}", tech)


def _nvme_per_switch(b: SpecBuilder, nvme: int, switches: int = 8) -> None:
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
    b = SpecBuilder("dgx-b200", "NVIDIA DGX B200")
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
    b = SpecBuilder("hgx-b300", "NVIDIA HGX B300 (ConnectX-8 800G on the GPU board)")
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
    b = SpecBuilder("hgx-h200", "8 x H200 HGX server (generic)")
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
    b = SpecBuilder("aws-p5en", "AWS p5en.48xlarge")
    b.sockets(2, "Intel Xeon (Sapphire Rapids)", "upi-spr", "ddr5x8")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie5x16", uplink_tech="pcie5x16",
                  nic_model="EFAv3", nic_gbps=200, nic_tech="pcie5x8", nics_per_gpu=2)
    _nvme_per_switch(b, nvme)
    b.nvswitches([5, 4, 4, 5], 4, 8)
    return b.spec


def _xgmi_mesh(b: SpecBuilder, gpus: int, tech: str) -> None:
    """Infinity Fabric full mesh: one direct xGMI link between every pair of GPUs (no switch)."""
    for i in range(gpus):
        for j in range(i + 1, gpus):
            b.link(f"gpu{i}", f"gpu{j}", tech)


def _amd_platform(name: str, description: str, gpu_model: str, cpu_model: str, inter: str,
                  nic_gbps: float, nvme: int) -> dict:
    b = SpecBuilder(name, description)
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
    b = SpecBuilder("pcie-commodity", "commodity PCIe-only GPU server")
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


SERVER_BUILDERS = {"dgx-a100": _dgx_a100, "dgx-h100": _dgx_h100, "aws-p4d": _aws_p4d,
                   "aws-p5": _aws_p5, "pcie-commodity": _pcie_commodity,
                   "dgx-b200": _dgx_b200, "hgx-b300": _hgx_b300, "dgx-h200": _dgx_h200, "hgx-h200": _hgx_h200,
                   "aws-p5e": _aws_p5e, "aws-p5en": _aws_p5en, "amd-mi300x": _amd_mi300x,
                   "amd-mi325x": _amd_mi325x}

SERVER_PARAM_HELP = {
    "nvme": "number of NVMe drives", "gpu_model": "GPU model string", "gpus": "number of GPUs",
    "nics": "number of compute NICs", "sockets": "CPU sockets (1 or 2)",
    "nic_gbps": "NIC port speed, Gb/s", "pcie_gen": "PCIe generation of the slots (3-6)",
    "root_complex_gbps": "peer-to-peer limit through each socket's root complex, Gb/s (none)",
}

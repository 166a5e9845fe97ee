"""More built-in host templates: Grace Hopper (GH200), export Hopper boards (H800, H20) with their
NVLink link count and generation as parameters, and the GPU machines of Google Cloud (A3 High,
A3 Mega, A3 Ultra, A4) and Azure (ND H100 v5, ND H200 v5, ND GB200 v6).

Kept apart from :mod:`.servers` (the 600-line rule) with the same conventions: each builder returns
a ``fabricscope.host-template/1`` spec (:mod:`.host_spec`) and its docstring is the template's
description and sources. :data:`MORE_BUILDERS` / :data:`MORE_PARAM_HELP` are merged into
:data:`designer.engine.model.templates.TEMPLATES`.

Cloud machines are virtual: the providers publish the GPU, the NICs and their rates, the NIC per
GPU alignment and the CPU generation, not the PCIe tree; the trees below are the bare-metal
boards those figures describe (each builder says which part is assumed).
"""
from __future__ import annotations

from designer.engine.errors import InvalidTopology, Problem
from designer.engine.model.host_spec import SpecBuilder
from designer.engine.model.racks import GRACE_MEMORY_GBYTES, GRACE_MEMORY_LATENCY_NS, _gb200_nvl72
from designer.engine.model.servers import _gpu_switches, _nvme_per_switch

__all__ = ["MORE_BUILDERS", "MORE_PARAM_HELP", "HOPPER_NVLINKS", "nvswitch_spread"]

#: NVLink 4 links of a full Hopper GPU (H100/H200/H20: 18 x 25 GB/s = 450 GB/s per direction,
#: https://www.nvidia.com/en-us/data-center/h100/ "NVLink: 900GB/s").
HOPPER_NVLINKS = 18
_NVSWITCHES = 4        # HGX H100-class baseboard: four third-generation NVSwitch chips


def nvswitch_spread(nvlinks: int, switches: int = _NVSWITCHES) -> list[int]:
    """Links per NVSwitch chip of a GPU with ``nvlinks`` links: as even as possible, the extra
    links on the outer chips first (18 → 5, 4, 4, 5 as on HGX H100; 8 → 2, 2, 2, 2)."""
    counts = [nvlinks // switches] * switches
    order = [0, switches - 1] + list(range(1, switches - 1))
    for k in range(nvlinks % switches):
        counts[order[k]] += 1
    return counts


def _check_nvlinks(nvlinks: int, nvlink_gen: int) -> None:
    problems = []
    if not isinstance(nvlinks, int) or isinstance(nvlinks, bool) or not 1 <= nvlinks <= HOPPER_NVLINKS:
        problems.append(Problem("params.nvlinks", f"must be an integer from 1 to {HOPPER_NVLINKS}, got {nvlinks!r}"))
    if nvlink_gen not in (3, 4, 5):
        problems.append(Problem("params.nvlink_gen", f"must be 3, 4 or 5, got {nvlink_gen!r}"))
    if problems:
        raise InvalidTopology("invalid NVLink parameters", problems)


def _nvswitch_board(b: SpecBuilder, nvlinks: int, nvlink_gen: int, gpus: int = 8) -> None:
    for j, count in enumerate(nvswitch_spread(nvlinks)):
        b.node(f"nvswitch{j}", "nvswitch", None, index=j)
        for i in range(gpus):
            if count:
                b.link(f"gpu{i}", f"nvswitch{j}", f"nvlink{nvlink_gen}x{count}")


def _hopper_board(name: str, description: str, gpu_model: str, nvlinks: int, nvlink_gen: int,
                  nic_gbps: float, nvme: int) -> dict:
    """8 Hopper GPUs on four NVSwitches with ``nvlinks`` links each, one NIC per GPU behind a PCIe
    Gen5 switch (as ``hgx-h200``), 2 x Sapphire Rapids."""
    _check_nvlinks(nvlinks, nvlink_gen)
    b = SpecBuilder(name, description)
    b.sockets(2, "Intel Xeon Platinum 8480+", "upi-spr", "ddr5x8")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie5x16", uplink_tech="pcie5x16",
                  nic_model="ConnectX-7" if nic_gbps == 400 else "RDMA NIC", nic_gbps=nic_gbps, nic_tech="pcie5x16")
    _nvme_per_switch(b, nvme)
    _nvswitch_board(b, nvlinks, nvlink_gen)
    return b.spec


def _hgx_h800(nvme: int = 8, gpu_model: str = "H800-SXM5-80GB", nvlinks: int = 8, nvlink_gen: int = 4,
              nic_gbps: float = 400.0) -> dict:
    """HGX H800: 8 H800, NVLink 4 cut to 8 links per GPU (400 GB/s bidirectional), 4 NVSwitches.

    The H800 is the H100 die with its chip-to-chip NVLink limited for export: 400 GB/s total
    (bidirectional) instead of 900 GB/s, i.e. 8 of Hopper's 18 NVLink 4 links (8 x 25 GB/s = 200
    GB/s per direction; https://www.philisun.com/technical-analysis/nvidia-h800-vs-h100-a-technical-
    deep-dive-into-politically-defined-ai-chips/: "400 GB/s total aggregate bidirectional"; the
    DeepSeek-V3 report, arXiv 2412.19437 section 3.2, measures about 160 GB/s usable on H800s).
    Compute as H100. Host as ``hgx-h200``. ``nvlinks`` / ``nvlink_gen`` set the GPU's NVLink
    links (spread over the 4 NVSwitches) and their generation.
    """
    return _hopper_board("hgx-h800", "8 x H800 HGX server (NVLink 4 x 8 links)", gpu_model, nvlinks, nvlink_gen,
                         nic_gbps, nvme)


def _hgx_h20(nvme: int = 8, gpu_model: str = "H20", nvlinks: int = HOPPER_NVLINKS, nvlink_gen: int = 4,
             nic_gbps: float = 400.0) -> dict:
    """HGX H20: 8 H20 (Hopper, full NVLink 4: 18 links, 900 GB/s bidirectional), 4 NVSwitches.

    The H20 keeps the H100's NVLink (900 GB/s) and cuts compute to 148 dense FP16/BF16 TFLOPS
    with 96 GB HBM3 at 4.0 TB/s (catalog ``GPU_COMPUTE["h20"]``). Board and host as ``hgx-h200``.
    ``nvlinks`` / ``nvlink_gen`` as ``hgx-h800``.
    """
    return _hopper_board("hgx-h20", "8 x H20 HGX server (NVLink 4 x 18 links)", gpu_model, nvlinks, nvlink_gen,
                         nic_gbps, nvme)


def _check_superchips(superchips: int) -> None:
    if not isinstance(superchips, int) or isinstance(superchips, bool) or not 1 <= superchips <= 4:
        raise InvalidTopology("invalid superchips", [Problem("params.superchips",
                                                             f"must be 1, 2, 3 or 4, got {superchips!r}")])


def _gh200(superchips: int = 2, gpu_model: str = "GH200 (H100-class, 96 GB HBM3)", nic_gbps: float = 400.0,
           nic_model: str = "ConnectX-7", nvme: int = 1) -> dict:
    """GH200 node: 1-4 Grace Hopper superchips (GPU + Grace by NVLink-C2C), GPUs joined by NVLink 4.

    Superchip s: Grace ``cpu{s}`` with its LPDDR5X ``mem{s}``, Hopper GPU ``gpu{s}`` joined to it by
    NVLink-C2C (900 GB/s bidirectional: ``nvlink-c2c``), one NIC ``nic{s}`` (PCIe Gen5 x16 on the
    Grace, rail s) and ``nvme`` drives on Grace 0. Default: GH200 NVL2, two superchips whose GPUs
    are fully connected by NVLink (NVIDIA GH200 page, https://www.nvidia.com/en-us/data-center/
    grace-hopper-superchip/: "GH200 NVL2 fully connects two GH200 Superchips with NVLink"; GH200:
    "NVLink-C2C 900GB/s", LPDDR5X up to 480 GB); all 18 NVLink 4 links of a GPU then go to its
    peer. With 3-4 superchips (quad nodes as HPE Cray EX254n) the 18 links are split evenly over
    the peers (4 superchips: 6 links per pair) — an assumption of even wiring. Grace memory
    bandwidth as the GB200 tray's Grace (racks.py). No Grace-to-Grace link is modelled (none is
    published for NVL2): host memory of another superchip is reached through the GPUs.
    """
    _check_superchips(superchips)
    b = SpecBuilder("gh200", f"NVIDIA GH200 node ({superchips} Grace Hopper superchip(s))")
    for s in range(superchips):
        b.node(f"cpu{s}", "cpu", None, socket=s, role="socket", model="NVIDIA Grace")
        b.node(f"mem{s}", "memory", None, socket=s)
        b.link(f"cpu{s}", f"mem{s}", None, GRACE_MEMORY_GBYTES * 8, GRACE_MEMORY_LATENCY_NS)
        b.gpu(s, gpu_model, s)
        b.link(f"gpu{s}", f"cpu{s}", "nvlink-c2c")
        b.nic(s, rail=s, port_gbps=nic_gbps, socket=s, model=nic_model)
        b.link(f"nic{s}", f"cpu{s}", "pcie5x16")
    per_pair = HOPPER_NVLINKS // max(1, superchips - 1)
    for i in range(superchips):
        for j in range(i + 1, superchips):
            b.link(f"gpu{i}", f"gpu{j}", f"nvlink4x{per_pair}")
    for d in range(nvme):
        b.node(f"nvme{d}", "nvme", None, socket=0)
        b.link(f"nvme{d}", "cpu0", "pcie5x4")
    return b.spec


def _pair_switches(b: SpecBuilder, gpu_model: str, nic_gbps: float, nic_model: str) -> None:
    """Four PCIe Gen5 switches (two per socket), each holding GPUs 2q, 2q+1 and NIC q (rail q)."""
    for q in range(4):
        s = q // 2
        b.switch_on_root_complex(q, s, "pcie5x16")
        for i in (2 * q, 2 * q + 1):
            b.gpu(i, gpu_model, s)
            b.link(f"gpu{i}", f"pcie{q}", "pcie5x16")
        b.nic(q, rail=q, port_gbps=nic_gbps, socket=s, model=nic_model)
        b.link(f"nic{q}", f"pcie{q}", "pcie5x16")


def _host_nic(b: SpecBuilder, index: int, socket: int, gbps: float) -> None:
    b.nic(index, rail=None, port_gbps=gbps, socket=socket, model="gVNIC", role="storage")
    b.link(f"nic{index}", f"cpu{socket}", "pcie5x16")


def _gcp_a3_high(gpu_model: str = "H100-SXM5-80GB", nvme: int = 0) -> dict:
    """Google Cloud A3 High (a3-highgpu-8g): 8 H100, 4 x 200G GPU NICs (GPUDirect-TCPX) + 1 gVNIC.

    GCP "Networking and GPU machines" (https://cloud.google.com/compute/docs/gpus/gpu-network-
    bandwidth): A3 High, 8 x H100 80GB, 1,000 Gbps in all, GPUDirect-TCPX; four 200 Gbps NICs for
    GPU traffic (one per GPU pair) and one 200 Gbps gVNIC for the host. Sapphire Rapids host
    (GCP accelerator-optimized machines page). Assumed: the NIC of a GPU pair shares that pair's
    PCIe Gen5 switch (as p4d's layout), NVSwitch board as HGX H100. Local SSDs as ``nvme``.
    """
    b = SpecBuilder("gcp-a3-high", "Google Cloud A3 High (a3-highgpu-8g)")
    b.sockets(2, "Intel Xeon (Sapphire Rapids)", "upi-spr", "ddr5x8")
    _pair_switches(b, gpu_model, 200, "gVNIC (GPUDirect-TCPX)")
    _host_nic(b, 4, 0, 200)
    _nvme_per_switch(b, nvme, 4)
    _nvswitch_board(b, HOPPER_NVLINKS, 4)
    return b.spec


def _gcp_a3_mega(gpu_model: str = "H100-SXM5-80GB", nvme: int = 0) -> dict:
    """Google Cloud A3 Mega (a3-megagpu-8g): 8 H100, 8 x 200G GPU NICs (GPUDirect-TCPXO) + 1 gVNIC.

    GCP "Networking and GPU machines" (same page as ``gcp-a3-high``): A3 Mega, 1,800 Gbps in all,
    GPUDirect-TCPXO; eight 200 Gbps GPU NICs (one per GPU) and a 200 Gbps gVNIC. Assumed: each
    GPU and its NIC share a PCIe Gen5 switch (PIX), NVSwitch board as HGX H100.
    """
    b = SpecBuilder("gcp-a3-mega", "Google Cloud A3 Mega (a3-megagpu-8g)")
    b.sockets(2, "Intel Xeon (Sapphire Rapids)", "upi-spr", "ddr5x8")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie5x16", uplink_tech="pcie5x16",
                  nic_model="gVNIC (GPUDirect-TCPXO)", nic_gbps=200, nic_tech="pcie5x16")
    _host_nic(b, 8, 0, 200)
    _nvme_per_switch(b, nvme)
    _nvswitch_board(b, HOPPER_NVLINKS, 4)
    return b.spec


def _cx7_rdma_machine(name: str, description: str, cpu: str, inter: str, gpu_model: str, nvme: int,
                      nvswitches: list[int], gen: int) -> dict:
    """8 GPUs each aligned with one 400G ConnectX-7 (RoCE, GPUDirect RDMA) + 2 x 200G gVNIC."""
    b = SpecBuilder(name, description)
    b.sockets(2, cpu, inter, "ddr5x8")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie5x16", uplink_tech="pcie5x16",
                  nic_model="ConnectX-7", nic_gbps=400, nic_tech="pcie5x16")
    for s in range(2):
        _host_nic(b, 8 + s, s, 200)
    _nvme_per_switch(b, nvme)
    b.nvswitches(nvswitches, gen, 8)
    return b.spec


def _gcp_a3_ultra(gpu_model: str = "H200-SXM5-141GB", nvme: int = 0) -> dict:
    """Google Cloud A3 Ultra (a3-ultragpu-8g): 8 H200, 8 x 400G ConnectX-7 (RoCE) + 2 x 200G gVNIC.

    GCP "Networking and GPU machines": eight CX-7 NICs (3,200 Gbps, each aligned with one GPU, GPU
    traffic only) and two gVNICs (400 Gbps), 3,600 Gbps in all. NVSwitch board as HGX H200; host
    2 x Sapphire Rapids (assumed: the page names no CPU).
    """
    return _cx7_rdma_machine("gcp-a3-ultra", "Google Cloud A3 Ultra (a3-ultragpu-8g)",
                             "Intel Xeon (Sapphire Rapids)", "upi-spr", gpu_model, nvme, [5, 4, 4, 5], 4)


def _gcp_a4(gpu_model: str = "B200", nvme: int = 0) -> dict:
    """Google Cloud A4 (a4-highgpu-8g): 8 B200, 8 x 400G ConnectX-7 (RoCE) + 2 x 200G gVNIC.

    GCP "Networking and GPU machines": A4 has the A3 Ultra's network — eight CX-7 (3,200 Gbps,
    one per GPU) and two gVNICs (400 Gbps), 3,600 Gbps in all, GPUDirect RDMA. GPUs as DGX B200
    (2 NVSwitch chips, 9 + 9 NVLink 5 per GPU); host 2 x Emerald Rapids (assumed, as DGX B200).
    """
    return _cx7_rdma_machine("gcp-a4", "Google Cloud A4 (a4-highgpu-8g)", "Intel Xeon (Emerald Rapids)",
                             "upi-emr", gpu_model, nvme, [9, 9], 5)


def _azure_nd_v5(name: str, description: str, gpu_model: str, nvme: int) -> dict:
    b = SpecBuilder(name, description)
    b.sockets(2, "Intel Xeon Platinum 8480C (Sapphire Rapids)", "upi-spr", "ddr5x8")
    _gpu_switches(b, gpu_model=gpu_model, gpu_tech="pcie5x16", uplink_tech="pcie5x16",
                  nic_model="ConnectX-7 (NDR InfiniBand)", nic_gbps=400, nic_tech="pcie5x16")
    _nvme_per_switch(b, nvme)
    b.nvswitches([5, 4, 4, 5], 4, 8)
    return b.spec


def _azure_nd_h100_v5(gpu_model: str = "H100-SXM5-80GB", nvme: int = 8) -> dict:
    """Azure ND H100 v5 (Standard_ND96isr_H100_v5): 8 H100 (NVLink 4), 8 x 400G NDR InfiniBand.

    Microsoft Learn, ND H100 v5 series (https://learn.microsoft.com/azure/virtual-machines/sizes/
    gpu-accelerated/ndh100v5-series): 8 H100 80GB joined by NVLink 4.0, one 400 Gb/s NVIDIA
    Quantum-2 CX7 InfiniBand per GPU (3.2 Tb/s per VM), 4th-generation Intel Xeon (Sapphire
    Rapids), NVMe local disks. Layout as DGX H100 (one PCIe Gen5 switch per GPU and its NIC);
    the Azure front-end NIC is not modelled.
    """
    return _azure_nd_v5("azure-nd-h100-v5", "Azure ND H100 v5", gpu_model, nvme)


def _azure_nd_h200_v5(gpu_model: str = "H200-SXM5-141GB", nvme: int = 8) -> dict:
    """Azure ND H200 v5 (Standard_ND96isr_H200_v5): the ND H100 v5 machine with 8 H200 (141 GB).

    Microsoft Learn, ND H200 v5 series (https://learn.microsoft.com/azure/virtual-machines/sizes/
    gpu-accelerated/nd-h200-v5-series): 8 H200 with NVLink 4.0, 8 x 400 Gb/s Quantum-2 CX7
    InfiniBand, Sapphire Rapids. Layout as ``azure-nd-h100-v5``.
    """
    return _azure_nd_v5("azure-nd-h200-v5", "Azure ND H200 v5", gpu_model, nvme)


def _azure_nd_gb200_v6(trays: int = 18, switch_trays: int = 9, gpu_model: str = "B200 (GB200)") -> dict:
    """Azure ND GB200 v6: GB200 NVL72 racks; a VM is one tray (2 Grace + 4 B200), 4 x 400G InfiniBand.

    Microsoft Learn, ND GB200 v6 series (https://learn.microsoft.com/azure/virtual-machines/sizes/
    gpu-accelerated/nd-gb200-v6-series): each VM has 2 Grace CPUs and 4 Blackwell GPUs in one
    NVLink domain of the rack (NVL72) and 4 x 400 Gb/s NDR InfiniBand (one per GPU). The rack as
    ``gb200-nvl72`` (its trays carry exactly that: 4 ConnectX-7 400G each).
    """
    spec = _gb200_nvl72(trays=trays, switch_trays=switch_trays, gpu_model=gpu_model, nic_gbps=400,
                        nic_model="ConnectX-7 (NDR InfiniBand)")
    spec.update(name="azure-nd-gb200-v6", description="Azure ND GB200 v6 (GB200 NVL72 racks)")
    return spec


MORE_BUILDERS = {"gh200": _gh200, "hgx-h800": _hgx_h800, "hgx-h20": _hgx_h20, "gcp-a3-high": _gcp_a3_high,
                 "gcp-a3-mega": _gcp_a3_mega, "gcp-a3-ultra": _gcp_a3_ultra, "gcp-a4": _gcp_a4,
                 "azure-nd-h100-v5": _azure_nd_h100_v5, "azure-nd-h200-v5": _azure_nd_h200_v5,
                 "azure-nd-gb200-v6": _azure_nd_gb200_v6}

MORE_PARAM_HELP = {
    "nvlinks": "NVLink links per GPU (1-18; H100/H20: 18, H800: 8)",
    "nvlink_gen": "NVLink generation of those links (3, 4 or 5)",
    "superchips": "Grace Hopper superchips in the node (1-4; NVL2: 2)",
}

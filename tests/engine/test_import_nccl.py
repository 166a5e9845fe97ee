"""NCCL topology XML import: the imported host's topo_matrix equals what NCCL computes."""
from __future__ import annotations

import pytest

from designer.engine.errors import ImportFormatError
from designer.engine.io import import_text
from tests.engine._import_helpers import imported_by_busid, kinds, nccl_reference, read


def test_dgx_a100_dump_matches_nccl_paths():
    """DGX A100-like dump, one quadrant of four (NUMA 3, 1, 7, 5)::

        [cpu numa3]--pcie4x16--[sw 01]--[sw 03]--[gpu0][gpu1]     gpus: 2 NVLinks to each of
                                     \\--[sw 04]--[mlx5_0][mlx5_1]  6 NVSwitches -> NV12
    GPU0-mlx5_0 crosses three bridges (PXB); another quadrant is another NUMA node (SYS).
    """
    text = read("dgx-a100-nccl-dump.xml")
    result = import_text(text)
    assert result.format == "nccl-xml"
    assert result.warnings == []
    assert imported_by_busid(result) == nccl_reference(text)
    assert kinds(result.document) == {"gpu": 8, "nic": 8, "nvswitch": 6, "pcie_switch": 12, "cpu": 4}
    row = [imported_by_busid(result)[("0000:07:00.0", b)] for b in
           ("0000:07:00.0", "0000:0b:00.0", "0000:0c:00.0", "0000:0d:00.0", "0000:53:00.0")]
    assert row == ["X", "NV12", "PXB", "PXB", "SYS"]
    links = {l["id"]: l for l in result.document["links"]}
    assert links["h0/gpu0-pcie1"]["tech"] == "pcie4x16"
    assert links["h0/gpu0-pcie1"]["capacity_gbps"] == 192.0          # NCCL: 16 x 120 / 80 GB/s
    assert links["h0/cpu0-cpu1"]["tech"] == "xgmi-zen2"              # AMD family 23
    nic0 = next(n for n in result.document["nodes"] if n["id"] == "h0/nic0")
    assert nic0["attrs"]["port_gbps"] == 200.0 and nic0["attrs"]["name"] == "mlx5_0"


def test_p4d_like_file_without_gpu_and_nic_elements():
    """p4d-like: 2 sockets x 2 switches x (2 GPUs + 1 NIC), Gen3, no <gpu>/<nic> elements."""
    text = read("p4d-like-nccl-topo.xml")
    result = import_text(text)
    assert imported_by_busid(result) == nccl_reference(text)
    assert kinds(result.document) == {"gpu": 8, "nic": 4, "pcie_switch": 4, "cpu": 2}
    assert any("without a <gpu> element" in w for w in result.warnings)
    assert any("assumed 10 Gb/s" in w for w in result.warnings)
    links = {l["id"]: l for l in result.document["links"]}
    assert links["h0/gpu0-pcie0"]["tech"] == "pcie3x16"
    assert links["h0/cpu0-cpu1"]["tech"] == "upi-skylake"            # Intel model 0x55


def test_single_gpu_vm_defaults_are_warnings():
    """VM: [gpu0 T4]--?--[cpu numaid=-1]--?--[eth0 10GbE]: no sysfs speeds, numaid -1."""
    text = read("vm-1gpu-10gbe-nccl.xml")
    result = import_text(text)
    assert imported_by_busid(result) == nccl_reference(text)
    assert imported_by_busid(result)[("0000:00:04.0", "0000:00:05.0")] == "PHB"
    joined = "\n".join(result.warnings)
    for needle in ("numaid", "link_width missing or 0", "assumed 8 GT/s"):
        assert needle in joined
    nic = next(n for n in result.document["nodes"] if n["kind"] == "nic")
    assert nic["attrs"]["port_gbps"] == 10.0
    gpu = next(n for n in result.document["nodes"] if n["kind"] == "gpu")
    assert gpu["attrs"]["model"] == "T4"
    assert {l["tech"] for l in result.document["links"]} == {"pcie3x16"}


MINIMAL = """<system version="1"><cpu numaid="0" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">
<pci busid="0000:01:00.0" class="0x060400" vendor="0x1000" device="0xc010" subsystem_vendor="0x1000" subsystem_device="0xa064" link_speed="16.0 GT/s PCIe" link_width="16">
<pci busid="0000:02:00.0" class="0x060400" vendor="0x1000" device="0xc010" subsystem_vendor="0x1000" subsystem_device="0xa064" link_speed="16.0 GT/s PCIe" link_width="16">
<pci busid="0000:03:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="0" sm="90" rank="0" gdr="1"><nvlink target="0000:04:00.0"/></gpu></pci>
</pci>
<pci busid="0000:04:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16"><gpu dev="1" sm="90" rank="1" gdr="1"/></pci>
<pci busid="0000:05:00.0" class="0x020000" link_speed="16.0 GT/s PCIe" link_width="16"><nic><net name="mlx5_0" dev="0" speed="-1"/></nic></pci>
</pci></cpu></system>"""


def test_broadcom_levels_flattened_and_missing_values_defaulted():
    """A Broadcom Gen4 switch showing two levels is one switch for NCCL (PIX, not PXB)::

        [cpu]--[bcm 01 + bcm 02 merged]--[gpu0] [gpu1] [mlx5_0]
    nvlink without count -> 1 (NV1); net speed -1 -> 10 Gb/s.
    """
    result = import_text(MINIMAL)
    got = imported_by_busid(result)
    assert got[("0000:03:00.0", "0000:05:00.0")] == "PIX"
    assert got[("0000:03:00.0", "0000:04:00.0")] == "NV1"
    joined = "\n".join(result.warnings)
    assert "Broadcom Gen4" in joined and "without count" in joined and "speed missing or <= 0" in joined
    assert kinds(result.document)["pcie_switch"] == 1


@pytest.mark.parametrize("text, needle", [
    ("<system version='1'></system>", "no <cpu>"),
    ("<topologyx/>", "neither"),
    ("<system><cpu numaid='0'><pci busid='x'", "not well-formed"),
])
def test_bad_nccl_xml_is_a_clear_error(text, needle):
    with pytest.raises(ImportFormatError) as info:
        import_text(text, format="nccl-xml" if "cpu" in text or "system" in text else None)
    assert needle in str(info.value) or needle in info.value.message


def test_malformed_xml_is_located():
    with pytest.raises(ImportFormatError) as info:
        import_text('<system version="1">\n  <cpu numaid="0">\n  </pci>\n</system>', format="nccl-xml")
    assert info.value.problems and info.value.problems[0].path.startswith("line 3")

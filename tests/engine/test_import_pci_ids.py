"""PCI device ids → models (designer/engine/io/pci_ids.py) and what importers keep from a file.

The H200 fixture (tests/engine/data/import/dgx-h200-nccl-topo.xml)::

    [cpu numa0]--pcie5x16--[sw 15]--[gpu0 H200][gpu1 H200][mlx5_0 CX-7 400G]
        |  upi-spr                      \\ 18 NVLinks per GPU to 4 NVSwitches (5+4+4+5)
    [cpu numa1]--pcie5x16--[sw 9a]--[gpu2 H200][gpu3 H200][mlx5_4 CX-7 400G]

Its GPUs say ``sm="90"``, which an H100 says too: only ``device="0x2335"`` makes them H200s.
"""
from __future__ import annotations

import re

import pytest

from designer.engine.io import export_nccl_xml, import_text
from designer.engine.io.pci_ids import (
    PCI_MODELS,
    VENDORS,
    device_for_model,
    lookup,
    parse_id,
)
from tests.engine._import_helpers import imported_by_busid, kinds, nccl_reference, read


def nodes_of(result, kind):
    return [n for n in result.document["nodes"] if n["kind"] == kind]


# ------------------------------------------------------------------------------ the table
def test_every_entry_has_a_known_vendor_a_kind_and_a_source_url():
    assert len(PCI_MODELS) >= 20
    for (vendor, device), entry in PCI_MODELS.items():
        assert (entry.vendor, entry.device) == (vendor, device)
        assert re.fullmatch(r"[0-9a-f]{4}", vendor) and re.fullmatch(r"[0-9a-f]{4}", device)
        assert vendor in VENDORS and entry.kind in ("gpu", "nic")
        assert entry.source.startswith("https://"), entry


@pytest.mark.parametrize("vendor, device, model", [
    ("10de", "20b2", "A100"), ("10de", "2330", "H100"), ("10de", "2335", "H200"),
    ("10de", "2901", "B200"), ("10de", "2941", "GB200"), ("1002", "74a1", "MI300X"),
    ("1002", "74a5", "MI325X"), ("15b3", "101b", "ConnectX-6"), ("15b3", "1021", "ConnectX-7"),
    ("15b3", "1023", "ConnectX-8"), ("15b3", "a2d6", "BlueField-2"), ("15b3", "a2dc", "BlueField-3"),
])
def test_current_gpus_and_nics_are_in_the_table(vendor, device, model):
    assert lookup(device, vendor).model == model
    assert lookup(f"0x{device.upper()}", f"0x{vendor}").model == model   # NCCL's spelling


def test_id_spellings_and_misses():
    assert [parse_id(v) for v in ("0x2335", "2335", " 0X2335 ", 0x2335, "0x0", "ffff")] == \
        ["2335", "2335", "2335", "2335", "0000", "ffff"]
    assert [parse_id(v) for v in (None, "", "0x12345", "zz", -1, 0x10000)] == [None] * 6
    assert lookup("2335", "15b3") is None            # right device id, wrong vendor
    assert lookup("9999") is None and lookup(None) is None
    assert lookup("2335").model == "H200"            # unique without the vendor
    assert device_for_model("H100-SXM5-80GB").device == "2330"   # a template's model name
    assert device_for_model("ConnectX-7", "nic").device == "1021"
    assert device_for_model("unknown") is None and device_for_model("") is None


# ------------------------------------------------------------------------------ NCCL XML
def test_h200_nccl_xml_imports_as_h200_with_its_nics():
    text = read("dgx-h200-nccl-topo.xml")
    result = import_text(text)
    assert result.warnings == []
    assert imported_by_busid(result) == nccl_reference(text)
    assert kinds(result.document) == {"gpu": 4, "nic": 2, "nvswitch": 4, "pcie_switch": 2, "cpu": 2}
    gpus = nodes_of(result, "gpu")
    assert {g["attrs"]["model"] for g in gpus} == {"H200"}
    assert {g["attrs"]["sm"] for g in gpus} == {90}
    assert gpus[0]["attrs"]["pci_id"] == "10de:2335"
    assert gpus[0]["attrs"]["product"] == "GH100 [H200 SXM 141GB]"
    nics = {n["attrs"]["name"]: n["attrs"] for n in nodes_of(result, "nic")}
    assert set(nics) == {"mlx5_0", "mlx5_4"}
    assert nics["mlx5_0"]["model"] == "ConnectX-7" and nics["mlx5_0"]["port_gbps"] == 400.0
    links = {l["id"]: l for l in result.document["links"]}
    assert links["h0/gpu0-nvswitch0"]["tech"] == "nvlink4x5"         # 5 of the 18 NVLink4 links


def test_without_the_device_id_sm_90_falls_back_to_h100():
    """The fallback the table exists to avoid: same file, ``device`` attributes removed."""
    text = re.sub(rb' device="0x[0-9a-f]+"', b"", read("dgx-h200-nccl-topo.xml"))
    gpus = nodes_of(import_text(text), "gpu")
    assert {g["attrs"]["model"] for g in gpus} == {"H100"}
    assert "pci_id" not in gpus[0]["attrs"] and "product" not in gpus[0]["attrs"]


def test_unknown_device_id_keeps_the_sm_model_and_the_raw_id():
    text = read("dgx-h200-nccl-topo.xml").replace(b'device="0x2335"', b'device="0x9999"')
    gpu = nodes_of(import_text(text), "gpu")[0]
    assert gpu["attrs"]["model"] == "H100" and gpu["attrs"]["pci_id"] == "10de:9999"


def test_h200_survives_export_and_reimport():
    first = import_text(read("dgx-h200-nccl-topo.xml"))
    xml = export_nccl_xml(first.document, "h0")
    assert xml.count('device="0x2335"') == 4 and xml.count('device="0x1021"') == 2
    again = import_text(xml)
    assert {g["attrs"]["model"] for g in nodes_of(again, "gpu")} == {"H200"}
    assert {n["attrs"]["model"] for n in nodes_of(again, "nic")} == {"ConnectX-7"}


# ------------------------------------------------------------------------------ hwloc
def test_hwloc_uses_the_same_table():
    """two-socket-hwloc.xml with its GPUs' pci_type device id swapped for an H200's (2335)
    and a NIC's for a BlueField-3 (a2dc), GPU model infos removed so only the id can tell."""
    text = read("two-socket-hwloc.xml").decode()
    text = re.sub(r'<info name="GPUModel" value="[^"]*"/>', "", text)
    text = re.sub(r'pci_type="(03[0-9a-f]{2}) \[10de:[0-9a-f]{4}\]', r'pci_type="\1 [10de:2335]', text)
    text = re.sub(r'pci_type="(02[0-9a-f]{2}) \[15b3:[0-9a-f]{4}\]', r'pci_type="\1 [15b3:a2dc]', text)
    result = import_text(text)
    gpus, nics = nodes_of(result, "gpu"), nodes_of(result, "nic")
    assert gpus and {g["attrs"]["model"] for g in gpus} == {"H200"}
    mellanox = [n for n in nics if n["attrs"].get("pci_id", "").startswith("15b3:")]
    assert mellanox and {n["attrs"]["model"] for n in mellanox} == {"BlueField-3"}


# ------------------------------------------------------------------------------ nvidia-smi
def test_nvidia_smi_keeps_nic_names_and_affinity_columns():
    """DGX A100 topo -m: GPU0 row ``CPU Affinity 48-63,176-191, NUMA Affinity 3``; NIC legend
    ``NIC0: mlx5_0`` … ``NIC9: mlx5_9``."""
    result = import_text(read("dgx-a100-topo-m.txt"))
    by_id = {n["id"]: n for n in result.document["nodes"]}
    gpu0, gpu7 = by_id[result.ids["GPU0"]]["attrs"], by_id[result.ids["GPU7"]]["attrs"]
    assert (gpu0["cpu_affinity"], gpu0["numa_affinity"]) == ("48-63,176-191", 3)
    assert (gpu7["cpu_affinity"], gpu7["numa_affinity"]) == ("80-95,208-223", 5)
    assert "gpu_numa_id" not in gpu0                                  # "N/A" in the input
    names = [by_id[result.ids[f"NIC{i}"]]["attrs"]["name"] for i in range(10)]
    assert names == [f"mlx5_{i}" for i in range(10)]
    assert by_id[result.ids["NIC3"]]["attrs"]["smi_label"] == "NIC3"

"""Imports of current parts: Blackwell ``nvidia-smi topo -m`` / NCCL XML, RCCL XML and ``rocm-smi --showtopo``
map to the templates' vocabulary (``nvlink5x*``, ``xgmi-mi300``, the PCI ids of current parts).

MI300X from ``rocm-smi --showtopo`` (no PCIe switch or NIC in the output)::

    [cpu0]--+--[gpu0] ... [gpu3]      [cpu1]--+--[gpu4] ... [gpu7]
    every GPU pair joined by one xgmi-mi300 link (weight 15 = one xGMI hop)
"""
from collections import Counter

import pytest

from designer.engine.document import normalize
from designer.engine.errors import ImportFormatError
from designer.engine.io import FORMATS, import_text, sniff_format
from designer.engine.io.pci_ids import lookup, nvlink_generation
from designer.engine.io.rocm_smi import parse_sections
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology
from tests.engine._import_helpers import kinds, matrix_by_id, read


def techs(doc):
    return Counter(l.get("tech") for l in doc["links"])


def gpu_gpu_links(doc):
    gpu = {n["id"] for n in doc["nodes"] if n["kind"] == "gpu"}
    return [l for l in doc["links"] if l["a"] in gpu and l["b"] in gpu]


# ---------------------------------------------------------------- rocm-smi
def test_rocm_smi_is_a_format_and_is_sniffed_before_nvidia_smi():
    assert "rocm-smi" in FORMATS
    assert sniff_format(read("mi300x-rocm-smi-showtopo.txt")) == "rocm-smi"
    assert sniff_format(read("b200-topo-m.txt")) == "nvidia-smi"


def test_mi300x_showtopo_becomes_the_xgmi_full_mesh():
    r = import_text(read("mi300x-rocm-smi-showtopo.txt"))
    doc = r.document
    assert r.format == "rocm-smi" and kinds(doc)["gpu"] == 8 and kinds(doc)["nic"] == 0
    mesh = gpu_gpu_links(doc)
    assert len(mesh) == 28 and {l["tech"] for l in mesh} == {"xgmi-mi300"}
    assert {frozenset((l["a"], l["b"])) for l in mesh} == {
        frozenset((f"h0/gpu{i}", f"h0/gpu{j}")) for i in range(8) for j in range(i + 1, 8)}
    models = {n["attrs"]["model"] for n in doc["nodes"] if n["kind"] == "gpu"}
    assert models == {"MI300X"}     # from the Card Series lines
    sockets = [n["attrs"]["socket"] for n in sorted((n for n in doc["nodes"] if n["kind"] == "gpu"),
                                                     key=lambda n: n["attrs"]["index"])]
    assert sockets == [0] * 4 + [1] * 4
    assert r.matrix["differ"] == [] and r.matrix["engine"][0][1:] == ["NV1"] * 7
    assert not any("GPU model" in w for w in r.warnings)


def test_mi300x_import_matches_the_template_gpu_fabric():
    """The imported mesh is the amd-mi300x template's: same GPU-pair classes, same link tech."""
    imported = matrix_by_id(import_text(read("mi300x-rocm-smi-showtopo.txt")).document)
    template = matrix_by_id(normalize(host_document("amd-mi300x")))
    pairs = [(f"h0/gpu{i}", f"h0/gpu{j}") for i in range(8) for j in range(8)]
    assert [imported[p] for p in pairs] == [template[p] for p in pairs]


def test_pcie_only_showtopo_reads_hops_as_sockets_and_gpu_model_hint():
    r = import_text(read("pcie-4gpu-rocm-smi-showtopo.txt"), gpu_model="MI325X")
    assert gpu_gpu_links(r.document) == []
    assert r.matrix["engine"] == [["X", "PHB", "SYS", "SYS"], ["PHB", "X", "SYS", "SYS"],
                                  ["SYS", "SYS", "X", "PHB"], ["SYS", "SYS", "PHB", "X"]]
    assert r.matrix["differ"] == []
    assert {n["attrs"]["model"] for n in r.document["nodes"] if n["kind"] == "gpu"} == {"MI325X"}


def test_sockets_from_hops_when_the_numa_section_is_missing():
    text = read("pcie-4gpu-rocm-smi-showtopo.txt").decode().split("=== Numa Nodes")[0]
    r = import_text(text, format="rocm-smi")
    assert any("inferred from PCIE hops" in w for w in r.warnings)
    assert r.matrix["engine"][0] == ["X", "PHB", "SYS", "SYS"]


def test_multi_hop_xgmi_pair_is_not_a_direct_link():
    """Weight 30 = two xGMI hops (15 each): no direct link, a warning names the pair."""
    text = read("mi300x-rocm-smi-showtopo.txt").decode()
    rows = text.split("\n")
    i = next(k for k, l in enumerate(rows) if l.startswith("GPU0   0 "))   # weight table, row GPU0
    rows[i] = rows[i].replace("15", "30", 1)
    r = import_text("\n".join(rows))
    assert len(gpu_gpu_links(r.document)) == 27
    assert any("GPU0-GPU1: 2 xGMI hops" in w for w in r.warnings)


@pytest.mark.parametrize("text, needle", [
    ("====== Hops between two GPUs ======\nnothing here\n", "no GPU table"),
    ("== Weight between two GPUs ==\n       GPU0   GPU1\nGPU0   0\n", "row GPU0 has 1 cells"),
])
def test_bad_rocm_smi_is_a_located_error(text, needle):
    with pytest.raises(ImportFormatError, match=needle):
        import_text(text, format="rocm-smi")
    with pytest.raises(ImportFormatError):
        parse_sections(text)


# ---------------------------------------------------------------- RCCL XML (xGMI)
def test_rccl_xml_xgmi_elements_become_direct_links():
    r = import_text(read("mi300x-rccl-topo.xml"))
    doc = r.document
    assert kinds(doc)["gpu"] == 8 and kinds(doc)["nic"] == 8 and kinds(doc)["nvswitch"] == 0
    mesh = gpu_gpu_links(doc)
    assert len(mesh) == 28 and {l["tech"] for l in mesh} == {"xgmi-mi300"}
    gpus = [n for n in doc["nodes"] if n["kind"] == "gpu"]
    assert {(n["attrs"]["model"], n["attrs"]["gcn"], n["attrs"]["pci_id"]) for n in gpus} == {
        ("MI300X", "gfx942", "1002:74a1")}
    row0 = r.matrix["engine"][0]
    assert row0[1:8] == ["NV1"] * 7 and row0[8] == "PIX" and row0[12:16] == ["SYS"] * 4
    assert not any("version" in w for w in r.warnings)   # RCCL writes version="2"


def test_rccl_xgmi_without_a_catalog_part_gets_rcclss_rate():
    text = read("mi300x-rccl-topo.xml").decode().replace('gcn="gfx942"', 'gcn="gfx90a"').replace(
        'device="0x74a1"', 'device="0x7408"')
    doc = import_text(text).document
    assert {(l.get("tech"), l["capacity_gbps"]) for l in gpu_gpu_links(doc)} == {(None, 36.0 * 8)}


# ---------------------------------------------------------------- Blackwell
def test_b200_topo_m_with_the_gpu_model_is_nvlink5():
    r = import_text(read("b200-topo-m.txt"), gpu_model="B200")
    doc = r.document
    assert r.matrix["differ"] == []
    assert techs(doc)["nvlink5x18"] == 8
    assert {n["attrs"]["model"] for n in doc["nodes"] if n["kind"] == "gpu"} == {"B200"}
    assert not any("NVLink generation" in w or "GPU model" in w for w in r.warnings)
    t = Topology.compile(doc)
    assert [t.node_attrs[i]["name"] for i in t.nodes_of_kind("nic")][:2] == ["mlx5_0", "mlx5_1"]


def test_b200_topo_m_without_the_model_keeps_the_old_guess_and_says_so():
    r = import_text(read("b200-topo-m.txt"))
    assert techs(r.document)["nvlink4x18"] == 8
    assert any("NVLink4 assumed" in w and "B200" in w for w in r.warnings)


def test_b200_topo_m_reads_like_the_dgx_b200_template():
    """GPU⇄GPU NV18, GPU⇄own NIC PIX, socket NODE / SYS: the dgx-b200 template's own rows."""
    imported = import_text(read("b200-topo-m.txt"), gpu_model="B200").matrix["engine"]
    from designer.engine.model.pathclass import topo_matrix

    template = topo_matrix(Topology.from_document(host_document("dgx-b200")), "h0")["matrix"]
    assert [row[:16] for row in imported] == [row[:16] for row in template]


def test_b200_nccl_xml_maps_pci_ids_and_nvlink5():
    r = import_text(read("hgx-b200-slice-nccl-topo.xml"))
    doc = r.document
    gpus = [n for n in doc["nodes"] if n["kind"] == "gpu"]
    assert {n["attrs"]["model"] for n in gpus} == {"B200"} and {n["attrs"]["sm"] for n in gpus} == {100}
    assert techs(doc)["nvlink5x9"] == 4 and kinds(doc)["nvswitch"] == 2
    nics = {n["attrs"]["model"]: n["attrs"]["port_gbps"] for n in doc["nodes"] if n["kind"] == "nic"}
    assert nics == {"ConnectX-7": 400.0, "ConnectX-8": 800.0, "BlueField-3": 400.0}
    assert r.matrix["engine"][0][:3] == ["X", "NV18", "PIX"]
    assert any(l.get("tech") == "pcie6x16" for l in doc["links"])   # the CX-8's 64 GT/s link


def test_gpu_model_is_ignored_for_xml_with_a_warning():
    r = import_text(read("hgx-b200-slice-nccl-topo.xml"), gpu_model="H100")
    assert any("gpu_model 'H100' ignored" in w for w in r.warnings)


@pytest.mark.parametrize("vendor, device, model", [
    ("10de", "2901", "B200"), ("10de", "2941", "GB200"), ("10de", "31c2", "GB300"), ("10de", "2335", "H200"),
    ("1002", "74a1", "MI300X"), ("1002", "74a5", "MI325X"), ("15b3", "1023", "ConnectX-8"),
    ("15b3", "a2dc", "BlueField-3")])
def test_current_pci_ids(vendor, device, model):
    assert lookup(device, vendor).model == model


def test_nvlink_generation_by_model():
    assert [nvlink_generation(m) for m in ("A100", "H200-SXM5-141GB", "B200", "GB300", "MI300X")] == \
        [3, 4, 5, 5, None]


# ---------------------------------------------------------------- hwloc (RSMI backend)
def test_hwloc_amd_class_1200_gpus_and_xgmi_peers():
    """MI300X are PCI class 1200 (processing accelerator); XGMIPeers gives the mesh."""
    r = import_text(read("mi300x-hwloc.xml"))
    doc = r.document
    assert kinds(doc)["gpu"] == 4
    mesh = gpu_gpu_links(doc)
    assert len(mesh) == 6 and {l["tech"] for l in mesh} == {"xgmi-mi300"}
    assert {n["attrs"]["pci_id"] for n in doc["nodes"] if n["kind"] == "gpu"} == {"1002:74a1"}
    assert r.matrix["engine"][0] == ["X", "NV1", "NV1", "NV1"]
    assert not any("NVLinks" in w for w in r.warnings)


def test_import_cli_rocm_smi_and_gpu_model(tmp_path):
    import json
    import subprocess
    import sys
    from pathlib import Path

    from tests.engine._import_helpers import DATA

    root = Path(__file__).resolve().parents[2]
    out = tmp_path / "b200.json"
    done = subprocess.run([sys.executable, "-m", "designer.engine", "import", str(DATA / "b200-topo-m.txt"),
                           "--gpu-model", "B200", "-o", str(out)], cwd=root, capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert {l.get("tech") for l in json.loads(out.read_text())["links"]} >= {"nvlink5x18"}
    done = subprocess.run([sys.executable, "-m", "designer.engine", "import", "-", "--format", "rocm-smi"],
                          cwd=root, input=(DATA / "mi300x-rocm-smi-showtopo.txt").read_bytes(),
                          capture_output=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sum(l.get("tech") == "xgmi-mi300" for l in json.loads(done.stdout)["links"]) == 28


def test_b200_nccl_xml_with_one_nvswitch_target_is_nv18():
    """NCCL writes one NVSwitch target for all 18 links when the switches are off the host's PCI
    bus (HGX B200): one nvswitch node, nvlink5x18 per GPU, still NV18 between the GPUs."""
    text = read("hgx-b200-slice-nccl-topo.xml").decode()
    text = text.replace('<nvlink target="0000:05:00.0" count="9" tclass="0x068000"/>',
                        '<nvlink target="fffffff:ffff:ff" count="18" tclass="0x068000"/>')
    text = text.replace('          <nvlink target="0000:06:00.0" count="9" tclass="0x068000"/>\n', "")
    r = import_text(text)
    assert techs(r.document)["nvlink5x18"] == 2 and kinds(r.document)["nvswitch"] == 1
    assert r.matrix["engine"][0][1] == "NV18"


def test_amd_smi_topology_tables_read_like_rocm_smi():
    """amd-smi names GPUs by bus id (WEIGHT TABLE: / LINK TYPE TABLE:): GPU k = k-th bus id."""
    text = read("mi300x-amd-smi-topology.txt")
    assert sniff_format(text) == "rocm-smi"
    r = import_text(text)
    assert len(gpu_gpu_links(r.document)) == 6
    busids = [n["attrs"]["busid"] for n in sorted((n for n in r.document["nodes"] if n["kind"] == "gpu"),
                                                   key=lambda n: n["attrs"]["index"])]
    assert busids == ["0000:05:00.0", "0000:26:00.0", "0000:46:00.0", "0000:65:00.0"]
    assert r.matrix["differ"] == [] and r.matrix["engine"][0] == ["X", "NV1", "NV1", "NV1"]
    assert r.ids["GPU2"] == "h0/gpu2"


@pytest.mark.parametrize("template", ["dgx-b200", "hgx-b300", "dgx-h200", "hgx-h200", "aws-p5e", "aws-p5en"])
def test_new_nvidia_templates_survive_nccl_xml_export_and_import(template):
    """Exported NCCL XML re-imports with the same topo-matrix and the same NVLink generation."""
    from designer.engine.io import export_nccl_xml

    doc = normalize(host_document(template))
    back = import_text(export_nccl_xml(doc, "h0"))
    from designer.engine.model.pathclass import topo_matrix

    assert back.matrix["engine"] == topo_matrix(Topology.compile(doc), "h0")["matrix"]
    gen = {l["tech"][6] for l in doc["links"] if (l.get("tech") or "").startswith("nvlink")}
    assert {l["tech"][6] for l in back.document["links"] if (l.get("tech") or "").startswith("nvlink")} == gen

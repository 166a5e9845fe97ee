"""NCCL/RCCL XML export of an AMD host keeps its xGMI mesh through export → import.

``amd-mi300x`` (one host)::

    [gpu0]--[gpu1]--...--[gpu7]        28 direct xGMI links (xgmi-mi300), one per GPU pair
    [gpuI]--[pcieI]--[nicI]            one Gen5 switch per GPU with its 400G NIC, 4 per socket

RCCL writes AMD GPUs as ``<pci class="0x120000">`` with ``<gpu … gcn="gfx942">`` and one
``<xgmi target count tclass="0x120000"/>`` per peer (ROCm/rccl
tools/topo_expl/models/topo_8p_940.xml), in a ``<system version="2">`` file.
"""
import re

import pytest

from designer.engine.traffic.collectives import ring_orders
from designer.engine.document import normalize
from designer.engine.io import export_nccl_xml, import_text
from designer.engine.io.safe_xml import parse_xml
from designer.engine.model.pathclass import topo_matrix
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology


def _gpu_links(doc):
    gpus = {n["id"] for n in doc["nodes"] if n["kind"] == "gpu"}
    return sorted((tuple(sorted((l["a"], l["b"]))), l.get("tech")) for l in doc["links"]
                  if l["a"] in gpus and l["b"] in gpus)


def _kinds(doc):
    out = {}
    for n in doc["nodes"]:
        out[n["kind"]] = out.get(n["kind"], 0) + 1
    return out


@pytest.mark.parametrize("template,tech", [("amd-mi300x", "xgmi-mi300"), ("amd-mi325x", "xgmi-mi325")])
def test_amd_host_round_trip_keeps_the_xgmi_mesh(template, tech):
    doc = normalize(host_document(template, host_id="h0"))
    xml = export_nccl_xml(doc, "h0")
    assert xml.startswith('<system version="2"')
    for line in xml.strip().splitlines():   # RCCL's reader: one tag a line, ≤ 16 attributes
        tag = line.strip()
        assert re.fullmatch(r'</?[a-z]+( [a-z_]+="[^"&<>]{0,254}")*/?>', tag), tag
        assert tag.count('="') <= 16
    again = import_text(xml, host_id="h0")
    assert again.warnings == []
    original = _kinds(doc)
    original.pop("memory", None)               # NCCL/RCCL XML has no memory element
    assert _kinds(again.document) == original
    links = _gpu_links(again.document)
    assert len(links) == 28 and {t for _, t in links} == {tech}
    assert [p for p, _ in links] == [p for p, _ in _gpu_links(doc)]
    assert topo_matrix(Topology.compile(again.document), "h0")["matrix"] == \
        topo_matrix(Topology.compile(doc), "h0")["matrix"]


def test_amd_gpu_elements_follow_rccl():
    """Each GPU: class 0x120000, PCI id 1002:74a1, gcn gfx942, seven <xgmi> peers, each pair
    listed on both GPUs (as RCCL's model file lists them)."""
    xml = export_nccl_xml(normalize(host_document("amd-mi300x", host_id="h0")), "h0")
    root = parse_xml(xml)
    gpus = [p for p in root.iter("pci") if p.find("gpu") is not None]
    assert len(gpus) == 8
    pairs = set()
    for pci in gpus:
        assert (pci.get("class"), pci.get("vendor"), pci.get("device")) == ("0x120000", "0x1002", "0x74a1")
        gpu = pci.find("gpu")
        assert gpu.get("gcn") == "gfx942"
        peers = gpu.findall("xgmi")
        assert len(peers) == 7 and {x.get("tclass") for x in peers} == {"0x120000"}
        assert {x.get("count") for x in peers} == {"1"}
        pairs |= {(pci.get("busid"), x.get("target")) for x in peers}
    assert all((b, a) in pairs for a, b in pairs) and len(pairs) == 56
    assert "<nvlink" not in xml


def test_reimported_host_gets_the_mesh_channels():
    """The re-imported host is a direct mesh again: 7 link-disjoint rings, not 1."""
    doc = normalize(host_document("amd-mi300x", host_id="h0"))
    topo = Topology.from_document(import_text(export_nccl_xml(doc, "h0"), host_id="h0").document)
    gpus = [i for i, k in enumerate(topo.node_kind) if k == "gpu"]
    orders = ring_orders(topo, gpus)
    hops = {(a, b) for o in orders for a, b in zip(o.tolist(), o.tolist()[1:] + o.tolist()[:1])}
    assert len(orders) == 7 and len(hops) == 56


def test_nvidia_export_is_unchanged_by_the_amd_path():
    xml = export_nccl_xml(normalize(host_document("dgx-h100", host_id="h0")), "h0")
    assert xml.startswith('<system version="1"') and "<xgmi" not in xml and "0x120000" not in xml
    assert 'class="0x030200"' in xml

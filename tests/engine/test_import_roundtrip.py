"""Export a host to NCCL XML and import it back: same counts, same topo_matrix."""
from __future__ import annotations

import re

import pytest

from designer.engine.document import normalize
from designer.engine.io import export_nccl_xml, import_text
from designer.engine.model.pathclass import topo_matrix
from designer.engine.model.templates import host_document
from designer.engine.model.topology import Topology
from tests.engine._import_helpers import kinds, read


def _matrix(doc):
    return topo_matrix(Topology.compile(doc), "h0")["matrix"]


def assert_nccl_readable(xml: str):
    """NCCL's reader (xml.cc): no XML declaration, each tag on one line, double-quoted values
    without entities, at most 16 attributes, values under 255 characters, version 1."""
    assert xml.startswith('<system version="1"')
    for line in xml.strip().splitlines():
        tag = line.strip()
        assert re.fullmatch(r'</?[a-z]+( [a-z_]+="[^"&<>]{0,254}")*/?>', tag), tag
        assert tag.count('="') <= 16


def test_imported_dgx_a100_round_trip():
    first = import_text(read("dgx-a100-nccl-dump.xml"))
    xml = export_nccl_xml(first.document, "h0")
    assert_nccl_readable(xml)
    again = import_text(xml)
    assert again.warnings == []
    assert kinds(again.document) == kinds(first.document)
    assert _matrix(again.document) == _matrix(first.document)
    caps = lambda d: sorted(l["capacity_gbps"] for l in d["links"])  # noqa: E731
    assert caps(again.document) == caps(first.document)


@pytest.mark.parametrize("template", ["dgx-a100", "dgx-h100", "aws-p4d", "aws-p5", "pcie-commodity"])
def test_template_round_trip(template):
    """Templates with several root complexes per socket keep NODE via ``host_bridge``."""
    doc = normalize(host_document(template, host_id="h0"))
    xml = export_nccl_xml(doc, "h0")
    assert_nccl_readable(xml)
    again = import_text(xml, host_id="h0")
    original = kinds(doc)
    original.pop("memory", None)                 # NCCL XML has no memory element
    assert kinds(again.document) == original
    assert _matrix(again.document) == _matrix(doc)


def test_nvidia_smi_import_round_trip():
    first = import_text(read("dgx-a100-topo-m.txt"))
    again = import_text(export_nccl_xml(first.document, "h0"))
    assert _matrix(again.document) == _matrix(first.document)
    assert kinds(again.document) == kinds(first.document)

"""SimAI topology through the API: ``POST /topologies/import/`` with ``format=simai-topo`` (the
uploaded content only, never a path) and ``GET /topologies/<id>/export/?format=simai-topo``,
byte-stable. Fixture: ``tests/engine/data/simai_topo/`` (``tools/simai_topo_fixtures.py``)."""
from __future__ import annotations

import pathlib

from tests.api.conftest import API, assert_error

DATA = pathlib.Path(__file__).parent.parent / "engine" / "data" / "simai_topo"


def test_upload_then_export_gives_back_the_same_bytes(api):
    src = DATA / "DCN+SingleToR_128g_8gps_400Gbps_H100"
    with open(src, "rb") as upload:
        response = api.post(f"{API}/topologies/import/", {"name": "dcn", "file": upload, "format": "simai-topo"},
                            format="multipart")
    assert response.status_code == 201, response.content[:500]
    body = response.json()
    assert body["format"] == "simai-topo" and body["topology"]["gpu_count"] == 128
    export = api.get(f"{API}/topologies/{body['topology']['id']}/export/?format=simai-topo")
    assert export.status_code == 200 and export["Content-Type"].startswith("text/plain")
    assert export.content == src.read_bytes()


def test_bad_text_and_a_path_as_text_are_located_errors(api):
    error = assert_error(api.post(f"{API}/topologies/import/", {"name": "x", "format": "simai-topo",
                                                               "text": "4 2 1 1 9 H100\n2 3 \n"}), 400, "import_error")
    assert any("line 1" in d["path"] for d in error["details"]), error
    error = assert_error(api.post(f"{API}/topologies/import/", {"name": "x", "format": "simai-topo",
                                                               "text": str(DATA / "DCN+SingleToR_128g_8gps_400Gbps_H100")}),
                         400, "import_error")
    assert any("line 1" in d["path"] for d in error["details"]), error


def test_a_design_with_nics_is_refused_located(api, small_topology):
    error = assert_error(api.get(f"{API}/topologies/{small_topology.pk}/export/?format=simai-topo"), 400)
    assert error["details"][0]["path"].startswith("document.nodes["), error

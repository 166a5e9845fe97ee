"""``POST /api/v1/topologies/build-preview/`` with ``"document": false``: the summary and the BOM
counted from the spec (``engine.model.bom.plan_bom``), past the build's limits, up to
``MAX_PREVIEW_HOSTS`` hosts; without it, the document as before."""
from __future__ import annotations

import pytest

from designer.bridge.facts import MAX_BUILD_HOSTS, MAX_PREVIEW_HOSTS
from designer.models import Topology
from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db


def test_a_100k_gpu_design_previews_without_a_document(api):
    """12,500 DGX-H100 = 100,000 GPUs and 100,000 400G NIC ports (was refused: at most 2,048)."""
    response = api.post(f"{API}/topologies/build-preview/",
                        {"template": "dgx-h100", "hosts": 12_500, "document": False}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert "document" not in body
    assert body["summary"]["gpus"] == 100_000 and body["summary"]["hosts"] == 12_500
    host_links = [r for r in body["bom"]["links"] if r["kind"] == "host-leaf"]
    assert sum(r["ports"] for r in host_links) == 100_000
    assert not Topology.objects.exists()


def test_456_nvl72_racks_preview(api):
    """456 GB200 NVL72 racks: 820,800 nodes and links, over FABRICSCOPE_BUILD_MAX_ELEMENTS, but
    the preview builds none of them: 456 × 72 = 32,832 GPUs, 456 × 18 = 8,208 trays."""
    response = api.post(f"{API}/topologies/build-preview/",
                        {"template": "gb200-nvl72", "hosts": 456, "document": False}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["summary"]["gpus"] == 32_832
    assert response.json()["summary"]["hosts"] == 8_208


def test_the_preview_limit_is_named(api):
    error = assert_error(api.post(f"{API}/topologies/build-preview/",
                                  {"template": "dgx-h100", "hosts": MAX_PREVIEW_HOSTS + 1, "document": False},
                                  format="json"), 400)
    assert paths_of(error) == {"hosts"}
    error = assert_error(api.post(f"{API}/topologies/build-preview/",
                                  {"template": "dgx-h100", "hosts": MAX_BUILD_HOSTS + 1}, format="json"), 400)
    assert "MAX_BUILD_HOSTS" in str(error) and "document" in str(error)


def test_the_plan_and_the_document_preview_agree(api):
    """16 DGX-H100 + 1 storage server: the same summary and BOM either way."""
    spec = {"template": "dgx-h100", "hosts": 16, "storage": 1, "oversubscription": 1.5}
    full = api.post(f"{API}/topologies/build-preview/", spec, format="json").json()
    plan = api.post(f"{API}/topologies/build-preview/", {**spec, "document": False}, format="json").json()
    assert "document" in full
    assert plan["bom"] == full["bom"] and plan["summary"] == full["summary"]


@pytest.mark.parametrize("value", [0, 1, "false", "yes", None])
def test_document_is_a_json_boolean_only(api, value):
    """The schema says boolean: DRF's BooleanField took 0, 1, "false" and "yes" (found by
    schemathesis's negative checks: ``"document": 0`` answered 200)."""
    error = assert_error(api.post(f"{API}/topologies/build-preview/",
                                  {"template": "dgx-h100", "hosts": 2, "document": value}, format="json"), 400)
    assert paths_of(error) == {"document"}

"""Revisions: list, get by number, save with a base revision; a stale base is a 409."""
from __future__ import annotations

import pytest

from tests.api.conftest import API, assert_error, paths_of
from tests.api.test_topologies import TWO_GPUS, broken

pytestmark = pytest.mark.django_db


def test_list_get_and_save(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/revisions/"
    body = api.get(url).json()
    assert body["count"] == 1 and body["results"][0]["number"] == 1
    assert "document" not in body["results"][0]
    first = api.get(url + "1/").json()
    assert first["document"]["format"] == "fabricscope.topology/1" and first["author"] == "alice"
    response = api.post(url, {"document": TWO_GPUS, "base_revision": 1, "message": "shrink"})
    assert response.status_code == 201, response.content
    assert (response.json()["number"], response.json()["message"]) == (2, "shrink")
    assert api.get(f"{API}/topologies/{small_topology.pk}/").json()["gpu_count"] == 2
    assert [r["number"] for r in api.get(url).json()["results"]] == [2, 1]
    assert [r["number"] for r in api.get(url + "?ordering=number").json()["results"]] == [1, 2]
    assert_error(api.get(url + "3/"), 404, "not_found")


def test_stale_base_revision_is_409_with_current_number(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/revisions/"
    assert api.post(url, {"document": TWO_GPUS, "base_revision": 1}).status_code == 201
    error = assert_error(api.post(url, {"document": TWO_GPUS, "base_revision": 1}), 409,
                         "conflict")
    assert error["details"] == {"current_revision": 2, "base_revision": 1}
    assert api.get(url).json()["count"] == 2


def test_invalid_document_is_located_and_saves_nothing(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/revisions/"
    error = assert_error(api.post(url, {"document": broken(TWO_GPUS), "base_revision": 1}),
                         400, "invalid_topology")
    assert paths_of(error) == {"document.links[1].b"}
    error = assert_error(api.post(url, {"document": TWO_GPUS}), 400, "invalid")
    assert paths_of(error) == {"base_revision"}
    assert api.get(url).json()["count"] == 1


def test_unknown_topology_404(api):
    assert_error(api.get(f"{API}/topologies/999999/revisions/"), 404, "not_found")
    assert_error(api.get(f"{API}/topologies/99999999999999999999999/revisions/1/"), 404)


# --- saving by patch ------------------------------------------------------------------------
# small_topology is 2 DGX-H100 hosts: h0/pcie0 is a PCIe switch holding h0/nvme0..; the patch
# adds one NVMe behind it and renames the design:
#     [h0/pcie0]--pcie5x4--[h0/nvme9]   (new)


def _nvme_patch(**extra) -> dict:
    return {"nodes": {"add": [{"id": "h0/nvme9", "kind": "nvme", "group": "h0"}]},
            "links": {"add": [{"id": "h0/pcie0-nvme9", "a": "h0/pcie0", "b": "h0/nvme9",
                               "tech": "pcie5x4"}]},
            "name": "pod-2 + nvme", **extra}


def test_patch_save_applies_to_the_base_and_stores_a_whole_document(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/revisions/"
    before = api.get(url + "1/").json()["document"]
    response = api.post(url, {"patch": _nvme_patch(), "base_revision": 1, "message": "nvme"})
    assert response.status_code == 201, response.content
    saved = api.get(url + "2/").json()["document"]
    assert saved["name"] == "pod-2 + nvme"
    assert len(saved["nodes"]) == len(before["nodes"]) + 1
    assert len(saved["links"]) == len(before["links"]) + 1
    link = saved["links"][-1]
    # normalized like any saved document: the catalog filled in the capacity
    assert (link["id"], link["capacity_gbps"] > 0) == ("h0/pcie0-nvme9", True)
    assert saved["nodes"][:-1] == before["nodes"]
    assert api.get(f"{API}/topologies/{small_topology.pk}/").json()["node_count"] == \
        len(before["nodes"]) + 1


def test_patch_removal_and_empty_patch(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/revisions/"
    before = api.get(url + "1/").json()["document"]
    gone = [link["id"] for link in before["links"] if "h0/nvme0" in (link["a"], link["b"])]
    patch = {"nodes": {"remove": ["h0/nvme0"]}, "links": {"remove": gone}}
    assert api.post(url, {"patch": patch, "base_revision": 1}).status_code == 201
    saved = api.get(url + "2/").json()["document"]
    assert "h0/nvme0" not in {n["id"] for n in saved["nodes"]}
    assert len(saved["links"]) == len(before["links"]) - len(gone)
    # a no-op edit saved by patch: a new revision with the very same content
    response = api.post(url, {"patch": {}, "base_revision": 2})
    assert response.status_code == 201
    assert response.json()["checksum"] == api.get(url + "2/").json()["checksum"]


def test_patch_on_a_stale_base_is_409(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/revisions/"
    assert api.post(url, {"patch": _nvme_patch(), "base_revision": 1}).status_code == 201
    error = assert_error(api.post(url, {"patch": {"name": "late"}, "base_revision": 1}), 409,
                         "conflict")
    assert error["details"] == {"current_revision": 2, "base_revision": 1}
    assert api.get(url).json()["count"] == 2


def test_bad_patch_is_400_located_and_saves_nothing(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/revisions/"
    misfit = {"links": {"update": [{"id": "h9/x", "a": "h0/gpu0", "b": "h0/pcie0"}]},
              "nodes": {"remove": ["h0/nope"]}}
    error = assert_error(api.post(url, {"patch": misfit, "base_revision": 1}), 400,
                         "invalid_patch")
    assert paths_of(error) == {"patch.links.update[0].id", "patch.nodes.remove[0]"}
    assert "no link 'h9/x'" in {d["message"] for d in error["details"]}
    # fits the base, but the result is no topology: located in the resulting document, whose
    # added items follow the base's
    n_links = len(api.get(url + "1/").json()["document"]["links"])
    dangling = {"links": {"add": [{"id": "x", "a": "h0/gpu0", "b": "h0/ghost",
                                   "tech": "pcie5x16"}]}}
    error = assert_error(api.post(url, {"patch": dangling, "base_revision": 1}), 400,
                         "invalid_topology")
    assert paths_of(error) == {f"document.links[{n_links}].b"}
    assert paths_of(assert_error(api.post(url, {"patch": [], "base_revision": 1}), 400)) == \
        {"patch"}
    both = {"patch": {}, "document": TWO_GPUS, "base_revision": 1}
    assert paths_of(assert_error(api.post(url, both), 400, "invalid")) == {"document"}
    assert api.get(url).json()["count"] == 1


def test_patch_needs_a_base_revision(api, user):
    from designer import services

    empty = services.topology_create(owner=user, name="blank")
    url = f"{API}/topologies/{empty.pk}/revisions/"
    error = assert_error(api.post(url, {"patch": {"name": "x"}, "base_revision": 0}), 400)
    assert paths_of(error) == {"patch"}


def test_schema_patch_example_fits_the_schema_document(api, user):
    """The documented patch example applies to the documented document and validates."""
    from api.schema.examples import EXAMPLE_DOCUMENT
    from api.schema.revisions import EXAMPLE_PATCH

    created = api.post(f"{API}/topologies/", {"name": "ex", "document": EXAMPLE_DOCUMENT})
    url = f"{API}/topologies/{created.json()['id']}/revisions/"
    response = api.post(url, {"patch": EXAMPLE_PATCH, "base_revision": 1})
    assert response.status_code == 201, response.content
    saved = response.json()["document"]
    assert sorted(n["id"] for n in saved["nodes"]) == ["gpu0", "gpu1", "gpu2", "sw0"]
    assert sorted(link["id"] for link in saved["links"]) == ["gpu0-sw0", "gpu2-sw0"]

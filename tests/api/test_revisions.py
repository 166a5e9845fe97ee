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

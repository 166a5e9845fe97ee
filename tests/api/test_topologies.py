"""Topologies: create from a document or a build spec, list/filter/search, update, delete,
build preview, validation, export (JSON and GraphML) and import."""
from __future__ import annotations

import io
from pathlib import Path

import networkx as nx
import pytest

from designer.models import Topology

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db

DATA = Path(__file__).resolve().parent.parent / "engine" / "data" / "import"

# [gpu0]--pcie5x16--[sw0]--pcie5x16--[gpu1]
TWO_GPUS = {
    "format": "fabricscope.topology/1", "name": "two-gpus",
    "nodes": [{"id": "gpu0", "kind": "gpu"}, {"id": "gpu1", "kind": "gpu"},
              {"id": "sw0", "kind": "pcie_switch"}],
    "links": [{"a": "gpu0", "b": "sw0", "tech": "pcie5x16"},
              {"a": "gpu1", "b": "sw0", "tech": "pcie5x16"}]}


def broken(document: dict) -> dict:
    """TWO_GPUS with links[1].b naming a node that does not exist."""
    links = [dict(link) for link in document["links"]]
    links[1]["b"] = "sw9"
    return {**document, "links": links}


def test_create_from_document(api, user):
    response = api.post(f"{API}/topologies/", {"name": "lab", "description": "a box",
                                               "document": TWO_GPUS})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["name"] == "lab" and body["owner"] == "alice"
    assert (body["revision_number"], body["gpu_count"], body["node_count"],
            body["link_count"]) == (1, 2, 3, 2)
    assert Topology.objects.get(pk=body["id"]).owner == user


def test_create_by_building_a_cluster(api):
    """4 DGX H100 (8 GPUs, 8 compute NICs each) on 8 rails: 32 GPUs, one call."""
    response = api.post(f"{API}/topologies/", {
        "name": "pod", "build": {"template": "dgx-h100", "hosts": 4, "fabric": "rail-optimized",
                                 "spines": 2}})
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["host_count"], body["gpu_count"], body["revision_number"]) == (4, 32, 1)


def test_document_must_be_an_object_never_a_path(api, small_topology):
    for url, body in ((f"{API}/topologies/", {"name": "x"}),
                      (f"{API}/topologies/{small_topology.pk}/revisions/", {"base_revision": 1})):
        error = assert_error(api.post(url, {**body, "document": "/etc/passwd"}), 400, "invalid")
        assert paths_of(error) == {"document"}


def test_create_invalid_document_locates_each_problem(api):
    error = assert_error(api.post(f"{API}/topologies/", {"name": "x", "document": broken(TWO_GPUS)}),
                         400, "invalid_topology")
    assert "document.links[1].b" in paths_of(error), error
    assert not Topology.objects.exists()


@pytest.mark.parametrize("body, path", [
    ({"name": "x"}, ""),                                                  # neither
    ({"name": "x", "document": TWO_GPUS, "build": {"template": "dgx-h100", "hosts": 1}}, ""),
    ({"document": TWO_GPUS}, "name"),
    ({"name": "x", "build": {"template": "nope", "hosts": 1}}, "build.template"),
    ({"name": "x", "build": {"template": "dgx-h100", "hosts": 0}}, "build.hosts"),
])
def test_create_shape_errors_are_located(api, body, path):
    error = assert_error(api.post(f"{API}/topologies/", body), 400, "invalid")
    assert path in paths_of(error), error


def test_build_with_bad_engine_option_is_located(api):
    """rails=9 on a host with 8 compute NICs: the engine's problem names the parameter."""
    error = assert_error(api.post(f"{API}/topologies/", {
        "name": "x", "build": {"template": "dgx-h100", "hosts": 2, "rails": 9}}), 400)
    assert "rails" in {p.split(".")[-1] for p in paths_of(error)}, error


def test_duplicate_name_is_a_400(api, small_topology):
    assert_error(api.post(f"{API}/topologies/", {"name": small_topology.name,
                                                 "document": TWO_GPUS}), 400, "invalid")


def test_list_only_mine_with_filters_search_ordering_and_pages(api, bob, small_topology):
    for i in range(3):
        assert api.post(f"{API}/topologies/", {"name": f"lab-{i}", "description": "bench",
                                               "document": TWO_GPUS}).status_code == 201
    assert bob.post(f"{API}/topologies/", {"name": "bobs", "document": TWO_GPUS}).status_code == 201
    body = api.get(f"{API}/topologies/").json()
    assert body["count"] == 4 and "bobs" not in {t["name"] for t in body["results"]}
    assert api.get(f"{API}/topologies/?search=bench").json()["count"] == 3
    assert api.get(f"{API}/topologies/?min_gpus=16").json()["results"][0]["name"] == "pod-2"
    names = [t["name"] for t in api.get(f"{API}/topologies/?ordering=name").json()["results"]]
    assert names == sorted(names)
    page = api.get(f"{API}/topologies/?page_size=2&page=2").json()
    assert page["count"] == 4 and len(page["results"]) == 2 and page["previous"]
    assert_error(api.get(f"{API}/topologies/?page=9"), 404, "not_found")
    assert_error(api.get(f"{API}/topologies/?min_gpus=many"), 400, "invalid")


def test_retrieve_update_delete(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/"
    assert api.get(url).json()["gpu_count"] == 16
    response = api.patch(url, {"name": "pod-renamed", "description": "d"})
    assert response.status_code == 200 and response.json()["name"] == "pod-renamed"
    assert_error(api.patch(url, {"name": ""}), 400, "invalid")
    assert_error(api.put(url, {"name": "x"}), 405, "method_not_allowed")
    assert api.delete(url).status_code == 204
    assert_error(api.get(url), 404, "not_found")


def test_another_users_topology_is_404_everywhere(bob, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/"
    for response in (bob.get(url), bob.patch(url, {"name": "mine"}), bob.delete(url),
                     bob.get(url + "export/"), bob.get(url + "revisions/"),
                     bob.get(url + "revisions/1/"),
                     bob.post(url + "revisions/", {"document": TWO_GPUS, "base_revision": 1})):
        assert_error(response, 404, "not_found")
    assert Topology.objects.get(pk=small_topology.pk).name == "pod-2"


def test_build_preview_saves_nothing(api):
    response = api.post(f"{API}/topologies/build-preview/",
                        {"template": "dgx-h100", "hosts": 2, "name": "p"})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["document"]["format"] == "fabricscope.topology/1"
    assert body["summary"]["gpus"] == 16 and body["summary"]["hosts"] == 2
    assert not Topology.objects.exists()
    error = assert_error(api.post(f"{API}/topologies/build-preview/",
                                  {"template": "dgx-h100", "hosts": 2, "fabric": "ring"}), 400)
    assert "fabric" in paths_of(error)


def test_build_preview_host_limit(api, settings):
    settings.FABRICSCOPE_API_MAX_BUILD_HOSTS = 4
    error = assert_error(api.post(f"{API}/topologies/build-preview/",
                                  {"template": "dgx-h100", "hosts": 5}), 400, "invalid")
    assert paths_of(error) == {"hosts"}


def test_validate(api):
    assert api.post(f"{API}/validate/", {"document": TWO_GPUS}).json() == {
        "valid": True, "problems": []}
    body = api.post(f"{API}/validate/", {"document": broken(TWO_GPUS)}).json()
    assert body["valid"] is False
    assert [p["path"] for p in body["problems"]] == ["links[1].b"]
    body = api.post(f"{API}/validate/", {"document": {"format": "x"}}).json()
    assert body["valid"] is False and {"format", "nodes", "links"} <= {
        p["path"] for p in body["problems"]}
    # Not an object (a string would be read as a file path by the engine's loader): a 400.
    for document in ([1, 2], "/etc/passwd"):
        error = assert_error(api.post(f"{API}/validate/", {"document": document}), 400)
        assert paths_of(error) == {"document"}
    assert_error(api.post(f"{API}/validate/", {}), 400, "invalid")


def test_export_json_and_graphml(api, small_topology):
    url = f"{API}/topologies/{small_topology.pk}/export/"
    response = api.get(url)
    assert response.status_code == 200 and response["Content-Type"] == "application/json"
    document = response.json()
    assert document["format"] == "fabricscope.topology/1"
    assert "attachment" in response["Content-Disposition"]
    response = api.get(url + "?format=graphml")
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Type"].startswith("application/graphml+xml")
    graph = nx.read_graphml(io.BytesIO(response.content), force_multigraph=True)
    assert graph.number_of_nodes() == len(document["nodes"])
    assert graph.number_of_edges() == len(document["links"])
    assert graph.nodes["h0/gpu0"]["kind"] == "gpu"
    link = document["links"][0]
    edge = graph.get_edge_data(link["a"], link["b"])
    assert link["id"] in edge and edge[link["id"]]["capacity_gbps"] == link["capacity_gbps"]
    assert_error(api.get(url + "?format=png"), 400, "invalid")
    assert_error(api.get(url + "?format=graphml&revision=9"), 404, "not_found")
    assert api.get(url + "?revision=1").status_code == 200


def test_import_nvidia_smi_text_and_multipart(api):
    text = (DATA / "dgx-a100-topo-m.txt").read_text()
    response = api.post(f"{API}/topologies/import/", {"name": "node17", "text": text})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["format"] == "nvidia-smi" and body["topology"]["gpu_count"] == 8
    assert isinstance(body["warnings"], list) and body["warnings"]
    with open(DATA / "two-socket-hwloc.xml", "rb") as upload:
        response = api.post(f"{API}/topologies/import/",
                            {"name": "hw", "file": upload, "host_id": "n1"}, format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["format"] == "hwloc"


def test_import_errors_are_located(api):
    error = assert_error(api.post(f"{API}/topologies/import/",
                                  {"name": "x", "text": "hello world"}), 400, "import_error")
    assert paths_of(error) == {"text.format"}, error
    assert_error(api.post(f"{API}/topologies/import/", {"name": "x"}), 400, "invalid")
    assert_error(api.post(f"{API}/topologies/import/",
                          {"name": "x", "text": "<system>", "host_id": "a b"}), 400, "invalid")


NVIDIA_SMI_TWO_GPUS = (
    "\tGPU0\tGPU1\tNIC0\tCPU Affinity\tNUMA Affinity\n"
    "GPU0\t X \tNV4\tPIX\t0-15\t0\n"
    "GPU1\tNV4\t X \tPHB\t0-15\t0\n"
    "NIC0\tPIX\tPHB\t X \t\t\n"
    "\nNIC Legend:\n\n  NIC0: mlx5_0\n")


def test_import_preview_returns_a_host_and_saves_nothing(api, user):
    """The editor's Import: the host comes back under the requested id; no topology is created."""
    from designer.models import Topology

    before = Topology.objects.count()
    response = api.post(f"{API}/topologies/import-preview/",
                        {"text": NVIDIA_SMI_TWO_GPUS, "host_id": "h7"}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["format"] == "nvidia-smi"
    ids = {n["id"] for n in body["document"]["nodes"]}
    assert {"h7/gpu0", "h7/gpu1"} <= ids
    assert any(g["id"] == "h7" and g["kind"] == "host" for g in body["document"]["groups"])
    assert Topology.objects.count() == before


def test_import_preview_garbage_is_a_located_400(api, user):
    response = api.post(f"{API}/topologies/import-preview/", {"text": "hello"}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["details"]


@pytest.mark.parametrize("when, status, count", [
    ("6055-06-26T09:31:52.907404-23:24", 200, 0),   # valid ISO 8601; PostgreSQL refuses a -23:24 offset as such
    ("2000-01-01T00:00:00+14:30", 200, 1),          # the small topology was updated after 2000
    ("9999-12-31T23:00:00-05:00", 400, None),       # past year 9999 once in UTC
    ("0001-01-01T00:30:00+01:00", 400, None)])      # before year 1 once in UTC
def test_updated_after_compares_in_utc_and_refuses_what_the_calendar_cannot_hold(api, small_topology, when, status,
                                                                                  count):
    """Found by schemathesis on PostgreSQL: an odd UTC offset reached the database and was a 500.
    The filter converts to UTC first; a time the conversion moves out of years 1-9999 is a 400."""
    response = api.get(f"{API}/topologies/", {"updated_after": when})
    assert response.status_code == status, response.content[:300]
    if status == 200:
        assert response.json()["count"] == count
    else:
        assert_error(response, 400)

"""Per-user quotas, each a clear 4xx in the one error shape.

The fault: nothing bounded what one account could make the server do or keep — a 60-byte
``build-preview`` request for 2,048 hosts costs ~6 s of CPU, any number of them could follow,
and topologies and revisions piled up without end. Now (``designer.ops.limits``):

- topologies owned: ``FABRICSCOPE_QUOTA_TOPOLOGIES`` → 403 ``quota_exceeded``;
- revision documents stored, counted for the topology's *owner* whoever saves:
  ``FABRICSCOPE_QUOTA_STORED_BYTES`` → 403 ``quota_exceeded``;
- nodes + links of one build request: ``FABRICSCOPE_BUILD_MAX_ELEMENTS`` → 400
  ``build_too_large``, and per user per minute: ``FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE`` → 429
  ``build_rate_exceeded``; both estimated from the one-host template before building.

One ``pcie-commodity`` host with ``gpus=1, nvme=0`` is 4 nodes and 3 links (7 elements)::

    [mem0]--ddr5--[cpu0]--pcie--[gpu0]
                    |
                  pcie--[nic0]
"""
from __future__ import annotations

import json

import pytest

from designer import services
from designer.models import SimulationJob, Topology, TopologyRevision
from designer.ops import limits

pytestmark = pytest.mark.django_db

ONE_GPU = {"template": "pcie-commodity", "params": {"gpus": 1, "nvme": 0}}
TWO_GPUS = {"format": "fabricscope.topology/1", "name": "two",
            "nodes": [{"id": "g0", "kind": "gpu"}, {"id": "g1", "kind": "gpu"}],
            "links": [{"a": "g0", "b": "g1", "capacity_gbps": 100.0}]}


def error_of(response, status: int, code: str) -> dict:
    assert response.status_code == status, response.content[:400]
    error = response.json()["error"]
    assert error["code"] == code and error["message"]
    return error


def test_build_elements_from_the_one_host_spec():
    assert limits.build_elements(template="pcie-commodity", hosts=1,
                                 options={"params": {"gpus": 1, "nvme": 0}}) == 7
    assert limits.build_elements(template="pcie-commodity", hosts=10,
                                 options={"params": {"gpus": 1, "nvme": 0}}) == 70
    assert limits.build_elements(template="no-such-template", hosts=10) == 0  # the build says why


def test_topology_quota(world, api_as, settings):
    """bob owns one topology (``bob-secret``): with a quota of 1 he cannot make a second."""
    settings.FABRICSCOPE_QUOTA_TOPOLOGIES = 1
    client = api_as("stranger")
    before = Topology.objects.count()
    error = error_of(client.post("/api/v1/topologies/", {"name": "second", "document": TWO_GPUS},
                                 format="json"), 403, "quota_exceeded")
    assert error["details"] == {"quota": "topologies", "used": 1, "limit": 1}
    build = {"name": "built", "build": {**ONE_GPU, "hosts": 1}}
    error_of(client.post("/api/v1/topologies/", build, format="json"), 403, "quota_exceeded")
    # the job path creates its topology when it queues the job: refused the same, nothing queued
    jobs = SimulationJob.objects.count()
    error_of(client.post("/api/v1/topologies/build-job/", build, format="json"), 403, "quota_exceeded")
    assert Topology.objects.count() == before and SimulationJob.objects.count() == jobs
    settings.FABRICSCOPE_QUOTA_TOPOLOGIES = 2
    assert client.post("/api/v1/topologies/", {"name": "second", "document": TWO_GPUS},
                       format="json").status_code == 201


def test_topology_quota_on_the_page(world, page_as, settings):
    settings.FABRICSCOPE_QUOTA_TOPOLOGIES = 1
    response = page_as("stranger").post("/topologies/new/", {
        "name": "second", "source": "cluster", "template": "pcie-commodity", "hosts": 1,
        "fabric": "rail-optimized", "storage": 0})
    assert response.status_code == 403
    assert "FABRICSCOPE_QUOTA_TOPOLOGIES" in response.content.decode()


def test_storage_quota_counts_for_the_owner_whoever_saves(world, api_as, settings):
    """eve (editor) saves into alice's topology: alice's storage is what fills up."""
    alice = world.users["owner"]
    used = limits.stored_bytes(user=alice)
    assert used > 0
    url = f"/api/v1/topologies/{world.topology.pk}/revisions/"
    size = len(json.dumps(services.topologies.bridge.normalize_document(TWO_GPUS),
                          sort_keys=True, separators=(",", ":")).encode())
    settings.FABRICSCOPE_QUOTA_STORED_BYTES = used + size - 1
    error = error_of(api_as("editor").post(url, {"document": TWO_GPUS, "base_revision": 1},
                                           format="json"), 403, "quota_exceeded")
    assert error["details"] == {"quota": "stored_bytes", "used_bytes": used, "size_bytes": size,
                                "limit_bytes": used + size - 1}
    assert TopologyRevision.objects.filter(topology=world.topology).count() == 1
    settings.FABRICSCOPE_QUOTA_STORED_BYTES = used + size  # exactly enough
    response = api_as("editor").post(url, {"document": TWO_GPUS, "base_revision": 1},
                                     format="json")
    assert response.status_code == 201, response.content[:300]
    assert limits.stored_bytes(user=alice) >= used + size * 0.5  # SQLite stores its own spacing


def test_build_too_large_for_one_request(world, api_as, settings):
    settings.FABRICSCOPE_BUILD_MAX_ELEMENTS = 69  # 10 hosts make 70
    client = api_as("stranger")
    error = error_of(client.post("/api/v1/topologies/build-preview/", {**ONE_GPU, "hosts": 10},
                                 format="json"), 400, "build_too_large")
    assert error["details"] == {"hosts": 10, "elements": 70, "limit_elements": 69}
    assert client.post("/api/v1/topologies/build-preview/", {**ONE_GPU, "hosts": 9},
                       format="json").status_code == 200


def test_build_budget_per_minute(world, api_as, settings, monkeypatch):
    """A budget of 100 elements a minute: 10 hosts (70) pass, 10 more (140 in all) do not; the
    refused build spends nothing, so 4 hosts (28, 98 in all) still fit. The next minute is a
    fresh budget."""
    settings.FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE = 100
    monkeypatch.setattr(limits, "_clock", lambda: 6_000_030.0)  # 30 s into a minute
    client = api_as("stranger")
    preview = "/api/v1/topologies/build-preview/"
    assert client.post(preview, {**ONE_GPU, "hosts": 10}, format="json").status_code == 200
    error = error_of(client.post(preview, {**ONE_GPU, "hosts": 10}, format="json"), 429,
                     "build_rate_exceeded")
    details = error["details"]
    assert (details["elements"], details["spent_elements"], details["limit_elements"]) == (
        70, 70, 100)
    assert details["retry_after_s"] == 31  # 30 s left in the window, plus one
    assert client.post(preview, {**ONE_GPU, "hosts": 4}, format="json").status_code == 200
    monkeypatch.setattr(limits, "_clock", lambda: 6_000_060.0)
    assert client.post(preview, {**ONE_GPU, "hosts": 10}, format="json").status_code == 200
    # another user's budget is their own
    assert api_as("owner").post(preview, {**ONE_GPU, "hosts": 10},
                                format="json").status_code == 200


def test_default_quotas_allow_the_2048_host_cluster():
    """The largest cluster the product is benchmarked on still builds in one request."""
    from django.conf import settings

    elements = limits.build_elements(template="dgx-h100", hosts=2048)
    assert elements == 2048 * (50 + 77)  # 50 nodes, 77 links per DGX-H100 host
    assert elements <= settings.FABRICSCOPE_BUILD_MAX_ELEMENTS
    assert elements <= settings.FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE

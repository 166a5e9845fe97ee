"""One request-body limit for the API and the pages: ``FABRICSCOPE_MAX_BODY_BYTES``.

The fault: the documented limit was 64 MiB, but Django's ``DATA_UPLOAD_MAX_MEMORY_SIZE``
(2.5 MiB) answered first, so a 192-host topology (3.4 MB) posted back as a revision got a 413
with empty ``details`` — the editor could not save any cluster above ~150 hosts. Now one setting
drives both, every oversized request gets ``{"error": {"code": "payload_too_large", "message",
"details": {"limit_bytes", "size_bytes"}}}``, and the default holds a 2,048-host document.
"""
from __future__ import annotations

import json

import pytest
from django.conf import settings

from designer import bridge

pytestmark = pytest.mark.django_db


def assert_413(response, limit: int, size: int) -> None:
    assert response.status_code == 413, response.content[:300]
    error = response.json()["error"]
    assert error["code"] == "payload_too_large"
    assert error["details"] == {"limit_bytes": limit, "size_bytes": size}
    assert f"{limit:,}" in error["message"]


def test_one_limit_drives_django_and_the_api():
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE == settings.FABRICSCOPE_MAX_BODY_BYTES
    # a CLI-built 4,096-host DGX-H100 document (32,768 GPUs, 86.7 MB) fits; it did not under 64 MiB
    assert settings.FABRICSCOPE_MAX_BODY_BYTES == 128 * 1024 * 1024


def test_over_the_limit_is_the_documented_413_on_api_and_pages(world, api_as, page_as, settings):
    settings.FABRICSCOPE_MAX_BODY_BYTES = 10_000
    body = json.dumps({"document": {"description": "x" * 20_000}, "base_revision": 1})
    size = len(body.encode())
    url = f"/api/v1/topologies/{world.topology.pk}/revisions/"
    assert_413(api_as("owner").post(url, data=body, content_type="application/json"),
               10_000, size)
    # anonymous too: refused before authentication, parsing or any database work
    assert_413(api_as("anon").post(url, data=body, content_type="application/json"), 10_000, size)
    # a page form (sign-in) and the figure endpoint get the same answer
    form = page_as("anon").post("/accounts/login/", {"username": "x" * 20_000, "password": "p"})
    assert form.status_code == 413 and form.json()["error"]["details"]["limit_bytes"] == 10_000
    figure = page_as("anon").post("/figures/path/", data=body, content_type="application/json")
    assert_413(figure, 10_000, size)


def test_just_under_the_limit_is_not_refused(world, api_as, settings):
    """The limit is on the body's bytes: one under passes the check (and then validation)."""
    body = json.dumps({"document": {"x": "y"}, "base_revision": 1})
    settings.FABRICSCOPE_MAX_BODY_BYTES = len(body.encode())
    url = f"/api/v1/topologies/{world.topology.pk}/revisions/"
    response = api_as("owner").post(url, data=body, content_type="application/json")
    assert response.status_code == 400  # an invalid document, not a 413


@pytest.mark.slow
def test_a_2048_host_document_saves_through_the_api(world, api_as):
    """The 2,048-host DGX-H100 rail-optimized cluster (16,384 GPUs, 102,472 nodes, 174,592 links,
    ~40 MB of JSON) posted as a revision: saved, and read back with the same counts."""
    document = bridge.build_cluster_document(name="big", template="dgx-h100", hosts=2048)
    body = json.dumps({"document": document, "base_revision": 1, "message": "2k hosts"})
    assert 3.4e6 * 10 < len(body) < settings.FABRICSCOPE_MAX_BODY_BYTES
    url = f"/api/v1/topologies/{world.topology.pk}/revisions/"
    response = api_as("owner").post(url, data=body, content_type="application/json")
    assert response.status_code == 201, response.content[:500]
    assert response.json()["number"] == 2
    head = api_as("owner").get(f"/api/v1/topologies/{world.topology.pk}/").json()
    assert (head["host_count"], head["gpu_count"]) == (2048, 16_384)
    assert (head["node_count"], head["link_count"]) == (len(document["nodes"]),
                                                        len(document["links"]))


def test_a_second_large_body_in_one_process_waits_its_turn(world, api_as, settings):
    """Bodies over FABRICSCOPE_LARGE_BODY_BYTES are parsed as whole documents: one at a time per
    web process. While one is being handled (the gate held), the next is a 503 with Retry-After
    that names the limit — before anything reads it; once the first is done the same body
    passes, and a small body never waits."""
    from designer.ops.middleware import LARGE_BODY_GATE

    settings.FABRICSCOPE_LARGE_BODY_BYTES = 1_000
    big = json.dumps({"document": {"format": "fabricscope.topology/1", "name": "x" * 2_000}})
    small = json.dumps({"document": {"format": "fabricscope.topology/1", "name": "x"}})
    client = api_as("owner")
    assert LARGE_BODY_GATE.acquire(blocking=False)          # another thread's large body
    try:
        busy = client.post("/api/v1/validate/", data=big, content_type="application/json")
        assert busy.status_code == 503 and busy["Retry-After"] == "2"
        error = busy.json()["error"]
        assert error["code"] == "busy_with_large_body" and "FABRICSCOPE_LARGE_BODY_BYTES" in error["message"]
        assert error["details"] == {"size_bytes": len(big.encode()), "large_body_bytes": 1_000}
        assert client.post("/api/v1/validate/", data=small, content_type="application/json").status_code == 200
    finally:
        LARGE_BODY_GATE.release()
    assert client.post("/api/v1/validate/", data=big, content_type="application/json").status_code == 200
    # the gate is free again after a large body, also when its view fails
    bad = client.post("/api/v1/validate/", data=big[:-2], content_type="application/json")
    assert bad.status_code == 400 and LARGE_BODY_GATE.acquire(blocking=False)
    LARGE_BODY_GATE.release()

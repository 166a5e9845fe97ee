"""``POST /api/v1/topologies/<id>/explore/`` × roles, located errors with nothing saved, and the
job run in chunks in process (as the workers would) to a merged result.

Topology (``small_topology``): 2 DGX H100 hosts, rail-optimized, one storage server::

    [h0] ==8 rails== [leaf0..leaf7] == [spines] == [leaf0..leaf7] ==8 rails== [h1]

Its fabric block gives the grid's base (template dgx-h100, 2 hosts, eth-51t2 ...); the grid
varies the fabric kind and the size.
"""
from __future__ import annotations

import pytest

from designer.models import SimulationJob, SweepChunk
from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db

A2A = [{"id": "a2a", "kind": "alltoall", "bytes": 1e8, "participants": {"kind": "gpu"}}]
BODY = {"grid": {"fabric": ["rail-optimized", "rail-only", "leaf-spine"], "hosts": [2, 4]}, "workload": A2A,
        "chunks": 3}


def url(topology) -> str:
    return f"{API}/topologies/{topology.pk}/explore/"


def test_owner_submits_and_the_base_comes_from_the_design(api, small_topology, published):
    r = api.post(url(small_topology), BODY, format="json")
    assert r.status_code == 202, r.content
    body = r.json()
    assert body["kind"] == "explore" and body["state"] == "queued" and body["scenario"] is None
    assert body["parameters"] == {"chunks": 3}
    job = SimulationJob.objects.get(pk=body["id"])
    assert job.inputs["base"]["template"] == "dgx-h100" and job.inputs["base"]["switch"] == "eth-51t2"
    assert "hosts" not in job.inputs["base"] and job.inputs["points_total"] == 6
    assert job.inputs["routing"] == {"nic_policy": "pxn"}


def test_stranger_404_anonymous_401_viewer_may_run(client_for, bob, anon, small_topology, user, other_user,
                                                   published):
    assert_error(bob.post(url(small_topology), BODY, format="json"), 404, "not_found")
    assert_error(anon.post(url(small_topology), BODY, format="json"), 401)
    assert not SimulationJob.objects.exists()
    from designer import services

    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    assert client_for(other_user).post(url(small_topology), BODY, format="json").status_code == 202


@pytest.mark.parametrize("change, path", [
    ({"grid": {"hosts": [0, 2]}}, "grid.hosts[0]"),
    ({"grid": {"switch": ["eth-51t2", "sw-9000"]}}, "grid.switch[1]"),
    ({"grid": {"oversubscription": list(range(1, 26)), "hosts": list(range(1, 21)),
               "planes": list(range(1, 21))}}, "grid"),
    ({"grid": {"fabric": ["rail-only"]}, "workload": None}, "jobs"),
    ({"grid": {"fabric": ["rail-only"]}, "colour": "red"}, "colour"),
    ({"chunks": 0}, "chunks"),
    ({"grid": "all of them"}, "grid"),
])
def test_bad_grids_are_located_400s_and_nothing_is_saved(api, small_topology, published, change, path):
    body = {k: v for k, v in {**BODY, **change}.items() if v is not None}
    error = assert_error(api.post(url(small_topology), body, format="json"), 400)
    assert path in paths_of(error), error
    assert not SimulationJob.objects.exists() and not published


def test_ten_thousand_points_say_how_many(api, small_topology, published):
    body = {**BODY, "grid": {"oversubscription": list(range(1, 26)), "hosts": list(range(1, 21)),
                             "planes": list(range(1, 21))}}
    error = assert_error(api.post(url(small_topology), body, format="json"), 400)
    assert "10,000 points" in error["details"][0]["message"]


@pytest.mark.django_db(transaction=True)
def test_job_runs_in_chunks_to_a_merged_result(api, small_topology, published):
    """The runner splits 6 points into 3 chunk rows; each chunk runs once (a second delivery is a
    no-op); the last merges: every point once, the frontier marked, read through /result/."""
    from designer import services

    job_id = api.post(url(small_topology), BODY, format="json").json()["id"]
    assert_error(api.get(f"{API}/jobs/{job_id}/result/"), 409, "job_not_finished")
    services.job_run(job_id=job_id)
    chunks = list(SweepChunk.objects.filter(job_id=job_id).order_by("index"))
    assert [len(c.failures) for c in chunks] == [2, 2, 2]
    # Every 3rd point from the chunk's own (the engine's chunk=(i, 3)): neighbours spread out.
    assert [[p["index"] for p in c.failures] for c in chunks] == [[0, 3], [1, 4], [2, 5]]
    for chunk in chunks:
        services.sweep_chunk_run(chunk_id=chunk.pk)
        services.sweep_chunk_run(chunk_id=chunk.pk)  # redelivered: already done, nothing happens
    job = api.get(f"{API}/jobs/{job_id}/").json()
    assert job["state"] == "succeeded" and job["progress"] == 100, job
    assert "6 designs explored" in job["message"]
    data = api.get(f"{API}/jobs/{job_id}/result/").json()
    assert data["format"] == "fabricscope.explore/1" and [p["index"] for p in data["points"]] == list(range(6))
    assert data["frontier"] and all(data["points"][i]["frontier"] for i in data["frontier"])
    ro = [p for p in data["points"] if p["axes"]["fabric"] == "rail-only"]
    opt = [p for p in data["points"] if p["axes"]["fabric"] == "rail-optimized"]
    assert all(r["network_usd_per_gpu"] < o["network_usd_per_gpu"] for r, o in zip(ro, opt))
    assert SweepChunk.objects.filter(job_id=job_id, result__isnull=False).count() == 0  # merged, not kept twice


def test_jobs_endpoint_does_not_take_explore(api, scenario):
    error = assert_error(api.post(f"{API}/jobs/", {"scenario": scenario.pk, "kind": "explore"},
                                  format="json"), 400)
    assert paths_of(error) == {"kind"}

"""Shared-cluster scenarios over the API: ``jobs`` with placements, their located 400s, and
``POST /scenarios/{id}/place/`` (docs/FORMATS.md, Jobs with placements and Place).

The design is ``small_topology`` (2 DGX H100 hosts h0, h1 of 8 GPUs, rail-optimized, one storage
server)::

    [h0/gpu0..7]--nvswitch--[h0/nic0..7]==400G==[rail leaves]==400G==[h1/nic0..7]--[h1/gpu0..7]
"""
from __future__ import annotations

import pytest

from designer.models import Scenario
from tests.api.conftest import API, assert_error, paths_of
from tests.conftest import RING_ALLREDUCE

pytestmark = pytest.mark.django_db

AR = [{"id": "ar", "kind": "allreduce", "algorithm": "ring", "bytes": 1e9}]
TWO_JOBS = [{"id": "A", "patterns": AR, "placement": {"hosts": ["h0"]}},
            {"id": "B", "patterns": AR, "placement": {"policy": "packed", "gpus": 8}}]


def _post(api, topology, **fields):
    return api.post(f"{API}/scenarios/", {"topology": topology.pk, "name": "shared", **fields})


def test_create_with_jobs_round_trips_and_is_stored_as_jobs(api, small_topology):
    response = _post(api, small_topology, jobs=TWO_JOBS)
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["jobs"] == TWO_JOBS and body["workload"] is None
    got = api.get(f"{API}/scenarios/{body['id']}/").json()
    assert got["jobs"] == TWO_JOBS and got["workload"] is None
    assert Scenario.objects.get(pk=body["id"]).placed_jobs == TWO_JOBS
    # Back to a single workload with a PATCH: jobs become null.
    patched = api.patch(f"{API}/scenarios/{body['id']}/", {"workload": RING_ALLREDUCE})
    assert patched.status_code == 200, patched.content
    assert patched.json()["jobs"] is None and patched.json()["workload"] == RING_ALLREDUCE


def test_a_pattern_scenario_reads_jobs_null(api, scenario):
    body = api.get(f"{API}/scenarios/{scenario.pk}/").json()
    assert body["jobs"] is None and body["workload"] == RING_ALLREDUCE


@pytest.mark.parametrize("jobs, path, words", [
    ([{"id": "A", "patterns": AR, "placement": {"hosts": ["h0"]}},
      {"id": "B", "patterns": AR, "placement": {"gpus": ["h1/gpu0", "h0/gpu3"]}}],
     "jobs[1].placement.gpus[1]", "already claimed by job 'A'"),
    ([{"id": "A", "patterns": AR, "placement": {"gpus": ["h0/gpu0", "h7/gpu0"]}}],
     "jobs[0].placement.gpus[1]", "h7/gpu0"),
    ([{"id": "A", "patterns": AR, "placement": {"policy": "packed", "gpus": 300}}],
     "jobs[0].placement", "only 16"),
])
def test_bad_placements_are_located_400s_and_nothing_is_saved(api, small_topology, jobs, path, words):
    error = assert_error(_post(api, small_topology, jobs=jobs), 400)
    located = [d for d in error["details"] if d["path"].startswith(path)]
    assert located and words in located[0]["message"], error
    assert not Scenario.objects.exists()


def test_ten_thousand_jobs_are_refused_before_any_work(api, small_topology):
    many = [{"id": f"j{k}", "patterns": AR, "placement": {"gpus": ["h0/gpu0"]}} for k in range(10_000)]
    error = assert_error(_post(api, small_topology, jobs=many), 400)
    assert paths_of(error) == {"jobs"} and "10,000 jobs exceed the limit" in str(error), error
    assert not Scenario.objects.exists()


def test_workload_and_jobs_together_or_neither(api, small_topology):
    error = assert_error(_post(api, small_topology, workload=RING_ALLREDUCE, jobs=TWO_JOBS), 400, "invalid")
    assert paths_of(error) == {"jobs"}
    error = assert_error(_post(api, small_topology), 400, "invalid")
    assert paths_of(error) == {"workload"}
    error = assert_error(_post(api, small_topology, jobs=[1, 2]), 400, "invalid")
    assert paths_of(error) == {"jobs"}
    assert not Scenario.objects.exists()


def test_schema_documents_jobs_and_place(api):
    schema = api.get(f"{API}/schema/?format=json").json()
    props = schema["components"]["schemas"]["Scenario"]["properties"]
    assert props["jobs"]["items"]["properties"]["placement"]["properties"]["policy"]["enum"] == [
        "packed", "rail-aligned", "spread", "random"]
    assert "post" in schema["paths"]["/api/v1/scenarios/{id}/place/"]


def _shared(api, topology, jobs):
    response = _post(api, topology, jobs=jobs)
    assert response.status_code == 201, response.content
    return f"{API}/scenarios/{response.json()['id']}/place/"


def test_place_ranks_candidates_among_the_running_jobs(api, small_topology):
    """A on h0's 8 GPUs; a new 8-GPU ring: the only free GPUs are h1's, so every policy picks
    them (one candidate, named by all of them), and it shares nothing with A (harm 0)."""
    url = _shared(api, small_topology, [TWO_JOBS[0]])
    new = {"id": "next", "patterns": AR, "placement": {"gpus": 8}}
    response = api.post(url, {"job": new})
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["format"] == "fabricscope.place/1" and body["job"] == "next" and body["gpus"] == 8
    assert list(body["running"]) == ["A"]
    best = body["candidates"][0]
    assert sorted(best["placement"]) == sorted(f"h1/gpu{g}" for g in range(8))
    assert best["harm"] == 0.0 and best["step_time_s"] > 0 and body["best"] == best["candidate"]
    # 4 GPUs from a free list spread over both hosts: packed (one host) beats spread (two hosts).
    free = ["h1/gpu0", "h1/gpu1", "h1/gpu2", "h1/gpu3"]
    body = api.post(url, {"job": {**new, "placement": {"gpus": 2, "free": free}}}).json()
    assert all(set(c["placement"]) <= set(free) for c in body["candidates"])
    assert not Scenario.objects.filter(name="next").exists()


def test_place_errors_are_located(api, small_topology, settings):
    url = _shared(api, small_topology, [TWO_JOBS[0]])
    error = assert_error(api.post(url, {"job": {"id": "n", "patterns": AR, "placement": {"gpus": 9}}}), 400)
    assert paths_of(error) == {"job.placement.gpus"} and "only 8 are free" in str(error)
    assert_error(api.post(url, {"job": [1]}), 400, "invalid")


def test_place_refuses_designs_over_the_host_limit(api, small_topology, monkeypatch):
    from designer.bridge import shared

    monkeypatch.setattr(shared, "MAX_PLACE_HOSTS", 1)
    url = _shared(api, small_topology, [TWO_JOBS[0]])
    error = assert_error(api.post(url, {"job": {"id": "n", "patterns": AR, "placement": {"gpus": 2}}}), 400)
    assert paths_of(error) == {"job"} and "up to 1 " in str(error)


def test_place_stranger_404(api, bob, small_topology):
    url = _shared(api, small_topology, [TWO_JOBS[0]])
    assert_error(bob.post(url, {"job": {"id": "n", "patterns": AR, "placement": {"gpus": 2}}}), 404, "not_found")

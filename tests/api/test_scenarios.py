"""Scenarios: CRUD, engine validation with located problems, visibility."""
from __future__ import annotations

import pytest

from designer.models import Scenario

from tests.api.conftest import API, assert_error, paths_of
from tests.conftest import RING_ALLREDUCE

pytestmark = pytest.mark.django_db


def test_create_list_get_update_delete(api, small_topology):
    response = api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "ring", "workload": RING_ALLREDUCE,
        "routing": {"nic_policy": "affinity"}, "failures": [{"target": "h0/nic0",
                                                             "mode": "down"}]})
    assert response.status_code == 201, response.content
    body = response.json()
    assert (body["topology"], body["revision"], body["mode"]) == (small_topology.pk, 1, "steady")
    url = f"{API}/scenarios/{body['id']}/"
    assert api.get(url).json()["failures"] == [{"target": "h0/nic0", "mode": "down"}]
    assert api.get(f"{API}/scenarios/?topology={small_topology.pk}").json()["count"] == 1
    assert api.get(f"{API}/scenarios/?search=ring").json()["count"] == 1
    assert api.get(f"{API}/scenarios/?topology=999").json()["count"] == 0
    for bad in ("-3.1e73", "99999999999999999999999", "1.5"):
        assert_error(api.get(f"{API}/scenarios/?topology={bad}"), 400, "invalid")
    response = api.patch(url, {"routing": {"nic_policy": "pxn"}, "mode": "timeline"})
    assert response.status_code == 200, response.content
    assert response.json()["routing"] == {"nic_policy": "pxn"}
    assert api.delete(url).status_code == 204
    assert_error(api.get(url), 404, "not_found")


def test_engine_problems_are_located(api, small_topology):
    bad = [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
            "participants": {"group": "h9"}, "bytes": 1e9}]
    error = assert_error(api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "bad", "workload": bad}), 400)
    assert error["code"] == "invalid_workload", error
    assert any(p.startswith("workload[0]") for p in paths_of(error)), error
    error = assert_error(api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "bad", "workload": RING_ALLREDUCE,
        "failures": [{"target": "h0/nic99", "mode": "down"}]}), 400)
    assert any(p.startswith("failures[0]") for p in paths_of(error)), error
    assert not Scenario.objects.exists()


def test_shape_errors(api, small_topology):
    error = assert_error(api.post(f"{API}/scenarios/", {"name": "x", "workload": {}}), 400,
                         "invalid")
    assert {"topology", "workload"} <= paths_of(error)
    error = assert_error(api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "x", "workload": RING_ALLREDUCE,
        "revision": 5}), 400, "invalid")
    assert paths_of(error) == {"revision"}


def test_update_is_revalidated(api, scenario):
    url = f"{API}/scenarios/{scenario.pk}/"
    error = assert_error(api.patch(url, {"routing": {"nic_policy": "teleport"}}), 400)
    assert any(p.startswith("routing") for p in paths_of(error)), error
    assert_error(api.patch(url, {"topology": scenario.topology_id + 1}), 400, "invalid")


def test_stranger(bob, scenario, small_topology):
    url = f"{API}/scenarios/{scenario.pk}/"
    for response in (bob.get(url), bob.patch(url, {"name": "x"}), bob.delete(url)):
        assert_error(response, 404, "not_found")
    assert bob.get(f"{API}/scenarios/").json()["count"] == 0
    # Naming alice's topology in a body: a located 400 that does not reveal it exists.
    error = assert_error(bob.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "x", "workload": RING_ALLREDUCE}), 400)
    assert paths_of(error) == {"topology"}


# ------------------------------------------------------------------------------------------ jobs
JOB = {"job": {"layout": {"tp": 8, "dp": 2}, "phases": [
    {"id": "fwd", "compute_s": 0.001},
    {"id": "dp", "after": ["fwd"], "patterns": [{"id": "g", "kind": "allreduce", "bytes": 1e8,
                                                 "groups": {"layout": "dp"}}]}]}}


def test_a_job_workload_is_created_read_back_and_submitted(api, small_topology):
    response = api.post(f"{API}/scenarios/", {"topology": small_topology.pk, "name": "step",
                                              "workload": JOB})
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["workload"] == JOB
    assert api.get(f"{API}/scenarios/{body['id']}/").json()["workload"] == JOB
    # Patched back to a list of patterns, and to a job again.
    url = f"{API}/scenarios/{body['id']}/"
    assert api.patch(url, {"workload": RING_ALLREDUCE}).json()["workload"] == RING_ALLREDUCE
    assert api.patch(url, {"workload": JOB}).json()["workload"] == JOB


@pytest.mark.parametrize("workload, path, words", [
    ({"job": {**JOB["job"], "phases": [{"id": "a", "after": ["zz"]}]}}, "workload.job.phases[0].after[0]",
     "unknown phase"),
    ({"job": {"layout": {"tp": 8, "dp": 3}, "phases": [{"id": "a"}]}}, "workload.job.layout",
     "the topology has 16 GPUs"),
    ({"job": {**JOB["job"], "phases": [{"id": "a", "after": ["b"]}, {"id": "b", "after": ["a"]}]}},
     "workload.job.phases[1].after", "cycle"),
])
def test_job_problems_are_located_by_the_engine(api, small_topology, workload, path, words):
    error = assert_error(api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "bad", "workload": workload}), 400)
    assert any(d["path"] == path and words in d["message"] for d in error["details"]), error
    assert not Scenario.objects.exists()


@pytest.mark.parametrize("workload, words", [
    ({"job": [1]}, "must be an object"),
    ({"job": {"phases": []}, "extra": 1}, "unknown field(s) ['extra']"),
    ({"jobs": {}}, "must be a list of patterns or {\"job\""),
    ("ring", "must be a list of patterns"),
])
def test_job_shape_errors(api, small_topology, workload, words):
    error = assert_error(api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "bad", "workload": workload}), 400, "invalid")
    assert any(p.startswith("workload") for p in paths_of(error)), error
    assert any(words in d["message"] for d in error["details"]), error


@pytest.mark.django_db(transaction=True)
def test_a_job_scenario_runs_a_step_time_sweep_through_the_api(api, small_topology, published):
    """Create the job, submit a NIC sweep, run it in process (as the worker would) and read the
    result through the API: the ranking carries each failure's step (NIC affinity: a rail NIC
    down hangs the DP ring, so the step does not complete)."""
    from designer import services
    from designer.models import SweepChunk

    sc = api.post(f"{API}/scenarios/", {"topology": small_topology.pk, "name": "step", "workload": JOB}).json()
    job = api.post(f"{API}/jobs/", {"scenario": sc["id"], "kind": "sweep", "over": ["nic"], "chunks": 1})
    assert job.status_code == 201, job.content
    job_id = job.json()["id"]
    services.job_run(job_id=job_id)
    for chunk in SweepChunk.objects.filter(job_id=job_id):
        services.sweep_chunk_run(chunk_id=chunk.pk)
    result = api.get(f"{API}/jobs/{job_id}/result/")
    assert result.status_code == 200, result.content
    data = result.json()                 # the stored document as is
    assert data["baseline"]["job"]["complete"] is True
    # every compute NIC is a rail of the DP ring; the storage NICs (nic8, nic9, on the storage
    # fabric) carry nothing of the job
    compute = [e for e in data["ranking"] if not e["failure"]["target"].endswith(("/nic8", "/nic9"))]
    assert len(compute) == 16 and len(data["ranking"]) == 20
    assert all(e["impact"]["job"]["complete"]["after"] is False for e in compute)
    assert all(e["impact"]["job"]["complete"]["after"] is True for e in data["ranking"] if e not in compute)


# --------------------------------------------------------------------------------------- latency
LATENCY = {"message_bytes": 8, "initiators": ["cpu_proxy", "gpu_initiated"]}


def test_latency_is_stored_returned_and_patched(api, small_topology):
    """The latency request is kept (it used to be dropped with a 201), read back, changed and
    cleared with null."""
    response = api.post(f"{API}/scenarios/", {"topology": small_topology.pk, "name": "lat",
                                              "workload": RING_ALLREDUCE, "latency": LATENCY})
    assert response.status_code == 201, response.content
    assert response.json()["latency"] == LATENCY
    url = f"{API}/scenarios/{response.json()['id']}/"
    assert api.get(url).json()["latency"] == LATENCY
    assert Scenario.objects.get().latency == LATENCY
    assert api.patch(url, {"latency": {"message_bytes": 65536}}).json()["latency"] == {"message_bytes": 65536}
    assert api.patch(url, {"latency": None}).json()["latency"] is None
    plain = api.post(f"{API}/scenarios/", {"topology": small_topology.pk, "name": "plain",
                                           "workload": RING_ALLREDUCE}).json()
    assert plain["latency"] is None


@pytest.mark.parametrize("latency, path", [
    ({"message_bytes": 0}, "latency.message_bytes"),
    ({"message_bytes": "8"}, "latency.message_bytes"),
    ({"initiators": ["fpga"]}, "latency.initiators"),
    ({"initiators": []}, "latency.initiators"),
    ({"flows": "ar#0"}, "latency.flows"),
    ({"overrides": {"WARP_NS": 5}}, "latency.overrides.WARP_NS"),
    ({"overrides": {"PROXY_NOTICE_NS": -1}}, "latency.overrides.PROXY_NOTICE_NS"),
    ({"size": 8}, "latency.size"),
    ([8], "latency"),
])
def test_latency_errors_are_located(api, small_topology, latency, path):
    error = assert_error(api.post(f"{API}/scenarios/", {
        "topology": small_topology.pk, "name": "bad", "workload": RING_ALLREDUCE, "latency": latency}), 400)
    assert paths_of(error) == {path}, error
    assert not Scenario.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_a_scenario_with_latency_runs_and_its_result_has_the_round_trip(api, small_topology, published):
    """Submit a simulation of a scenario with a latency request, run it in process (as the worker
    would) and read the result: one latency entry per pattern's slowest flow, with the one-way
    step and the round trip (ping + pong) per initiator, GPU-initiated faster than CPU-proxied."""
    from designer import services

    sc = api.post(f"{API}/scenarios/", {"topology": small_topology.pk, "name": "lat",
                                        "workload": RING_ALLREDUCE, "latency": LATENCY}).json()
    job = api.post(f"{API}/jobs/", {"scenario": sc["id"], "kind": "simulate"})
    assert job.status_code == 201, job.content
    services.job_run(job_id=job.json()["id"])
    result = api.get(f"{API}/jobs/{job.json()['id']}/result/").json()
    (entry,) = result["latency"]
    lat = entry["initiators"]
    assert set(lat) == {"cpu_proxy", "gpu_initiated"}
    for one in lat.values():
        # a round trip is two one-way trips of the same message (ping and pong) at least
        assert one["round_trip_ns"] >= 2 * one["total_ns"] * 0.99 > 0
    assert lat["gpu_initiated"]["round_trip_ns"] < lat["cpu_proxy"]["round_trip_ns"]

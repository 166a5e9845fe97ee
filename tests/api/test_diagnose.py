"""``POST /api/v1/topologies/<id>/diagnose/`` × roles, JSON and multipart, located errors with
nothing saved, and the job's result through the job endpoints.

Topology (``small_topology``): 2 DGX H100 hosts (16 GPUs = 16 ranks), rail-optimized::

    [h0] ==8 rails== [leaf0..leaf7] == [spines] == [leaf0..leaf7] ==8 rails== [h1]

Runs: the published nccl-tests#319 all-reduce log (``tests/designer/diagnose_support.py``); the
engine is the real one when present, else the support module's stand-in.
"""
from __future__ import annotations

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from designer.models import SimulationJob
from tests.api.conftest import API, assert_error, paths_of
from tests.designer.diagnose_support import BAD_LOG, LOG, use_engine

pytestmark = pytest.mark.django_db

BODY = {"op": "all_reduce", "runs": [{"label": "pair", "hosts": ["h0", "h1"], "log": LOG}]}


@pytest.fixture(autouse=True)
def engine(monkeypatch):
    return use_engine(monkeypatch)


def url(topology) -> str:
    return f"{API}/topologies/{topology.pk}/diagnose/"


def test_owner_submits_and_gets_202_with_the_job(api, small_topology, published):
    r = api.post(url(small_topology), BODY, format="json")
    assert r.status_code == 202, r.content
    body = r.json()
    assert body["kind"] == "diagnose" and body["state"] == "queued" and body["scenario"] is None
    assert body["topology"] == small_topology.pk and body["revision"] == 1
    assert body["parameters"]["op"] == "all_reduce" and body["parameters"]["plan"]["runs"] == 1
    job = SimulationJob.objects.get(pk=body["id"])
    assert job.inputs["runs"][0]["hosts"] == ["h0", "h1"] and len(job.inputs["runs"][0]["rows"]) == 10


def test_multipart_files_with_hosts_per_file(api, small_topology, published):
    files = [SimpleUploadedFile("a.txt", LOG.encode()), SimpleUploadedFile("b.txt", LOG.encode())]
    r = api.post(url(small_topology), {"op": "all_reduce", "logs": files, "hosts": ["h0, h1", ""],
                                       "algorithm": "ring"}, format="multipart")
    assert r.status_code == 202, r.content
    job = SimulationJob.objects.get(pk=r.json()["id"])
    assert [(run["label"], run["hosts"]) for run in job.inputs["runs"]] == [("a.txt", ["h0", "h1"]), ("b.txt", None)]
    assert job.parameters["options"] == {"algorithm": "ring"}


def _json_result_file() -> str:
    """The #319 log as nccl-tests' JSON result file (src/util.cu, version 2): 2 processes × 8 GPUs."""
    import json

    from designer.engine.io.nccl_tests_log import parse_log

    rows = parse_log(LOG).rows

    def side(r):
        return {"time": r["out_of_place"]["time_us"], "alg_bw": r["out_of_place"]["algbw_gbs"],
                "bus_bw": r["out_of_place"]["busbw_gbs"], "nwrong": 0}
    return json.dumps({"version": 2, "args": ["./all_reduce_perf", "-b", "32M", "-e", "16G"],
                       "config": {"nthreads": 1, "ngpus": 8, "devices": [
                           {"rank": 0, "hostname": "lccn09"}, {"rank": 8, "hostname": "lccn10"}]},
                       "results": [{"size": r["size_bytes"], "count": r["count"], "type": "float", "redop": "sum",
                                    "root": -1, "out_of_place": side(r), "in_place": None} for r in rows]})


def test_json_result_file_reads_like_the_log(api, small_topology, published):
    r = api.post(url(small_topology), {"logs": [SimpleUploadedFile("run.json", _json_result_file().encode())]},
                 format="multipart")
    assert r.status_code == 202, r.content
    (run,) = SimulationJob.objects.get(pk=r.json()["id"]).inputs["runs"]
    assert run["label"] == "run.json" and run["ranks"] == 16 and run["op"] == "all_reduce"
    assert [(x["bytes"], x["busbw_gbps"]) for x in run["rows"]][:2] == [(2 ** 25, 40.76), (2 ** 26, 40.60)]


def test_viewer_may_run_stranger_is_404_anonymous_401(client_for, bob, anon, small_topology, user,
                                                       other_user, published):
    assert_error(bob.post(url(small_topology), BODY, format="json"), 404, "not_found")
    assert_error(anon.post(url(small_topology), BODY, format="json"), 401)
    assert not SimulationJob.objects.exists()
    from designer import services

    services.share_grant(topology=small_topology, actor=user, role="viewer", user=other_user)
    assert client_for(other_user).post(url(small_topology), BODY, format="json").status_code == 202


def test_bad_log_is_a_located_400_and_nothing_is_saved(api, small_topology, published):
    body = {"runs": [{"label": "ok", "log": LOG}, {"label": "broken", "log": BAD_LOG}]}
    error = assert_error(api.post(url(small_topology), body, format="json"), 400)
    assert error["details"] == [{"path": "runs[1].log", "message": "line 3: expected 13 columns, got 4"}]
    assert not SimulationJob.objects.exists() and not published


@pytest.mark.parametrize("body, path", [
    ({"runs": []}, "runs"),
    ({"runs": [{"label": "x"}]}, "runs[0]"),
    ({"runs": [{"log": LOG, "rows": [{"bytes": 8, "busbw_gbps": 1}]}]}, "runs[0]"),
    ({"op": "broadcast_all", "runs": [{"log": LOG}]}, "op"),
    ({"runs": [{"log": LOG}], "options": {"channels": 99}}, "options.channels"),
    ({"runs": [{"rows": [{"bytes": 0, "busbw_gbps": 1}]}]}, "runs[0].rows[0].bytes"),
])
def test_shape_errors_are_located(api, small_topology, published, body, path):
    error = assert_error(api.post(url(small_topology), body, format="json"), 400)
    assert path in paths_of(error), error
    assert not SimulationJob.objects.exists()


def test_jobs_endpoint_does_not_take_diagnose(api, scenario):
    error = assert_error(api.post(f"{API}/jobs/", {"scenario": scenario.pk, "kind": "diagnose"},
                                  format="json"), 400)
    assert paths_of(error) == {"kind"}


@pytest.mark.django_db(transaction=True)   # the runner's heartbeat thread reads the job row
def test_result_and_figures_through_the_job_endpoints(api, small_topology, published):
    from designer import services

    job_id = api.post(url(small_topology), BODY, format="json").json()["id"]
    assert_error(api.get(f"{API}/jobs/{job_id}/result/"), 409, "job_not_finished")
    services.job_run(job_id=job_id)
    job = api.get(f"{API}/jobs/{job_id}/").json()
    assert job["state"] == "succeeded" and job["progress"] == 100
    result = api.get(f"{API}/jobs/{job_id}/result/").json()
    assert result["format"] == "fabricscope.diagnosis/1" and result["op"] == "all_reduce"
    assert result["ranks"] == 16
    assert {"expected", "runs", "healthy", "explanations", "summary", "tolerance_pct"} <= set(result)
    (run,) = result["runs"]
    assert run["label"] == "pair" and run["hosts"] == ["h0", "h1"]
    assert set(run["outside"]) <= {r["bytes"] for r in run["rows"]}
    for e in result["explanations"]:
        assert {"rank", "kind", "target", "label", "failures", "fit_error_pct", "curve", "runs"} <= set(e)
    figures = api.get(f"{API}/jobs/{job_id}/figures/").json()
    assert list(figures) == ["diagnosis"] and figures["diagnosis"]["fabricscope"]["kind"] == "diagnosis"


def test_submissions_share_the_job_submission_throttle(api, small_topology, scenario, published, settings):
    """One ``job_submit`` window for every way to submit a job: two diagnoses, then a simulation
    is the third submission of the minute."""
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"job_submit": "2/min"}
    assert api.post(url(small_topology), BODY, format="json").status_code == 202
    assert api.post(url(small_topology), BODY, format="json").status_code == 202
    response = api.post(f"{API}/jobs/", {"scenario": scenario.pk, "kind": "simulate"}, format="json")
    assert_error(response, 429, "throttled")
    assert_error(api.post(url(small_topology), BODY, format="json"), 429, "throttled")

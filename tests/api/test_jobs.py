"""Jobs: submit (simulate, sweep, compare), list with filters, get, cancel, result, figures.

No broker here: ``published`` records the Celery messages; finished jobs are set up directly.
"""
from __future__ import annotations

import pytest
from django.utils import timezone

from designer.choices import JobState
from designer.models import SimulationJob, SimulationResult

from tests.api.conftest import API, assert_error, paths_of

pytestmark = pytest.mark.django_db

RESULT = {"format": "fabricscope.result/1", "summary": {"patterns": {}}, "flows": [],
          "resources": [], "diff": None}


def submit(api, scenario, **body):
    return api.post(f"{API}/jobs/", {"scenario": scenario.pk, **body})


def succeed(job_id: int) -> None:
    job = SimulationJob.objects.get(pk=job_id)
    SimulationResult.objects.create(job=job, data=RESULT)
    now = timezone.now()
    SimulationJob.objects.filter(pk=job_id).update(state=JobState.SUCCEEDED, progress=100,
                                                   started_at=now, finished_at=now)


def test_submit_each_kind(api, scenario, published):
    response = submit(api, scenario, kind="simulate")
    assert response.status_code == 201, response.content
    job = response.json()
    assert (job["state"], job["kind"], job["scenario"], job["revision"]) == (
        "queued", "simulate", scenario.pk, 1)
    assert job["timings"] == {"queued_s": None, "run_s": None, "total_s": None}
    sweep = submit(api, scenario, kind="sweep", over=["nic"], chunks=2, degrade=0.5).json()
    assert sweep["parameters"] | {"over": ["nic"], "chunks": 2, "degrade": 0.5} == \
        sweep["parameters"]
    compare = submit(api, scenario, kind="compare", policies=["affinity", "pxn"]).json()
    assert compare["parameters"] == {"policies": ["affinity", "pxn"]}


@pytest.mark.parametrize("body, path", [
    ({"kind": "sweep"}, "over"),
    ({"kind": "teleport"}, "kind"),
    ({"kind": "compare", "policies": ["magic"]}, "policies[0]"),
    ({"kind": "sweep", "over": ["nic"], "chunks": 0}, "chunks"),
    ({"kind": "sweep", "over": ["nic"], "degrade": 1.0}, "degrade"),
    ({"kind": "sweep", "over": ["nic", "toaster"]}, "over[1]"),
])
def test_submit_errors_are_located(api, scenario, published, body, path):
    error = assert_error(submit(api, scenario, **body), 400, "invalid")
    assert path in paths_of(error), error
    assert not SimulationJob.objects.exists()


def test_list_filters_get_and_timings(api, scenario, published):
    ids = [submit(api, scenario, kind=k, over=["nic"]).json()["id"]
           for k in ("simulate", "sweep", "simulate")]
    succeed(ids[0])
    assert api.get(f"{API}/jobs/").json()["count"] == 3
    assert api.get(f"{API}/jobs/?kind=sweep").json()["results"][0]["id"] == ids[1]
    assert api.get(f"{API}/jobs/?state=succeeded").json()["count"] == 1
    assert api.get(f"{API}/jobs/?state=queued&state=running").json()["count"] == 2
    assert api.get(f"{API}/jobs/?scenario={scenario.pk}").json()["count"] == 3
    assert api.get(f"{API}/jobs/?topology=999").json()["count"] == 0
    assert_error(api.get(f"{API}/jobs/?state=sleeping"), 400, "invalid")
    job = api.get(f"{API}/jobs/{ids[0]}/").json()
    assert job["state"] == "succeeded" and job["timings"]["run_s"] == 0.0
    assert job["error"] == "" and "message" in job and "progress" in job


def test_result_is_409_until_succeeded(api, scenario, published):
    job_id = submit(api, scenario, kind="simulate").json()["id"]
    error = assert_error(api.get(f"{API}/jobs/{job_id}/result/"), 409, "job_not_finished")
    assert error["details"]["state"] == "queued"
    succeed(job_id)
    response = api.get(f"{API}/jobs/{job_id}/result/")
    assert response.status_code == 200 and response.json() == RESULT


def test_figures(api, scenario, published):
    job_id = submit(api, scenario, kind="simulate").json()["id"]
    assert_error(api.get(f"{API}/jobs/{job_id}/figures/"), 409, "job_not_finished")
    succeed(job_id)
    response = api.get(f"{API}/jobs/{job_id}/figures/")
    assert response.status_code == 200 and isinstance(response.json(), dict)


def test_cancel(api, scenario, published):
    job_id = submit(api, scenario, kind="simulate").json()["id"]
    response = api.post(f"{API}/jobs/{job_id}/cancel/")
    assert response.status_code == 200 and response.json()["state"] == "cancelled"
    error = assert_error(api.post(f"{API}/jobs/{job_id}/cancel/"), 409, "conflict")
    assert error["details"] == {"state": "cancelled"}
    error = assert_error(api.get(f"{API}/jobs/{job_id}/result/"), 409, "no_result")
    assert error["details"]["state"] == "cancelled"
    assert_error(api.delete(f"{API}/jobs/{job_id}/"), 405, "method_not_allowed")


def test_stranger(bob, api, scenario, published):
    job_id = submit(api, scenario, kind="simulate").json()["id"]
    for response in (bob.get(f"{API}/jobs/{job_id}/"), bob.post(f"{API}/jobs/{job_id}/cancel/"),
                     bob.get(f"{API}/jobs/{job_id}/result/"),
                     bob.get(f"{API}/jobs/{job_id}/figures/")):
        assert_error(response, 404, "not_found")
    assert bob.get(f"{API}/jobs/").json()["count"] == 0
    error = assert_error(submit(bob, scenario, kind="simulate"), 400, "invalid")
    assert paths_of(error) == {"scenario"}
    assert SimulationJob.objects.get(pk=job_id).state == JobState.QUEUED


def test_job_submission_has_its_own_stricter_throttle(api, scenario, published, settings):
    settings.FABRICSCOPE_API_THROTTLE_RATES = {"job_submit": "2/min"}
    assert submit(api, scenario, kind="simulate").status_code == 201
    assert submit(api, scenario, kind="simulate").status_code == 201
    response = submit(api, scenario, kind="simulate")
    error = assert_error(response, 429, "throttled")
    assert error["details"]["retry_after"] > 0 and int(response["Retry-After"]) > 0
    assert api.get(f"{API}/jobs/").status_code == 200  # reads are not job submissions

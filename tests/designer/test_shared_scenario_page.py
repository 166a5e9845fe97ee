"""The scenario builder's "Jobs sharing the cluster" mode and the result page of such a scenario:
the jobs posted as JSON (what static/js/cluster_jobs.js writes), the engine's located problems
next to them, the saved jobs shown again, a simulation run in-process, and the per-job table,
shared links and figures on the result page.

Data: ``small_topology`` = 2 DGX-H100 hosts (h0, h1: 8 GPUs each), rail-optimized, 1 storage
server. Job A on h0 and job B packed on the 8 free GPUs (h1): two 8-GPU rings inside their own
hosts (NVSwitch), so no link carries both and neither slows the other (×1).
"""
from __future__ import annotations

import json

import pytest
from django.urls import reverse

from designer import services
from designer.models import Scenario, SimulationJob
from tests.designer.test_pages import scenario_post

pytestmark = pytest.mark.django_db

AR = [{"id": "ar", "kind": "allreduce", "bytes": 1e9}]
JOBS = [{"id": "A", "patterns": AR, "placement": {"hosts": ["h0"]}},
        {"id": "B", "patterns": AR, "placement": {"policy": "packed", "gpus": 8}}]


@pytest.fixture
def alice(client, user):
    client.force_login(user)
    return client


def jobs_post(jobs=JOBS, **overrides) -> dict:
    text = jobs if isinstance(jobs, str) else json.dumps(jobs)
    return scenario_post(**{"name": "shared", "workload_type": "jobs", "jobs": text, **overrides})


def test_jobs_are_saved_shown_again_and_run(alice, small_topology, published):
    url = reverse("scenario_new", args=[small_topology.pk])
    response = alice.post(url, jobs_post())
    assert response.status_code == 302, response.content.decode()[:3000]
    scenario = Scenario.objects.get(name="shared")
    assert scenario.workload == {"jobs": JOBS} and scenario.placed_jobs == JOBS
    page = alice.get(response["Location"])
    assert page.context["job_form"]["workload_type"].value() == "jobs"
    assert json.loads(page.context["jobs_form"]["jobs"].value()) == JOBS
    picker = page.context["cluster_picker"]
    assert picker["hosts"] == ["h0", "h1"] and "rail-aligned" in dict(picker["policies"])
    response = alice.post(reverse("scenario_edit", args=[scenario.pk]), jobs_post(action="simulate"))
    job = SimulationJob.objects.get(scenario=scenario)
    assert job.inputs["workload"] == {"jobs": JOBS}


def test_engine_problems_come_back_next_to_the_jobs(alice, small_topology):
    overlap = [JOBS[0], {"id": "B", "patterns": AR, "placement": {"gpus": ["h1/gpu0", "h0/gpu2"]}}]
    response = alice.post(reverse("scenario_new", args=[small_topology.pk]), jobs_post(overlap))
    assert response.status_code == 400
    errors = response.context["jobs_form"].errors["jobs"]
    assert any(e.startswith("jobs[1].placement.gpus[1]:") and "already claimed by job 'A'" in e for e in errors)
    assert 'id="jobs-errors"' in response.content.decode()
    assert not Scenario.objects.exists()
    for bad, words in (("[", "not JSON"), ("[]", "non-empty list"), ("", "add at least one job")):
        response = alice.post(reverse("scenario_new", args=[small_topology.pk]), jobs_post(bad))
        assert response.status_code == 400 and any(words in e for e in response.context["jobs_form"].errors["jobs"])
    assert not Scenario.objects.exists()


@pytest.mark.django_db(transaction=True)   # the runner's heartbeat thread reads the job row
def test_result_page_shows_each_job_the_figures_and_shared_links(alice, small_topology, user, published):
    scenario = services.scenario_create(topology=small_topology, user=user, name="shared",
                                        workload={"jobs": JOBS})
    job = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == "succeeded", job.error
    page = alice.get(reverse("job_result", args=[job.pk]))
    body = page.content.decode()
    rows = {r["id"]: r for r in page.context["shared"]["jobs"]}
    assert set(rows) == {"A", "B"} and rows["B"]["policy"] == "packed"
    assert rows["A"]["slowdown"] == "×1.000" and not rows["A"]["slowed"]
    assert 'id="shared-jobs"' in body and 'data-job="A"' in body and 'id="shared-links"' in body
    figures = page.context["figures"]
    assert {"shared_steps", "interference", "occupancy"} <= set(figures)
    assert 'id="fig-interference"' in body and 'id="fig-occupancy"' in body

"""A sweep job's result stored columnar (``fabricscope.sweep-columns/1``) reads, through the API
and the result page, exactly as the row form did; a row stored in row form before columns
(tests/fixtures/sweep_rows_v1.json) still reads the same way.

Data: ``small_topology`` = 2 DGX-H100 hosts (16 GPUs), rail-optimized, 1 storage server; the
``scenario`` fixture runs a ring all-reduce on every GPU.
"""
from __future__ import annotations

import json
import pathlib

import pytest
from django.urls import reverse

from designer import bridge, services
from designer.choices import JobState
from designer.engine.analysis import whatif
from designer.models import SimulationJob, SimulationResult, SweepChunk

from tests.api.conftest import API

ROW_FIXTURE = pathlib.Path(__file__).parents[1] / "fixtures" / "sweep_rows_v1.json"
OVER = ["pcie_switch", "nic"]


def _run_sweep(scenario, user) -> SimulationJob:
    """A 3-chunk sweep run in this process (the runner's step, then each chunk; the last merges)."""
    job = services.job_submit_sweep(scenario=scenario, user=user, over=OVER, chunks=3)
    services.job_run(job_id=job.pk)
    for chunk in SweepChunk.objects.filter(job=job).order_by("index"):
        assert chunk.result is None
        services.sweep_chunk_run(chunk_id=chunk.pk)
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED, job.error
    return job


def _stored_as(job_from: SimulationJob, data: dict) -> SimulationJob:
    """Another succeeded sweep job of the same scenario whose stored ``data`` is ``data``."""
    job = services.job_submit_sweep(scenario=job_from.scenario, user=job_from.submitted_by, over=OVER)
    SimulationJob.objects.filter(pk=job.pk).update(state=JobState.SUCCEEDED, progress=100,
                                                   started_at=job_from.started_at,
                                                   finished_at=job_from.finished_at)
    SimulationResult.objects.create(job=job, data=data)
    return job


def _reads(api, client, job: SimulationJob) -> dict:
    """What a reader gets of a stored sweep: the API's whole and summary documents, its figures,
    and the result page's ranking and selected-failure figures."""
    out = {view: api.get(f"{API}/jobs/{job.pk}/result/?view={view}").json() for view in ("full", "summary")}
    out["figures"] = api.get(f"{API}/jobs/{job.pk}/figures/?failure=1").json()
    for selected in ("", "?failure=1"):
        page = client.get(reverse("job_result", args=[job.pk]) + selected)
        assert page.status_code == 200
        out[f"page{selected}"] = {k: page.context["figures"][k] for k in page.context["figures"]}
    return out


@pytest.mark.django_db(transaction=True)
def test_a_chunked_sweep_is_stored_columnar_and_reads_as_the_rows(api, client, scenario, user, published):
    job = _run_sweep(scenario, user)
    row = SimulationResult.objects.get(job=job)
    assert row.data["format"] == "fabricscope.sweep-columns/1" and "ranking" not in row.data
    assert all(c.result is None for c in SweepChunk.objects.filter(job=job))  # merged, cleared
    unchunked = bridge.json_safe(whatif.sweep(bridge.job_scenario_document(job), over=OVER))
    assert row.document() == unchunked
    # Each record's key order too (kept by the columns' field lists; the document's own top-level
    # keys come back in the database's order: PostgreSQL's jsonb sorts them).
    assert [json.dumps(r) for r in row.document()["ranking"]] == [json.dumps(r) for r in unchunked["ranking"]]
    assert job.message.startswith(f"{len(unchunked['ranking'])} failures ranked")

    # The same document stored in row form, as before columns: every reader gets the same.
    client.force_login(user)
    old = _stored_as(job, unchunked)
    new_reads, old_reads = _reads(api, client, job), _reads(api, client, old)
    assert new_reads["full"] == old_reads["full"] == unchunked
    assert new_reads["summary"] == old_reads["summary"] == unchunked  # a sweep has no bulk keys
    assert new_reads == old_reads
    assert "ranking" in new_reads["page"] and "whatif_completion" in new_reads["page?failure=1"]


@pytest.mark.django_db
def test_a_row_stored_before_columns_still_reads(api, client, scenario, user, published):
    """The stored row-form fixture: a sweep result written before columns, read by the API, its
    figures and the result page as it was."""
    old = json.loads(ROW_FIXTURE.read_text())
    job = services.job_submit_sweep(scenario=scenario, user=user, over=["pcie_switch"])
    SimulationJob.objects.filter(pk=job.pk).update(state=JobState.SUCCEEDED, progress=100)
    SimulationResult.objects.create(job=job, data=old)
    assert SimulationResult.objects.get(job=job).document() == old
    client.force_login(user)
    reads = _reads(api, client, job)
    assert reads["full"] == reads["summary"] == old
    ranking = reads["page"]["ranking"]
    labels = [e["label"] for e in old["ranking"]]
    assert ranking["data"][0]["y"] == [f"{i + 1}. {label}" for i, label in enumerate(labels)]
    assert old["ranking"][1]["label"] in reads["page?failure=1"]["whatif_completion"]["layout"]["title"]["text"]

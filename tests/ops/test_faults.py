"""Faults with REAL Redis servers and REAL Celery worker processes.

- Redis stopped and started mid-operation: accepted jobs survive (Redis saves its snapshot on
  SIGTERM and reloads it), submissions while it is down are clear 503s that write nothing,
  reads keep working, and web and worker resume by themselves.
- A worker SIGKILLed while sweep chunks run: the reaper re-queues the lost chunks, the sweep
  completes once, with every candidate ranked exactly once.
- Time limit, topology deletion under a running job, request id in the worker's log lines.
"""
from __future__ import annotations

import time

import pytest

from designer import services
from designer.choices import JobState
from designer.models import SimulationJob, SimulationResult, SweepChunk
from tests.conftest import wait_for

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _row(pk: int) -> SimulationJob:
    return SimulationJob.objects.get(pk=pk)


def _finished(pk: int):
    row = _row(pk)
    return row if row.is_terminal else None


def _submit(api, scenario, **headers):
    return api.post("/api/v1/jobs/", {"scenario": scenario.pk, "kind": "simulate"},
                    format="json", **headers)


def test_redis_outage_mid_operation_loses_no_accepted_job(celery_worker, own_redis, api_for,
                                                          user, scenario, client, settings):
    settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER = 10
    worker = celery_worker(REDIS_URL=own_redis.url, FABRICSCOPE_TEST_JOB_DELAY=3)
    api = api_for(user)
    accepted = []
    for i in range(3):
        response = _submit(api, scenario, HTTP_X_REQUEST_ID=f"outage-{i}")
        assert response.status_code == 201, response.content
        accepted.append(response.json()["id"])
    wait_for(lambda: _row(accepted[0]).state == JobState.RUNNING, 60, message="first job runs")

    own_redis.stop()  # one job running, two waiting in Redis
    refused = _submit(api, scenario)
    assert refused.status_code == 503 and \
        refused.json()["error"]["code"] == "broker_unavailable"
    assert api.get("/api/v1/jobs/").status_code == 200
    assert api.get(f"/api/v1/jobs/{accepted[1]}/").json()["state"] == "queued"
    client.force_login(user)
    assert client.get(f"/jobs/{accepted[1]}/").status_code == 200
    assert client.get("/readyz").status_code == 503
    time.sleep(4)  # long enough for the running job to finish and the worker to notice
    own_redis.start()

    response = wait_for(lambda: (r := _submit(api, scenario)).status_code == 201 and r, 30,
                        message="submission accepted again")
    accepted.append(response.json()["id"])
    for pk in accepted:
        row = wait_for(lambda: _finished(pk), 180, message=f"job {pk} finished after outage")
        assert row.state == JobState.SUCCEEDED, (pk, row.error, worker.output()[-4000:])
    assert SimulationResult.objects.filter(job_id__in=accepted).count() == len(accepted)
    assert SimulationJob.objects.count() == len(accepted)  # the refused one left no row
    assert client.get("/readyz").status_code == 200
    # The request id of each submission is in the worker's log lines for that job.
    log = worker.output()
    assert "request_id=outage-1" in log and 'msg="task designer.tasks.job_run started"' in log


def test_worker_killed_during_sweep_chunk_completes_once(celery_worker, scenario, user):
    pytest.importorskip("designer.engine.analysis.whatif")
    doomed = celery_worker(concurrency=2, FABRICSCOPE_TEST_JOB_DELAY=4)
    job = services.job_submit_sweep(scenario=scenario, user=user, over=["nic"], chunks=4)
    wait_for(lambda: SweepChunk.objects.filter(job=job, state=JobState.RUNNING).exists(), 90,
             message="a sweep chunk running")
    lost = set(SweepChunk.objects.filter(job=job, state=JobState.RUNNING)
               .values_list("index", flat=True))
    doomed.kill()
    rescuer = celery_worker(concurrency=2)
    row = wait_for(lambda: _finished(job.pk), 180, message="sweep finished after worker loss")
    assert row.state == JobState.SUCCEEDED, (row.error, rescuer.output()[-4000:])
    chunks = list(SweepChunk.objects.filter(job=job).order_by("index"))
    assert [c.state for c in chunks] == [JobState.SUCCEEDED] * 4
    assert all(c.attempts == 2 for c in chunks if c.index in lost)
    merged = SimulationResult.objects.get(job=job).document()  # the ranking stored columnar
    indexes = [r["index"] for r in merged["ranking"]]
    assert sorted(indexes) == list(range(merged["candidates"]))  # each exactly once
    assert merged["evaluated"] == merged["candidates"] == 20   # 2 x (8 rail NICs + 2 storage NICs on the storage fabric)


def test_soft_time_limit_fails_the_job_with_a_clear_message(celery_worker, scenario, user):
    worker = celery_worker(FABRICSCOPE_JOB_SOFT_TIME_LIMIT=2, FABRICSCOPE_TEST_JOB_DELAY=30)
    job = services.job_submit_simulate(scenario=scenario, user=user)
    row = wait_for(lambda: _finished(job.pk), 60, message="job stopped by its time limit")
    assert row.state == JobState.FAILED, worker.output()[-3000:]
    assert row.error.startswith("time limit exceeded: the job ran longer than 2 s")
    assert row.message.startswith("failed: time limit exceeded")


def test_deleting_topology_under_a_running_job_stops_it_quietly(celery_worker, scenario, user,
                                                                 small_topology):
    worker = celery_worker(FABRICSCOPE_TEST_JOB_DELAY=60)
    job = services.job_submit_simulate(scenario=scenario, user=user)
    wait_for(lambda: _row(job.pk).state == JobState.RUNNING, 60, message="job running")
    services.topology_delete(topology=small_topology)
    wait_for(lambda: "task designer.tasks.job_run finished" in worker.output(), 30,
             message="the runner noticed and ended")
    assert "Traceback" not in worker.output(), worker.output()[-4000:]
    assert not SimulationJob.objects.filter(pk=job.pk).exists()

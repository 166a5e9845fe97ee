"""End to end through a REAL Redis and REAL Celery worker subprocesses (no eager mode).

Redis is REDIS_URL when set, else an embedded redis-server; the database is the test database
(file SQLite or PostgreSQL), handed to each worker through DATABASE_URL. Workers run with a
0.5 s heartbeat, a 4 s heartbeat timeout and the reaper every 1 s (tests/conftest.py WORKER_ENV).
``FABRICSCOPE_TEST_JOB_DELAY`` makes a worker hold a job in the running state (reporting
progress) before calling the engine, so it can be killed or cancelled mid-job.
"""
import time

import pytest

from designer import services
from designer.choices import JobState
from designer.models import SimulationJob, SimulationResult, SweepChunk

from tests.conftest import RING_ALLREDUCE, wait_for

pytestmark = [pytest.mark.worker, pytest.mark.slow, pytest.mark.django_db(transaction=True)]

STORAGE_READ = {"id": "load", "kind": "storage_read", "source": {"ids": ["storage0"]},
                "participants": {"group": "h0", "kind": "gpu"}, "bytes": 4e9,
                "via": "gpudirect"}


def _state(job) -> SimulationJob:
    return SimulationJob.objects.get(pk=job.pk)


def _finished(job):
    row = _state(job)
    return row if row.is_terminal else None


def test_simulate_end_to_end_with_progress(celery_worker, scenario, user):
    worker = celery_worker()
    scenario = services.scenario_update(scenario=scenario, user=user,
                                        workload=RING_ALLREDUCE + [STORAGE_READ])
    job = services.job_submit_simulate(scenario=scenario, user=user)
    seen = []
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        row = _state(job)
        seen.append((row.state, row.progress, row.message))
        if row.is_terminal:
            break
        time.sleep(0.01)
    row = _state(job)
    assert row.state == JobState.SUCCEEDED, (row.error, worker.output()[-3000:])
    assert row.progress == 100 and row.worker_hostname == worker.name and row.attempts == 1
    running = [s for s in seen if s[0] == JobState.RUNNING]
    # Progress written by the runner from the engine's callback, seen while the job ran.
    assert any(message not in ("running", "") for _, _, message in running), seen
    assert all(0 <= p <= 99 for _, p, _ in running)
    data = SimulationResult.objects.get(job=job).data
    assert data["format"] == "fabricscope.result/1"
    assert set(data["summary"]["patterns"]) == {"ar", "load"}


def test_worker_killed_mid_job_is_requeued_and_finished_by_another(celery_worker, scenario,
                                                                   user):
    doomed = celery_worker(FABRICSCOPE_TEST_JOB_DELAY=60)
    job = services.job_submit_simulate(scenario=scenario, user=user)
    wait_for(lambda: _state(job).state == JobState.RUNNING, 60, message="job running")
    assert _state(job).worker_hostname == doomed.name
    doomed.kill()  # SIGKILL: no warm shutdown, no chance to update the row
    assert _state(job).state == JobState.RUNNING
    rescuer = celery_worker()
    row = wait_for(lambda: _finished(job), 90, message="job finished after worker loss")
    assert row.state == JobState.SUCCEEDED, (row.error, rescuer.output()[-3000:])
    assert row.attempts == 2 and row.worker_hostname == rescuer.name
    assert SimulationResult.objects.filter(job=job).exists()


def test_worker_loss_after_last_attempt_fails_the_job(celery_worker, scenario, user):
    doomed = celery_worker(FABRICSCOPE_TEST_JOB_DELAY=60)
    job = services.job_submit_simulate(scenario=scenario, user=user)
    wait_for(lambda: _state(job).state == JobState.RUNNING, 60, message="job running")
    doomed.kill()
    celery_worker(FABRICSCOPE_JOB_MAX_ATTEMPTS=1)
    row = wait_for(lambda: _finished(job), 60, message="lost job marked failed")
    assert row.state == JobState.FAILED and row.message == "failed: worker lost"
    assert doomed.name in row.error


def test_cancel_queued_job_never_runs(celery_worker, scenario, user):
    job = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_cancel(job=job, user=user)
    celery_worker()
    # FIFO queue: once a later job has finished, the cancelled job's message was consumed.
    later = services.job_submit_simulate(scenario=scenario, user=user)
    assert wait_for(lambda: _finished(later), 90).state == JobState.SUCCEEDED
    row = _state(job)
    assert row.state == JobState.CANCELLED and row.attempts == 0 and row.started_at is None


def test_cancel_running_job(celery_worker, scenario, user):
    celery_worker(FABRICSCOPE_TEST_JOB_DELAY=60)
    job = services.job_submit_simulate(scenario=scenario, user=user)
    wait_for(lambda: _state(job).state == JobState.RUNNING, 60, message="job running")
    services.job_cancel(job=job, user=user)
    row = wait_for(lambda: _finished(job), 20, message="job cancelled")
    assert row.state == JobState.CANCELLED and row.message == "cancelled"
    assert not SimulationResult.objects.filter(job=job).exists()


def test_chunked_sweep_end_to_end(celery_worker, scenario, user):
    whatif = pytest.importorskip("designer.engine.analysis.whatif")
    from designer import bridge

    worker = celery_worker(concurrency=2)
    job = services.job_submit_sweep(scenario=scenario, user=user, over=["nic"], chunks=4)
    row = wait_for(lambda: _finished(job), 180, message="sweep finished")
    assert row.state == JobState.SUCCEEDED, (row.error, worker.output()[-3000:])
    assert row.chunks_total == 4 and row.progress == 100
    chunks = list(SweepChunk.objects.filter(job=job))
    assert [c.state for c in chunks] == [JobState.SUCCEEDED] * 4
    assert all(c.result is None for c in chunks)  # merged into the job's result
    stored = SimulationResult.objects.get(job=job)
    assert stored.data["format"] == "fabricscope.sweep-columns/1"  # the ranking stored as columns
    merged = stored.document()
    assert merged["format"] == "fabricscope.sweep/1"
    # Merging the chunks gives the unchunked sweep: every candidate ranked exactly once, in
    # the engine's order.
    candidates = bridge.json_safe(
        whatif.sweep_plan(bridge.job_scenario_document(row), ["nic"])["candidates"])
    assert [f for c in chunks for f in c.failures] == candidates
    # 2 hosts x (8 rail NICs + 2 storage NICs, wired to the storage fabric): all tried.
    assert merged["candidates"] == merged["evaluated"] == len(candidates) == 20
    assert not merged["skipped"].get("unwired")
    assert sorted(r["index"] for r in merged["ranking"]) == list(range(len(candidates)))
    unchunked = bridge.json_safe(whatif.sweep(bridge.job_scenario_document(row), over=["nic"]))
    assert [r["index"] for r in merged["ranking"]] == [r["index"] for r in unchunked["ranking"]]


def test_compare_policies_end_to_end(celery_worker, scenario, user):
    pytest.importorskip("designer.engine.analysis.whatif")
    celery_worker()
    job = services.job_submit_compare(scenario=scenario, user=user,
                                      policies=["affinity", "any"])
    row = wait_for(lambda: _finished(job), 120, message="comparison finished")
    assert row.state == JobState.SUCCEEDED, row.error
    assert SimulationResult.objects.filter(job=job).exists()

"""Job submission, cancellation, the runner's paths and the stale-job reaper (in process).

The runner is called directly here (``services.job_run``); tests/designer/test_worker.py runs
the same paths through real Celery workers. Runner tests use ``transaction=True``: the runner's
heartbeat thread has its own database connection and must see committed rows.
"""
import threading
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.utils import timezone

from designer import services
from designer.choices import JobState
from designer.exceptions import EngineValidationError, IllegalTransition
from designer.models import SimulationJob, SimulationResult, SweepChunk
from designer.services.runs import job_finish
from designer.services.sweeps import sweep_settle

from tests import job_delay
from tests.conftest import wait_for


def _job(scenario, user, **fields) -> SimulationJob:
    defaults = dict(kind="simulate", topology=scenario.topology, revision=scenario.revision,
                    scenario=scenario, submitted_by=user,
                    inputs={"workload": scenario.workload, "routing": scenario.routing,
                            "failures": scenario.failures, "mode": scenario.mode})
    return SimulationJob.objects.create(**{**defaults, **fields})


# --- submission --------------------------------------------------------------------------------

@pytest.mark.django_db
def test_submit_publishes_after_commit(scenario, user, published,
                                       django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        job = services.job_submit_simulate(scenario=scenario, user=user)
        assert published == []  # nothing leaves before the transaction commits
    assert len(callbacks) == 1
    assert published == [("designer.tasks.job_run", [job.pk], job.celery_task_id)]
    job.refresh_from_db()
    assert job.state == JobState.QUEUED and job.kind == "simulate"
    assert job.inputs["workload"] == scenario.workload and job.revision == scenario.revision


@pytest.mark.django_db
def test_unreachable_queue_fails_the_job(scenario, user, monkeypatch,
                                         django_capture_on_commit_callbacks):
    def refuse(*args, **kwargs):
        raise ConnectionRefusedError("no broker")

    monkeypatch.setattr("designer.services.queue._send", refuse)
    with django_capture_on_commit_callbacks(execute=True):
        job = services.job_submit_simulate(scenario=scenario, user=user)
    job.refresh_from_db()
    assert job.state == JobState.FAILED
    assert "no broker" in job.error and job.message == "failed: job queue unreachable"


@pytest.mark.django_db
def test_submit_sweep_and_compare_validate_parameters(scenario, user, published):
    with pytest.raises(ValidationError):
        services.job_submit_sweep(scenario=scenario, user=user, over=[])
    with pytest.raises(ValidationError):
        services.job_submit_sweep(scenario=scenario, user=user, over=["nic"], chunks=0)
    with pytest.raises(ValidationError):
        services.job_submit_compare(scenario=scenario, user=user, policies=["warp"])
    job = services.job_submit_sweep(scenario=scenario, user=user, over=["nic"], chunks=3)
    assert job.kind == "sweep"
    assert job.parameters == {"over": ["nic"], "chunks": 3, "degrade": None}


@pytest.mark.django_db
def test_scenario_with_unknown_node_is_refused_with_its_path(small_topology, user):
    workload = [{"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h7/gpu0", "bytes": 1e6}]
    with pytest.raises(EngineValidationError) as info:
        services.scenario_create(topology=small_topology, user=user, name="bad",
                                 workload=workload)
    assert any(d["path"].startswith("workload[0].dst") and "h7/gpu0" in d["message"]
               for d in info.value.details)


# --- cancellation ------------------------------------------------------------------------------

@pytest.mark.django_db
def test_cancel_queued_job_is_immediate_and_final(scenario, user, published):
    job = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_cancel(job=job, user=user)
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED and job.finished_at is not None
    with pytest.raises(IllegalTransition):
        services.job_cancel(job=job, user=user)
    services.job_run(job_id=job.pk)  # a message delivered anyway does nothing
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED and job.attempts == 0


@pytest.mark.django_db(transaction=True)
def test_cancel_running_job_stops_it_at_a_progress_point(scenario, user, published, settings,
                                                          monkeypatch):
    job_delay.install(30.0, setattr=monkeypatch.setattr)
    settings.FABRICSCOPE_JOB_PROGRESS_INTERVAL = 0.05
    job = services.job_submit_simulate(scenario=scenario, user=user)
    runner = threading.Thread(target=_run_and_close, args=(job.pk,))
    runner.start()
    wait_for(lambda: SimulationJob.objects.get(pk=job.pk).state == JobState.RUNNING, 10)
    services.job_cancel(job=job, user=user)
    assert job.cancel_requested and job.state == JobState.RUNNING
    runner.join(20)
    assert not runner.is_alive()
    job.refresh_from_db()
    assert job.state == JobState.CANCELLED and job.message == "cancelled"
    assert not SimulationResult.objects.filter(job=job).exists()


def _run_and_close(job_id):
    from django.db import connection

    try:
        services.job_run(job_id=job_id, hostname="thread@test")
    finally:
        connection.close()


# --- the runner --------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_runner_success_stores_result_and_ends_terminal(scenario, user, published):
    job = services.job_submit_simulate(scenario=scenario, user=user)
    services.job_run(job_id=job.pk, hostname="w@test", task_id="t-1")
    job.refresh_from_db()
    assert job.state == JobState.SUCCEEDED and job.progress == 100
    assert job.message.startswith("done in") and job.error == ""
    assert job.attempts == 1 and job.worker_hostname == "w@test" and job.celery_task_id == "t-1"
    assert job.started_at <= job.finished_at
    result = SimulationResult.objects.get(job=job).data
    assert result["format"] == "fabricscope.result/1"
    assert result["summary"]["patterns"]["ar"]["flows"] > 0
    services.job_run(job_id=job.pk)  # redelivery after success: no second run
    job.refresh_from_db()
    assert job.attempts == 1 and job.state == JobState.SUCCEEDED


@pytest.mark.django_db(transaction=True)
def test_runner_engine_error_fails_with_located_message(scenario, user):
    bad = [{"id": "p", "kind": "p2p", "src": "h0/gpu0", "dst": "h9/gpu0", "bytes": 1e6}]
    job = _job(scenario, user, inputs={"workload": bad, "routing": {}, "failures": [],
                                       "mode": "steady"})
    services.job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.finished_at is not None
    assert "workload[0].dst" in job.error and "h9/gpu0" in job.error
    assert job.message.startswith("failed:")


@pytest.mark.django_db(transaction=True)
def test_runner_unexpected_exception_fails_with_its_text(scenario, user, monkeypatch):
    def explode(job, progress):
        progress(0.3, "almost")
        raise RuntimeError("solver exploded")

    monkeypatch.setattr("designer.bridge.run_simulation", explode)
    job = _job(scenario, user)
    services.job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.error == "RuntimeError: solver exploded"


@pytest.mark.django_db(transaction=True)
def test_superseded_run_cannot_overwrite_the_new_one(scenario, user):
    job = _job(scenario, user, state=JobState.RUNNING, attempts=2)
    assert not job_finish(job.pk, 1, JobState.SUCCEEDED, data={"x": 1})
    job.refresh_from_db()
    assert job.state == JobState.RUNNING and not SimulationResult.objects.exists()


# --- worker loss -------------------------------------------------------------------------------

@pytest.mark.django_db
def test_reaper_requeues_once_then_fails(scenario, user, published, settings,
                                         django_capture_on_commit_callbacks):
    settings.FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT = 30
    settings.FABRICSCOPE_JOB_MAX_ATTEMPTS = 2
    stale = timezone.now() - timedelta(seconds=31)
    fresh = timezone.now() - timedelta(seconds=5)
    lost = _job(scenario, user, state=JobState.RUNNING, attempts=1, heartbeat_at=stale,
                worker_hostname="w1@host")
    alive = _job(scenario, user, state=JobState.RUNNING, attempts=1, heartbeat_at=fresh)
    twice = _job(scenario, user, state=JobState.RUNNING, attempts=2, heartbeat_at=stale)
    cancelling = _job(scenario, user, state=JobState.RUNNING, attempts=1, heartbeat_at=stale,
                      cancel_requested=True)
    with django_capture_on_commit_callbacks(execute=True):
        outcome = services.job_reap_stale()
    assert outcome == {"requeued": 1, "failed": 1, "cancelled": 1, "settled": 0,
                       "republished": 0}
    for job in (lost, alive, twice, cancelling):
        job.refresh_from_db()
    assert lost.state == JobState.QUEUED and "w1@host lost" in lost.message
    assert published == [("designer.tasks.job_run", [lost.pk], lost.celery_task_id)]
    assert alive.state == JobState.RUNNING
    assert twice.state == JobState.FAILED and twice.error.startswith("worker lost")
    assert cancelling.state == JobState.CANCELLED


@pytest.mark.django_db
def test_sweep_chunk_failure_fails_the_sweep_and_cancels_the_rest(scenario, user):
    job = _job(scenario, user, kind="sweep", state=JobState.RUNNING, attempts=1, chunks_total=3)
    SweepChunk.objects.create(job=job, index=0, state=JobState.SUCCEEDED, result={})
    SweepChunk.objects.create(job=job, index=1, state=JobState.FAILED, error="worker lost: w")
    SweepChunk.objects.create(job=job, index=2, state=JobState.QUEUED)
    sweep_settle(job.pk)
    job.refresh_from_db()
    assert job.state == JobState.FAILED and job.error == "chunk 1: worker lost: w"
    assert SweepChunk.objects.get(job=job, index=2).state == JobState.CANCELLED

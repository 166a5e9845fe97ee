"""Exactly-once completion: a process killed at any seam between two durable steps.

Every test uses REAL worker processes (``celery_worker``: prefork pool + embedded beat, Redis,
the test database - SQLite or PostgreSQL). :mod:`tests.crash_at` makes one process die with
``os._exit(1)`` at a chosen point, once; the worker's master replaces its pool process, and
nothing else helps: no human, no cancel. Each run must end succeeded with one result, every
failure candidate ranked exactly once, and the attempts the rows' history explains.

The sweep, on the 2-host DGX-H100 pod of ``small_topology`` (8 rail NICs per host, and 2
storage NICs wired to the storage fabric of its one storage server)::

    h0 (8 GPUs, 8 + 2 NICs) ==== 8 rail leaves / 1 storage switch ==== h1 (8 GPUs, 8 + 2 NICs)

    over=["nic"], chunks=2  ->  20 candidates: chunk 0 = h0's 10 NICs, chunk 1 = h1's 10 NICs

Worker timings (tests/conftest.py WORKER_ENV): heartbeat every 0.5 s, lost after 4 s, reaper
every 1 s - so a recovery that needs the reaper lands within ~5 s.
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from django.utils import timezone

from designer import services
from designer.choices import JobState
from designer.models import SimulationJob, SimulationResult, SweepChunk
from tests import crash_at
from tests.conftest import ROOT, database_url, wait_for

CANDIDATES = 20  # 2 hosts x (8 rail NICs + 2 storage NICs wired to the storage fabric)


def _finished(pk: int):
    row = SimulationJob.objects.get(pk=pk)
    return row if row.is_terminal else None


def _submit_from_dying_web(scenario, user, redis_url: str, marker, tmp_path) -> SimulationJob:
    """Submit a sweep from a separate process that dies between its commit and its publish."""
    from designer.celery import app

    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "designer.settings",
           "DATABASE_URL": database_url(), "REDIS_URL": redis_url,
           "FABRICSCOPE_QUEUE": app.conf.task_default_queue,
           "FABRICSCOPE_VAR_DIR": str(tmp_path), "SECRET_KEY": "test-web-secret-key",
           "FABRICSCOPE_TEST_CRASH_AT": "web_publish",
           "FABRICSCOPE_TEST_CRASH_MARKER": str(marker)}
    web = subprocess.run([sys.executable, "-m", "tests.crash_at", "submit-sweep",
                          str(scenario.pk), str(user.pk)], check=False, cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert web.returncode == 1, web.stderr[-3000:]  # os._exit(1): it died, not an error
    job = SimulationJob.objects.get()
    assert job.state == JobState.QUEUED and job.published_at is None  # committed, never sent
    return job


def _submit(point: str, scenario, user, redis_url: str, marker, tmp_path) -> SimulationJob:
    """A simulation for the point in the runner, else a 2-chunk NIC sweep."""
    if point == "web_publish":
        return _submit_from_dying_web(scenario, user, redis_url, marker, tmp_path)
    if point == "job_finish":
        return services.job_submit_simulate(scenario=scenario, user=user)
    return services.job_submit_sweep(scenario=scenario, user=user, over=["nic"], chunks=2)


def _assert_sweep_once(job: SimulationJob) -> None:
    """One result; every candidate ranked exactly once; chunks merged and cleared."""
    assert SimulationResult.objects.filter(job=job).count() == 1
    merged = SimulationResult.objects.get(job=job).document()  # the ranking stored columnar
    indexes = [r["index"] for r in merged["ranking"]]
    assert sorted(indexes) == list(range(CANDIDATES))  # no duplicate, none missing
    assert merged["evaluated"] == merged["candidates"] == CANDIDATES
    chunks = list(SweepChunk.objects.filter(job=job).order_by("index"))
    assert [(c.index, c.state) for c in chunks] == [(0, JobState.SUCCEEDED),
                                                    (1, JobState.SUCCEEDED)]
    # Each chunk ran once: a redelivered message of a finished chunk is a no-op.
    assert [c.attempts for c in chunks] == [1, 1]
    assert all(c.result is None for c in chunks)  # merged into the job's result, not kept twice


@pytest.mark.parametrize("point", crash_at.POINTS)
@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_killed_at_every_point_finishes_once(point, celery_worker, scenario, user, redis_url,
                                             tmp_path):
    pytest.importorskip("designer.engine.analysis.whatif")
    marker = tmp_path / "crashed"
    crash = {} if point == "web_publish" else {"FABRICSCOPE_TEST_CRASH_AT": point,
                                               "FABRICSCOPE_TEST_CRASH_MARKER": marker}
    worker = celery_worker(**crash)
    start = time.monotonic()
    job = _submit(point, scenario, user, redis_url, marker, tmp_path)
    row = wait_for(lambda: _finished(job.pk), 60, message=f"job to finish after {point}")
    elapsed = time.monotonic() - start
    # At merge_commit the crash comes after the job's end, and beat's reaper may settle the
    # sweep just before the worker does (its settle is then a no-op that still dies): the job
    # can look finished a moment before the marker is written, so wait for it too.
    wait_for(marker.exists, 15, message=f"the process to die at {point}")
    assert marker.read_text().startswith(point), "the process did not die at the point"
    assert row.state == JobState.SUCCEEDED, (row.error, worker.output()[-4000:])
    assert row.progress == 100 and row.finished_at is not None
    if point == "job_finish":  # the lost run's result was never stored; the rerun's was
        assert row.attempts == 2
        assert SimulationResult.objects.filter(job=row).count() == 1
    else:
        assert row.attempts == 1  # prepare ran once (its redelivered message is a no-op)
        _assert_sweep_once(row)
    assert elapsed < 30, f"recovery took {elapsed:.1f} s"


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_reaper_runs_while_the_only_pool_process_is_busy(celery_worker, scenario, user):
    """The reaper runs in beat's process, not as a message behind the job holding the pool.

    A 30-s job occupies the worker's single pool process; a run lost on its last attempt (a
    heartbeat 60 s old, the worker 4 s limit) must be failed within a few seconds, not after
    the 30-s job.
    """
    celery_worker(concurrency=1, FABRICSCOPE_TEST_JOB_DELAY=30)
    busy = services.job_submit_simulate(scenario=scenario, user=user)
    wait_for(lambda: SimulationJob.objects.get(pk=busy.pk).state == JobState.RUNNING, 60,
             message="the busy job running")
    lost = SimulationJob.objects.create(
        kind="simulate", topology=scenario.topology, revision=scenario.revision,
        scenario=scenario, submitted_by=user, state=JobState.RUNNING, attempts=2,
        worker_hostname="gone@test", heartbeat_at=busy.created_at.replace(year=2000))
    start = time.monotonic()
    row = wait_for(lambda: _finished(lost.pk), 10, message="the lost run failed by the reaper")
    assert row.state == JobState.FAILED and row.error.startswith("worker lost: gone@test")
    assert time.monotonic() - start < 10
    assert SimulationJob.objects.get(pk=busy.pk).state == JobState.RUNNING  # still holding it
    services.job_cancel(job=busy, user=user)


@pytest.mark.django_db
def test_reaper_republishes_lost_messages_with_a_doubling_backoff(scenario, user, published,
                                                                 settings):
    """Queued jobs, all queued 100 s ago unless said, heartbeat timeout 30 s:

    ====  ===========  ================  ====================================================
    job   queued (s)   last publish (s)  re-sent?
    ====  ===========  ================  ====================================================
    a     -100         never             yes: the publisher died after its commit
    b     -10          never             no: within the timeout (its publisher may be slow)
    c     -100         -60               yes: waited 60 s since, 40 s before (60 >= 40)
    d     -100         -40               no: waited 40 s since, 60 s before (40 < 60)
    e     -100         -20               no: published within the timeout
    ====  ===========  ================  ====================================================
    """
    settings.FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT = 30
    settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER = 10
    now = timezone.now()
    rows = {}
    for name, queued, publish in (("a", 100, None), ("b", 10, None), ("c", 100, 60),
                                  ("d", 100, 40), ("e", 100, 20)):
        job = services.job_submit_simulate(scenario=scenario, user=user)
        SimulationJob.objects.filter(pk=job.pk).update(
            created_at=now - timedelta(seconds=queued),
            published_at=None if publish is None else now - timedelta(seconds=publish))
        rows[name] = job
    published.clear()
    outcome = services.job_reap_stale(now=now)
    assert outcome["republished"] == 2
    assert sorted(args[0] for _, args, _ in published) == sorted([rows["a"].pk, rows["c"].pk])
    assert all(task_id == SimulationJob.objects.get(pk=args[0]).celery_task_id
               for _, args, task_id in published)  # same message id: revoke still reaches it
    assert SimulationJob.objects.filter(published_at=None).count() == 1  # b, not yet re-sent


@pytest.mark.django_db
def test_reaper_settles_only_sweeps_whose_chunks_all_ended(scenario, user):
    """Two running 2-chunk sweeps, no worker. ``ended``: chunk 0 succeeded, chunk 1 cancelled
    outside a job cancel - settled: failed "1 chunk(s) cancelled" (before, it waited for ever).
    ``busy``: chunk 1 still running (fresh heartbeat) - left alone."""
    def sweep(second: str) -> SimulationJob:
        job = SimulationJob.objects.create(
            kind="sweep", topology=scenario.topology, revision=scenario.revision,
            scenario=scenario, submitted_by=user, state=JobState.RUNNING, attempts=1,
            chunks_total=2, heartbeat_at=timezone.now())
        SweepChunk.objects.create(job=job, index=0, state=JobState.SUCCEEDED, result={})
        SweepChunk.objects.create(job=job, index=1, state=second, heartbeat_at=timezone.now())
        return job

    ended, busy = sweep(JobState.CANCELLED), sweep(JobState.RUNNING)
    assert services.job_reap_stale()["settled"] == 1
    ended.refresh_from_db()
    busy.refresh_from_db()
    assert ended.state == JobState.FAILED and ended.error == "1 chunk(s) cancelled"
    assert busy.state == JobState.RUNNING
    assert services.job_reap_stale()["settled"] == 0  # idempotent: nothing left to settle

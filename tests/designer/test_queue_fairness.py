"""A fair job queue: one user's backlog (a sweep's chunks, a pile of jobs) does not hold up
another user's short job (docs/RELIABILITY.md, "Fair job queue").

- The real thing: one worker with one pool process, user A's 6-chunk sweep at the broker,
  then user B's simulation: B's job runs next (after the chunk that is running), not last.
- The priority a message gets: how many of its user's other jobs and chunks are in flight.
- The broker keeps the order: a message lands in the Redis list of its priority.
"""
from __future__ import annotations

import json

import pytest

from designer import services
from designer.choices import JobState
from designer.models import SimulationJob, SweepChunk
from designer.services import fairness
from designer.services.queue import enqueue_job
from tests.conftest import RING_ALLREDUCE, wait_for


def _scenario_of(owner):
    topology = services.topology_build(owner=owner, name="pod-b", template="dgx-h100", hosts=2,
                                       options={})
    return services.scenario_create(topology=topology, user=owner, name="ring-b",
                                    workload=RING_ALLREDUCE)


@pytest.mark.worker
@pytest.mark.slow
@pytest.mark.django_db(transaction=True)
def test_short_job_of_one_user_is_not_behind_another_users_sweep(celery_worker, scenario, user,
                                                                 other_user):
    pytest.importorskip("designer.engine.analysis.whatif")
    celery_worker(concurrency=1, beat=False, FABRICSCOPE_TEST_JOB_DELAY=1.5)
    sweep = services.job_submit_sweep(scenario=scenario, user=user, over=["nic"], chunks=6)
    wait_for(lambda: SweepChunk.objects.filter(job=sweep, state=JobState.RUNNING).exists(), 90,
             message="the first chunk of user A's sweep runs")
    short = services.job_submit_simulate(scenario=_scenario_of(other_user), user=other_user)

    done = wait_for(lambda: (row := SimulationJob.objects.get(pk=short.pk)).is_terminal and row,
                    120, message="user B's simulation finished")
    assert done.state == JobState.SUCCEEDED, done.error
    # FIFO would run B's job after all 6 chunks; fair, it runs after the one that was running
    # (and at most one more that a pool process had already taken).
    chunks_started_before = SweepChunk.objects.filter(job=sweep, started_at__lt=done.started_at)
    waited_s = (done.started_at - done.created_at).total_seconds()
    print(f"user B's job waited {waited_s:.2f} s behind "
          f"{chunks_started_before.count()} of user A's 6 chunks")
    assert chunks_started_before.count() <= 2
    finished = wait_for(lambda: (row := SimulationJob.objects.get(pk=sweep.pk)).is_terminal and row,
                        120, message="user A's sweep finished")
    assert finished.state == JobState.SUCCEEDED, finished.error  # A's work is delayed, not lost


def _job(scenario, owner, state=JobState.QUEUED, kind="simulate", **fields) -> SimulationJob:
    return SimulationJob.objects.create(kind=kind, topology_id=scenario.topology_id,
                                        revision=scenario.revision, scenario=scenario,
                                        submitted_by=owner, state=state, **fields)


@pytest.mark.django_db
def test_priority_counts_the_users_other_work_in_flight(scenario, user, other_user):
    first = _job(scenario, user)
    assert fairness.message_priority(SimulationJob, first.pk) == 0  # nothing else in flight
    _job(scenario, user, state=JobState.RUNNING)
    _job(scenario, user, state=JobState.SUCCEEDED)    # finished: not counted
    _job(scenario, user, state=JobState.CANCELLED)
    _job(scenario, other_user)                          # another user's: not counted
    assert fairness.message_priority(SimulationJob, first.pk) == 1

    # A sweep past its prepare step counts through its chunks, not twice.
    sweep = _job(scenario, user, state=JobState.RUNNING, kind="sweep", chunks_total=3)
    chunks = [SweepChunk.objects.create(job=sweep, index=i, failures=[]) for i in range(3)]
    assert fairness.message_priority(SimulationJob, first.pk) == 1 + 3
    assert fairness.message_priority(SweepChunk, chunks[0].pk) == 1 + 1 + 2
    assert fairness.message_priority(SimulationJob, _job(scenario, other_user).pk) == 1

    for _ in range(12):  # capped at the broker's lowest priority
        _job(scenario, user)
    assert fairness.message_priority(SimulationJob, first.pk) == fairness.LOWEST_PRIORITY == 9


@pytest.mark.django_db
def test_priority_of_a_row_that_is_gone_is_neutral():
    assert fairness.message_priority(SimulationJob, 10**9) == 0
    assert fairness.message_priority(SweepChunk, 10**9) == 0


@pytest.mark.worker
@pytest.mark.django_db
def test_the_broker_serves_the_light_users_message_first(redis_url, scenario, user, other_user):
    """A's three jobs are published before B's one; a consumer popping in kombu's order (the
    priority lists from 0 up, each oldest first) gets B's first."""
    from designer.celery import app
    from designer.ops import broker

    queue = app.conf.task_default_queue
    heavy = [_job(scenario, user, celery_task_id=f"a{i}") for i in range(3)]
    light = _job(_scenario_of(other_user), other_user, celery_task_id="b0")
    for job in [*heavy, light]:
        enqueue_job(job.pk, job.celery_task_id)
    client = broker.client(redis_url)
    lists = [queue, *(f"{queue}\x06\x16{p}" for p in range(1, 10))]
    try:
        # BRPOP's rule: the first non-empty list, its oldest message (kombu LPUSHes).
        order = [raw for name in lists for raw in iter(lambda n=name: client.rpop(n), None)]
        ids = [json.loads(raw)["headers"]["id"] for raw in order]
    finally:
        client.delete(*lists)
    assert ids[0] == "b0", ids
    assert sorted(ids[1:]) == ["a0", "a1", "a2"]
    assert broker.queue_depth(queue) == 0

"""Submitting and cancelling simulation jobs (simulate, sweep, compare).

``job_submit_*`` create a queued row and publish a Celery message after commit (``queue``); the
runner takes it from there. Contract (docs/RELIABILITY.md): a job is accepted only when the
broker answers, and a publish that fails after the commit marks the row failed.
"""
from __future__ import annotations

import contextvars
import logging
from functools import partial
from typing import Iterable

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import transaction

from designer.choices import JobKind, JobState
from designer.exceptions import IllegalTransition
from designer.models import Scenario, SimulationJob, SweepChunk, Topology
from designer.ops import broker as ops_broker
from designer.ops import limits as ops_limits
from designer.ops.errors import BrokerUnavailable
from designer.services.audit import audit_record
from designer.services.queue import _copy_fields, _enqueue_job, _lock_job, _revoke, _task_id
from designer.services.scenarios import _scenario_dict
from designer.services.sweeps import _sweep_settle_locked

__all__ = ["NIC_POLICIES", "MAX_SWEEP_CHUNKS", "job_submit_simulate", "job_submit_sweep",
           "job_submit_compare", "job_cancel"]

logger = logging.getLogger(__name__)

NIC_POLICIES = ("affinity", "pxn", "any", "static")
MAX_SWEEP_CHUNKS = 256


def job_submit_simulate(*, scenario: Scenario, user: AbstractBaseUser,
                        failures: list[dict] | None = None) -> SimulationJob:
    """Queue a simulation of ``scenario``; the result is a ``fabricscope.result/1``.

    ``failures`` (optional) replaces the scenario's failures for this job only: a what-if run
    that leaves the scenario unchanged (what a viewer, who may run but not save, can do).
    """
    return _job_submit(kind=JobKind.SIMULATE, scenario=scenario, user=user, parameters={},
                       failures=failures)


def job_submit_sweep(*, scenario: Scenario, user: AbstractBaseUser, over: list[str],
                     chunks: int | None = None, degrade: float | None = None,
                     failures: list[dict] | None = None) -> SimulationJob:
    """Queue a failure sweep over the failure classes ``over`` (e.g. ``["nic"]``).

    The failures are split into ``chunks`` parallel tasks (default FABRICSCOPE_SWEEP_CHUNKS);
    ``degrade`` (0 < factor < 1) degrades each candidate instead of taking it down.
    """
    if degrade is not None and not (isinstance(degrade, (int, float)) and 0 < degrade < 1):
        raise ValidationError({"degrade": "must be a factor between 0 and 1"})
    if not over or not all(isinstance(o, str) and o for o in over):
        raise ValidationError({"over": "list at least one failure class, e.g. [\"nic\"]"})
    chunks = settings.FABRICSCOPE_SWEEP_CHUNKS if chunks is None else chunks
    if not isinstance(chunks, int) or not 1 <= chunks <= MAX_SWEEP_CHUNKS:
        raise ValidationError({"chunks": f"must be between 1 and {MAX_SWEEP_CHUNKS}"})
    return _job_submit(kind=JobKind.SWEEP, scenario=scenario, user=user,
                       parameters={"over": list(over), "chunks": chunks, "degrade": degrade},
                       failures=failures)


def job_submit_compare(*, scenario: Scenario, user: AbstractBaseUser,
                       policies: Iterable[str] = ("affinity", "pxn", "any"),
                       failures: list[dict] | None = None) -> SimulationJob:
    """Queue a comparison of the scenario under several NIC policies."""
    policies = list(policies)
    bad = [p for p in policies if p not in NIC_POLICIES]
    if not policies or bad:
        raise ValidationError({"policies": f"choose among {', '.join(NIC_POLICIES)}"})
    return _job_submit(kind=JobKind.COMPARE, scenario=scenario, user=user,
                       parameters={"policies": policies}, failures=failures)


def _job_submit(*, kind: str, scenario: Scenario, user, parameters: dict,
                failures: list[dict] | None = None) -> SimulationJob:
    """Create and queue a job. Contract (docs/RELIABILITY.md): a job is accepted only when the
    broker answers; a publish that still fails after the commit marks the row failed and raises
    :class:`BrokerUnavailable` (when this is the outermost transaction), never a silent loss."""
    checked = _scenario_dict(scenario)
    if failures is not None:   # a what-if: this job's failures, the scenario's stay as saved
        checked["failures"] = failures = list(failures)
        parameters = {**parameters, "failures_override": True}
    ops_limits.validate_scenario(checked)
    if settings.FABRICSCOPE_BROKER_PRECHECK:
        ops_broker.ensure_available()  # 503 before anything is written
    inputs = {"workload": scenario.workload, "routing": scenario.routing,
              "failures": scenario.failures if failures is None else failures,
              "mode": scenario.mode}
    with transaction.atomic():
        ops_limits.check_active_jobs(user=user)
        job = SimulationJob.objects.create(
            kind=kind, topology_id=scenario.topology_id, revision=scenario.revision,
            scenario=scenario, submitted_by=user, inputs=inputs, parameters=parameters,
            message="queued", celery_task_id=_task_id())
        audit_record(topology=scenario.topology, actor=user, action="job.submit",  # issue 9
                     summary=f"{kind} job {job.pk} of scenario {scenario.name!r}",
                     details={"job": job.pk, "kind": kind, "scenario": scenario.pk})
        # Run in this request's context even when an outer transaction commits later, so the
        # message carries the submitting request's id.
        transaction.on_commit(partial(contextvars.copy_context().run, _enqueue_job, job.pk,
                                      job.celery_task_id))
    logger.info("job %s (%s) submitted", job.pk, kind, extra={"job": job.pk})
    if not transaction.get_connection().in_atomic_block:  # the publish has run: check it
        _raise_if_not_queued(job)
    return job


def _raise_if_not_queued(job: SimulationJob) -> None:
    job.refresh_from_db(fields=["state", "message", "error", "finished_at"])
    if job.state == JobState.FAILED:
        raise BrokerUnavailable(
            f"the job queue became unreachable while job {job.pk} was being queued; the job "
            "is recorded as failed and will not run; submit it again in a minute",
            details={"job": job.pk, "state": job.state, "retry_after_s": 30})


def _jobs_cancel_for_delete(topology: Topology) -> None:
    active = list(SimulationJob.objects.select_for_update().filter(
        topology=topology, state__in=[JobState.QUEUED, JobState.RUNNING]))
    task_ids = []
    for job in active:
        job.cancel_requested = True
        fields = job.transition(JobState.CANCELLED, message="cancelled: topology deleted")
        job.save(update_fields=[*fields, "cancel_requested"])
        task_ids += [job.celery_task_id, *job.chunks.values_list("celery_task_id", flat=True)]
    if active:
        logger.info("topology %s deleted: cancelled jobs %s", topology.pk, [j.pk for j in active])
        transaction.on_commit(partial(_revoke, [t for t in task_ids if t]))


def job_cancel(*, job: SimulationJob, user: AbstractBaseUser) -> SimulationJob:
    """Cancel a job: a queued one at once, a running one at its next progress point.

    Raises
    ------
    IllegalTransition
        The job already finished.
    """
    with transaction.atomic():
        locked = _lock_job(job.pk)
        if locked.state == JobState.QUEUED:
            locked.cancel_requested = True
            fields = locked.transition(JobState.CANCELLED, message="cancelled before it started")
            locked.save(update_fields=[*fields, "cancel_requested"])
        elif locked.state == JobState.RUNNING:
            if not locked.cancel_requested:
                locked.cancel_requested = True
                locked.message = "cancelling..."
                locked.save(update_fields=["cancel_requested", "message"])
            if locked.chunks_total:
                _sweep_settle_locked(locked)
        else:
            raise IllegalTransition(locked.state, JobState.CANCELLED)
        task_ids = [locked.celery_task_id, *SweepChunk.objects.filter(
            job=locked, state=JobState.CANCELLED).values_list("celery_task_id", flat=True)]
        transaction.on_commit(partial(_revoke, [t for t in task_ids if t]))
    _copy_fields(locked, job)
    return job

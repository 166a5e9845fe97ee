"""Submitting and cancelling simulation jobs (simulate, sweep, compare).

``job_submit_*`` create a queued row and publish a Celery message after commit (``queue``); the
runner takes it from there. Contract (docs/RELIABILITY.md): a job is accepted only when the
broker answers, and a publish that fails after the commit marks the row failed.

The scenario page's two actions are one call each: :func:`scenario_submit` saves a scenario and
runs it (one transaction; the scenario is validated once, when it is saved), and
:func:`scenario_run` runs a saved one without changing it (a viewer's run).
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
from designer.services.queue import copy_fields, enqueue_job, lock_job, revoke, new_task_id
from designer.services.scenarios import scenario_create, scenario_update, scenario_validate
from designer.services.sweeps import sweep_settle_locked

__all__ = ["NIC_POLICIES", "MAX_SWEEP_CHUNKS", "RUN_ACTIONS", "job_queue", "job_submit_simulate",
           "job_submit_sweep", "job_submit_compare", "job_cancel", "jobs_cancel_for_delete",
           "scenario_submit", "scenario_run"]

logger = logging.getLogger(__name__)

NIC_POLICIES = ("affinity", "own_nic", "pxn", "any", "static")
MAX_SWEEP_CHUNKS = 256


RUN_ACTIONS = ("simulate", "sweep", "compare")


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
    return _job_submit(kind=JobKind.SWEEP, scenario=scenario, user=user,
                       parameters=_sweep_parameters(over, chunks, degrade), failures=failures)


def job_submit_compare(*, scenario: Scenario, user: AbstractBaseUser,
                       policies: Iterable[str] = ("affinity", "pxn", "any"),
                       failures: list[dict] | None = None) -> SimulationJob:
    """Queue a comparison of the scenario under several NIC policies."""
    return _job_submit(kind=JobKind.COMPARE, scenario=scenario, user=user,
                       parameters=_compare_parameters(policies), failures=failures)


def scenario_submit(*, user: AbstractBaseUser, topology: Topology, scenario: Scenario | None,
                    fields: dict, action: str, over: list[str] | None = None,
                    policies: list[str] | None = None) -> tuple[Scenario, SimulationJob | None]:
    """Save a scenario (create it when ``scenario`` is None) and run it as ``action`` asks.

    ``fields``: name, description, workload, routing, failures, mode. ``action``: ``save`` (or
    anything but a run action: no job), ``simulate``, ``sweep`` (over the failure classes
    ``over``) or ``compare`` (the NIC ``policies``). The save and the job are one transaction: a
    refused job (e.g. no sweep class ticked) leaves no half-done save. The scenario is validated
    once, when it is saved.
    """
    with transaction.atomic():
        if scenario is None:
            scenario = scenario_create(topology=topology, user=user, **fields)
        else:
            scenario = scenario_update(scenario=scenario, user=user, **fields)
        job = _run_action(action, scenario=scenario, user=user, over=over, policies=policies,
                          validated=True)
    return scenario, job


def scenario_run(*, user: AbstractBaseUser, scenario: Scenario, action: str,
                 over: list[str] | None = None, policies: list[str] | None = None,
                 failures: list[dict] | None = None) -> SimulationJob:
    """Run a saved scenario without changing it (a viewer's run: they may not save it).

    ``failures``, when given, replace the scenario's for this job only (a what-if); the job is
    owned by ``user`` and the scenario stays as saved.
    """
    job = _run_action(action, scenario=scenario, user=user, over=over, policies=policies,
                      failures=failures)
    if job is None:
        raise ValidationError({"action": "choose simulate, sweep or compare"})
    return job


def _run_action(action: str, *, scenario: Scenario, user, over: list[str] | None,
                policies: list[str] | None, failures: list[dict] | None = None,
                validated: bool = False) -> SimulationJob | None:
    """The job of a page's run button (None for any other action)."""
    if action not in RUN_ACTIONS:
        return None
    parameters = {}
    if action == "sweep":
        if not over:
            raise ValidationError({"over": "tick at least one failure class to sweep over"})
        parameters = _sweep_parameters(over, None, None)
    elif action == "compare":
        if len(policies or []) < 2:
            raise ValidationError({"policies": "tick at least two policies to compare"})
        parameters = _compare_parameters(policies)
    return _job_submit(kind=JobKind(action), scenario=scenario, user=user, parameters=parameters,
                       failures=failures, validated=validated)


def _sweep_parameters(over, chunks: int | None, degrade: float | None) -> dict:
    if degrade is not None and not (isinstance(degrade, (int, float)) and 0 < degrade < 1):
        raise ValidationError({"degrade": "must be a factor between 0 and 1"})
    if not over or not all(isinstance(o, str) and o for o in over):
        raise ValidationError({"over": "list at least one failure class, e.g. [\"nic\"]"})
    chunks = settings.FABRICSCOPE_SWEEP_CHUNKS if chunks is None else chunks
    if not isinstance(chunks, int) or not 1 <= chunks <= MAX_SWEEP_CHUNKS:
        raise ValidationError({"chunks": f"must be between 1 and {MAX_SWEEP_CHUNKS}"})
    return {"over": list(over), "chunks": chunks, "degrade": degrade}


def _compare_parameters(policies: Iterable[str]) -> dict:
    policies = list(policies)
    bad = [p for p in policies if p not in NIC_POLICIES]
    if not policies or bad:
        raise ValidationError({"policies": f"choose among {', '.join(NIC_POLICIES)}"})
    return {"policies": policies}


def _job_submit(*, kind: str, scenario: Scenario, user, parameters: dict,
                failures: list[dict] | None = None, validated: bool = False) -> SimulationJob:
    """Create and queue a job. Contract (docs/RELIABILITY.md): a job is accepted only when the
    broker answers; a publish that still fails after the commit marks the row failed and raises
    :class:`BrokerUnavailable` (when this is the outermost transaction), never a silent loss.

    ``validated``: the scenario was saved (so validated) in this transaction and runs with its own
    failures; it is not validated a second time."""
    if failures is not None:   # a what-if: this job's failures, the scenario's stay as saved
        failures = list(failures)
        parameters = {**parameters, "failures_override": True}
    if not validated or failures is not None:
        scenario_validate(scenario, failures=failures)
    inputs = {"workload": scenario.workload, "routing": scenario.routing,
              "failures": scenario.failures if failures is None else failures,
              "mode": scenario.mode, "latency": scenario.latency}
    return job_queue(kind=kind, topology=scenario.topology, revision=scenario.revision,
                     scenario=scenario, user=user, inputs=inputs, parameters=parameters,
                     summary=f"{kind} job {{job}} of scenario {scenario.name!r}",
                     details={"scenario": scenario.pk})


def job_queue(*, kind: str, topology: Topology, revision, scenario: Scenario | None,
              user: AbstractBaseUser, inputs: dict, parameters: dict, summary: str,
              details: dict) -> SimulationJob:
    """Write a queued job row and publish its message after the commit: the one way every job
    kind enters the queue (simulate, sweep, compare, diagnose, explore).

    Contract (docs/RELIABILITY.md): a job is accepted only when the broker answers; a publish
    that still fails after the commit marks the row failed and raises
    :class:`BrokerUnavailable` (when this is the outermost transaction), never a silent loss.
    The caller has checked the input and the user's right to run jobs on ``topology``.

    Parameters
    ----------
    kind : str
        A :class:`designer.choices.JobKind`.
    summary : str
        The audit line after the job number (``"simulate job 12 of scenario 'a'"``), with
        ``{job}`` standing for the number.
    details : dict
        Extra audit details (``job`` and ``kind`` are added).

    Raises
    ------
    BrokerUnavailable
        The queue did not answer (503 before anything is written, or the job recorded failed).
    TooManyJobs
        The user has the maximum of queued + running jobs (nothing is written).
    """
    if settings.FABRICSCOPE_BROKER_PRECHECK:
        ops_broker.ensure_available()  # 503 before anything is written
    with transaction.atomic():
        ops_limits.check_active_jobs(user=user)
        job = SimulationJob.objects.create(
            kind=kind, topology=topology, revision=revision, scenario=scenario,
            submitted_by=user, inputs=inputs, parameters=parameters,
            message="queued", celery_task_id=new_task_id())
        audit_record(topology=topology, actor=user, action="job.submit",
                     summary=summary.replace("{job}", str(job.pk), 1),
                     details={"job": job.pk, "kind": kind, **details})
        # Run in this request's context even when an outer transaction commits later, so the
        # message carries the submitting request's id.
        transaction.on_commit(partial(contextvars.copy_context().run, enqueue_job, job.pk,
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


def jobs_cancel_for_delete(topology: Topology) -> None:
    """Cancel the topology's queued and running jobs (it is being deleted); call inside the
    deleting transaction, which holds their rows. Their messages are revoked after the commit."""
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
        transaction.on_commit(partial(revoke, [t for t in task_ids if t]))


def job_cancel(*, job: SimulationJob, user: AbstractBaseUser) -> SimulationJob:
    """Cancel a job: a queued one at once, a running one at its next progress point.

    Raises
    ------
    IllegalTransition
        The job already finished.
    """
    with transaction.atomic():
        locked = lock_job(job.pk)
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
                sweep_settle_locked(locked)
        else:
            raise IllegalTransition(locked.state, JobState.CANCELLED)
        task_ids = [locked.celery_task_id, *SweepChunk.objects.filter(
            job=locked, state=JobState.CANCELLED).values_list("celery_task_id", flat=True)]
        transaction.on_commit(partial(revoke, [t for t in task_ids if t]))
    copy_fields(locked, job)
    return job

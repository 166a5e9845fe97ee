"""Every write in Fabricscope: topologies, revisions, scenarios and the simulation-job lifecycle.

Services are keyword-only, atomic, and the only place business rules live; views, the API and
Celery tasks call them. The engine is reached only through ``designer.bridge``.

Jobs (DESIGN.md §3)
-------------------
``job_submit_*`` create a queued row and publish a Celery message after commit. The runner
(:func:`job_run`, called by a task with the job id) locks the row, returns unless it is still
queued (so a redelivered message is harmless), marks it running, calls the engine with a progress
callback, and always ends in a terminal state with a message. A side thread writes a heartbeat;
:func:`job_reap_stale` (celery beat) re-queues or fails jobs whose heartbeat stopped, so a lost
worker never leaves a job running forever. Each run increments ``attempts``, which doubles as the
run's token: a superseded runner's writes match no row and are dropped.

Sweeps run in two steps: the runner lists the candidate failures and splits them into
``SweepChunk`` rows, each published as its own task (so more workers finish sooner); every chunk
that ends calls :func:`_sweep_settle` under the job's row lock, and the one that finds all chunks
done merges their rankings - a chord whose counter is the database, not a result backend.
"""
from __future__ import annotations

import contextvars
import logging
import threading
import time
import uuid
from datetime import timedelta
from functools import partial
from typing import Iterable

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Case, Count, F, IntegerField, Q, Sum, When
from django.utils import timezone

from designer import bridge
from designer.choices import JobKind, JobState
from designer.exceptions import (
    EngineValidationError, IllegalTransition, JobCancelled, RevisionConflict)
from designer.models import (
    Scenario, SimulationJob, SimulationResult, SweepChunk, Topology, TopologyRevision)
from designer.ops import broker as ops_broker
from designer.ops import limits as ops_limits
from designer.ops.errors import BrokerUnavailable
from designer.ops.logs import current_request_id

__all__ = [
    "topology_create", "topology_build", "topology_update", "topology_delete", "revision_save",
    "scenario_create", "scenario_update", "job_submit_simulate", "job_submit_sweep",
    "job_submit_compare", "job_cancel", "job_run", "sweep_chunk_run", "job_reap_stale",
]

logger = logging.getLogger(__name__)

NIC_POLICIES = ("affinity", "pxn", "any", "static")
MAX_SWEEP_CHUNKS = 256


# --- Topologies and revisions ----------------------------------------------------------------------

def topology_create(*, owner: AbstractBaseUser, name: str, description: str = "",
                    document: dict | None = None, message: str = "") -> Topology:
    """Create a topology, with a first revision when ``document`` is given.

    Raises
    ------
    ValidationError
        Bad name (or one the owner already uses); EngineValidationError for a bad document.
    """
    normalized = bridge.normalize_document(document) if document is not None else None
    with transaction.atomic():
        topology = Topology(owner=owner, name=name, description=description)
        topology.full_clean()
        topology.save()
        if normalized is not None:
            _revision_append(topology, owner, normalized, message or "first revision")
    return topology


def topology_build(*, owner: AbstractBaseUser, name: str, template: str, hosts: int,
                   fabric: str = "rail-optimized", options: dict | None = None,
                   description: str = "") -> Topology:
    """Generate a cluster (``hosts`` × ``template`` wired by ``fabric``) as a new topology."""
    if not isinstance(hosts, int) or hosts < 1:
        raise ValidationError({"hosts": "a positive number of hosts is required"})
    document = bridge.build_cluster_document(name=name, template=template, hosts=hosts,
                                             fabric=fabric, options=options)
    message = f"generated: {hosts} x {template}, {fabric} fabric"
    return topology_create(owner=owner, name=name, description=description, document=document,
                           message=message)


def topology_update(*, topology: Topology, name: str | None = None,
                    description: str | None = None) -> Topology:
    """Rename or re-describe a topology (its content changes only through revisions)."""
    fields = []
    if name is not None:
        topology.name, fields = name, fields + ["name"]
    if description is not None:
        topology.description, fields = description, fields + ["description"]
    if fields:
        topology.full_clean()
        topology.save(update_fields=fields + ["updated_at"])
    return topology


def topology_delete(*, topology: Topology, actor: AbstractBaseUser | None = None) -> None:
    """Delete a topology with its revisions, scenarios, jobs and results.

    Its queued and running jobs are cancelled first (rows locked, workers told to drop their
    messages), so no worker goes on computing for a topology that no longer exists.
    """
    with transaction.atomic():
        audit_record(topology=topology, actor=actor, action="topology.delete",  # issue 9
                     summary=f"deleted {topology.name!r}")
        _jobs_cancel_for_delete(topology)
        # Scenarios and jobs PROTECT their revision: remove them first, then the rest cascades.
        SimulationJob.objects.filter(topology=topology).delete()
        Scenario.objects.filter(topology=topology).delete()
        Topology.objects.filter(pk=topology.pk).update(current_revision=None)
        topology.delete()


def revision_save(*, topology: Topology, user: AbstractBaseUser, document: dict,
                  base_revision: TopologyRevision | int | None, message: str = ""
                  ) -> TopologyRevision:
    """Append a revision edited from ``base_revision`` (a row, its number, or None for none).

    The topology row is locked (``select_for_update``) and its head number compared with the
    base: a stale base raises :class:`RevisionConflict` carrying the current number. The unique
    (topology, number) constraint backs this up, so of N concurrent saves on one base exactly one
    wins.

    Raises
    ------
    RevisionConflict
        ``base_revision`` is not the current revision.
    EngineValidationError
        The document is invalid (``details`` locate each problem).
    """
    base_number = _revision_number(base_revision)
    normalized = bridge.normalize_document(document)
    try:
        with transaction.atomic():
            locked = Topology.objects.select_for_update().get(pk=topology.pk)
            if locked.revision_number != base_number:
                raise RevisionConflict(current_number=locked.revision_number,
                                       base_number=base_number)
            revision = _revision_append(locked, user, normalized, message)
    except IntegrityError:
        current = Topology.objects.values_list("revision_number", flat=True).get(pk=topology.pk)
        if current == base_number:
            raise
        raise RevisionConflict(current_number=current, base_number=base_number) from None
    _copy_head(revision.topology, topology)
    return revision


def _revision_number(base: TopologyRevision | int | None) -> int:
    if base is None:
        return 0
    if isinstance(base, TopologyRevision):
        return base.number
    if isinstance(base, int) and base >= 0:
        return base
    raise ValidationError({"base_revision": "must be a revision number (0 for none)"})


def _revision_append(topology: Topology, user, document: dict, message: str) -> TopologyRevision:
    """Write revision head + 1 and move the head; the caller holds the topology's row lock."""
    revision = TopologyRevision.objects.create(
        topology=topology, number=topology.revision_number + 1, document=document,
        checksum=bridge.document_checksum(document), author=user, message=message[:500])
    topology.current_revision = revision
    topology.revision_number = revision.number
    for field, value in bridge.document_figures(document).items():
        setattr(topology, field, value)
    topology.save(update_fields=["current_revision", "revision_number", "host_count",
                                 "gpu_count", "node_count", "link_count", "updated_at"])
    audit_record(topology=topology, actor=user, action="revision.save",  # issue 9: audit trail
                 summary=f"r{revision.number}: {message or '(no message)'}"[:500],
                 details={"revision": revision.number})
    return revision


def _copy_head(source: Topology, target: Topology) -> None:
    """Refresh the caller's instance so it does not keep a stale head number."""
    for field in ("current_revision", "revision_number", "host_count", "gpu_count",
                  "node_count", "link_count", "updated_at"):
        setattr(target, field, getattr(source, field))


# --- Scenarios -------------------------------------------------------------------------------------

_SCENARIO_FIELDS = ("name", "description", "workload", "routing", "failures", "mode", "revision")


def scenario_create(*, topology: Topology, user: AbstractBaseUser, name: str,
                    workload: list, routing: dict | None = None, failures: list | None = None,
                    mode: str = "steady", revision: TopologyRevision | None = None,
                    description: str = "") -> Scenario:
    """Create a scenario on ``revision`` (default: the topology's current one), engine-validated."""
    revision = revision or topology.current_revision
    if revision is None:
        raise ValidationError({"revision": "the topology has no revision yet"})
    scenario = Scenario(topology=topology, revision=revision, name=name, description=description,
                        workload=workload, routing=routing or {}, failures=failures or [],
                        mode=mode, created_by=user)
    _scenario_check(scenario)
    scenario.save()
    return scenario


def scenario_update(*, scenario: Scenario, user: AbstractBaseUser, **changes) -> Scenario:
    """Change any of name, description, workload, routing, failures, mode, revision."""
    unknown = set(changes) - set(_SCENARIO_FIELDS)
    if unknown:
        raise ValidationError({field: "cannot be changed" for field in sorted(unknown)})
    for field, value in changes.items():
        setattr(scenario, field, value)
    _scenario_check(scenario)
    scenario.save(update_fields=[*changes, "updated_at"])
    return scenario


def _scenario_check(scenario: Scenario) -> None:
    scenario.full_clean()
    ops_limits.validate_scenario(_scenario_dict(scenario))  # engine checks + flow-count limit


def _scenario_dict(scenario: Scenario) -> dict:
    return bridge.scenario_document(revision=scenario.revision, workload=scenario.workload,
                                    routing=scenario.routing, failures=scenario.failures,
                                    mode=scenario.mode)


# --- Job submission and cancellation ---------------------------------------------------------------

def job_submit_simulate(*, scenario: Scenario, user: AbstractBaseUser) -> SimulationJob:
    """Queue a simulation of ``scenario``; the result is a ``fabricscope.result/1``."""
    return _job_submit(kind=JobKind.SIMULATE, scenario=scenario, user=user, parameters={})


def job_submit_sweep(*, scenario: Scenario, user: AbstractBaseUser, over: list[str],
                     chunks: int | None = None, degrade: float | None = None) -> SimulationJob:
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
                       parameters={"over": list(over), "chunks": chunks, "degrade": degrade})


def job_submit_compare(*, scenario: Scenario, user: AbstractBaseUser,
                       policies: Iterable[str] = ("affinity", "pxn", "any")) -> SimulationJob:
    """Queue a comparison of the scenario under several NIC policies."""
    policies = list(policies)
    bad = [p for p in policies if p not in NIC_POLICIES]
    if not policies or bad:
        raise ValidationError({"policies": f"choose among {', '.join(NIC_POLICIES)}"})
    return _job_submit(kind=JobKind.COMPARE, scenario=scenario, user=user,
                       parameters={"policies": policies})


def _job_submit(*, kind: str, scenario: Scenario, user, parameters: dict) -> SimulationJob:
    """Create and queue a job. Contract (docs/RELIABILITY.md): a job is accepted only when the
    broker answers; a publish that still fails after the commit marks the row failed and raises
    :class:`BrokerUnavailable` (when this is the outermost transaction), never a silent loss."""
    ops_limits.validate_scenario(_scenario_dict(scenario))
    if settings.FABRICSCOPE_BROKER_PRECHECK:
        ops_broker.ensure_available()  # 503 before anything is written
    inputs = {"workload": scenario.workload, "routing": scenario.routing,
              "failures": scenario.failures, "mode": scenario.mode}
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


# --- The runner ------------------------------------------------------------------------------------

def job_run(*, job_id: int, hostname: str = "", task_id: str = "") -> None:
    """Run a queued job to a terminal state (called by ``tasks.job_run``; redelivery-safe)."""
    job = _job_start(job_id, hostname, task_id)
    if job is None:
        return
    run = _Run(SimulationJob, job.pk, job.attempts, job_id=job.pk)
    with _Heartbeat(run):
        try:
            _test_delay(run)
            if job.kind == JobKind.SWEEP:
                _sweep_prepare(job, run)
                return
            runner = bridge.run_compare if job.kind == JobKind.COMPARE else bridge.run_simulation
            data = runner(job, run.progress)
        except JobCancelled as exc:
            _job_finish(job.pk, job.attempts, JobState.CANCELLED, message=str(exc))
        except Exception as exc:  # any error ends the job as failed, with its text
            logger.warning("job %s failed", job.pk, exc_info=not isinstance(exc, ValidationError))
            _job_finish(job.pk, job.attempts, JobState.FAILED, error=_error_text(exc))
        else:
            _job_finish(job.pk, job.attempts, JobState.SUCCEEDED, data=data,
                        message=_done_message(job, data))


def _job_start(job_id: int, hostname: str, task_id: str) -> SimulationJob | None:
    with transaction.atomic():
        job = SimulationJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.state != JobState.QUEUED:
            logger.info("job %s is %s: nothing to run (redelivered or cancelled)", job_id,
                        job.state if job else "gone")
            return None
        fields = job.transition(JobState.RUNNING, message="running")
        job.attempts += 1
        job.progress, job.error = 0, ""
        job.worker_hostname = hostname[:255]
        job.celery_task_id = task_id or job.celery_task_id
        job.save(update_fields=[*fields, "attempts", "progress", "error", "worker_hostname",
                                "celery_task_id"])
    return job


def _job_finish(job_id: int, attempt: int, state: str, *, message: str = "", error: str = "",
                data: dict | None = None) -> bool:
    """End run ``attempt`` of a job; False (nothing written) when another run superseded it."""
    with transaction.atomic():
        job = SimulationJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.state != JobState.RUNNING or job.attempts != attempt:
            # Superseded by another run, cancelled, or deleted with its topology.
            logger.warning("job %s: run %s was superseded; its outcome is dropped", job_id, attempt)
            return False
        if data is not None:
            SimulationResult.objects.update_or_create(job=job, defaults={"data": data})
        if state == JobState.FAILED and not message:
            message = "failed: " + error.splitlines()[0] if error else "failed"
        fields = job.transition(state, message=message or state)
        job.error = error
        if state == JobState.SUCCEEDED:
            job.progress = 100
        job.save(update_fields=[*fields, "error", "progress"])
    return True


def _done_message(job: SimulationJob, data: dict) -> str:
    elapsed = (timezone.now() - job.started_at).total_seconds() if job.started_at else 0.0
    if job.kind == JobKind.SWEEP:
        return f"{len(data.get('ranking') or [])} failures ranked in {elapsed:.1f} s"
    return f"done in {elapsed:.1f} s"


def _error_text(exc: BaseException) -> str:
    if limit_text := ops_limits.describe_error(exc):  # time or memory limit: say which
        return limit_text
    if isinstance(exc, EngineValidationError):
        lines = [f"{d['path']}: {d['message']}" if d.get("path") else d["message"]
                 for d in exc.details]
        return "\n".join([exc.engine_message, *lines])
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    return f"{type(exc).__name__}: {exc}"


class _Run:
    """Progress, heartbeat and cancellation for one run of a job or a sweep chunk.

    ``progress`` is the engine's callback: it raises :class:`JobCancelled` once a stop was seen
    and writes to the database at most every FABRICSCOPE_JOB_PROGRESS_INTERVAL seconds. Every
    write is conditional on the row still being this run's (state running, same attempt, no
    cancel request); when it matches nothing, the run stops.
    """

    def __init__(self, model, pk: int, attempt: int, *, job_id: int):
        self.model, self.pk, self.attempt, self.job_id = model, pk, attempt, job_id
        self.stopped = threading.Event()
        self.reason = ""
        self._last_save = 0.0
        self._interval = settings.FABRICSCOPE_JOB_PROGRESS_INTERVAL

    def progress(self, fraction: float, message: str = "") -> None:
        if self.stopped.is_set():
            raise JobCancelled(self.reason)
        now = time.monotonic()
        if now - self._last_save < self._interval:
            return
        self._last_save = now
        percent = max(0, min(99, int(float(fraction) * 100)))
        if not self._write(progress=percent, message=str(message)[:500]):
            raise JobCancelled(self.reason)

    def beat(self) -> bool:
        """Heartbeat; False once the run must stop."""
        return self._write()

    def _mine(self):
        rows = self.model.objects.filter(pk=self.pk, state=JobState.RUNNING, attempts=self.attempt)
        if self.model is SweepChunk:
            return rows.filter(job__state=JobState.RUNNING, job__cancel_requested=False)
        return rows.filter(cancel_requested=False)

    def _write(self, **fields) -> bool:
        now = timezone.now()
        if self._mine().update(heartbeat_at=now, **fields):
            if self.model is SweepChunk:
                _sweep_progress(self.job_id, now)
            return True
        self.stop()
        return False

    def stop(self) -> None:
        state = self.model.objects.filter(pk=self.pk).values_list("state", flat=True).first()
        self.reason = ("cancelled" if state == JobState.RUNNING
                       else "stopped: this run was superseded")
        self.stopped.set()


class _Heartbeat:
    """Side thread writing the run's heartbeat even while the engine computes without progress."""

    def __init__(self, run: _Run):
        self.run = run
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"heartbeat-{run.pk}", daemon=True)

    def __enter__(self) -> "_Heartbeat":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        interval = settings.FABRICSCOPE_JOB_HEARTBEAT_INTERVAL
        try:
            while not self.done.wait(interval) and not self.run.stopped.is_set():
                try:
                    self.run.beat()
                except Exception:  # a locked database must not kill the heartbeat
                    logger.warning("heartbeat of %s failed", self.run.pk, exc_info=True)
        finally:
            connection.close()


def _test_delay(run: _Run) -> None:
    """FABRICSCOPE_TEST_JOB_DELAY (tests only): wait while reporting progress and honouring cancel."""
    delay = settings.FABRICSCOPE_TEST_JOB_DELAY
    start = time.monotonic()
    while (elapsed := time.monotonic() - start) < delay:
        run.progress(0.01 * elapsed / delay, "test delay before the engine starts")
        time.sleep(0.05)


# --- Sweeps: chunks as parallel tasks, merged by the last one to finish ----------------------------

def _sweep_prepare(job: SimulationJob, run: _Run) -> None:
    failures = bridge.sweep_candidates(job)
    run.progress(0.0, f"{len(failures)} failures to try")
    n = min(len(failures), int(job.parameters.get("chunks") or settings.FABRICSCOPE_SWEEP_CHUNKS))
    if n == 0:  # nothing to try: the engine's unchunked sweep says so (the job fails with it)
        data = bridge.run_sweep_chunk(job, None, run.progress)
        _job_finish(job.pk, job.attempts, JobState.SUCCEEDED, data=data,
                    message=_done_message(job, data))
        return
    # Same contiguous blocks as the engine's chunk=(i, n); stored so pages can show each chunk.
    parts = [failures[i * len(failures) // n:(i + 1) * len(failures) // n] for i in range(n)]
    with transaction.atomic():
        locked = _lock_job(job.pk)
        if locked.state != JobState.RUNNING or locked.attempts != job.attempts:
            return
        if locked.cancel_requested:
            fields = locked.transition(JobState.CANCELLED, message="cancelled")
            locked.save(update_fields=fields)
            return
        SweepChunk.objects.filter(job=locked).delete()  # left by an earlier, lost attempt
        SweepChunk.objects.bulk_create(
            SweepChunk(job=locked, index=i, failures=part, celery_task_id=_task_id())
            for i, part in enumerate(parts))
        locked.chunks_total = n
        locked.message = f"{len(failures)} failures in {n} chunks"
        locked.save(update_fields=["chunks_total", "message"])
        chunks = list(SweepChunk.objects.filter(job=locked).values_list("pk", "celery_task_id"))
        transaction.on_commit(partial(_enqueue_chunks, chunks))


def sweep_chunk_run(*, chunk_id: int, hostname: str = "", task_id: str = "") -> None:
    """Run one queued sweep chunk (called by ``tasks.sweep_chunk_run``; redelivery-safe)."""
    chunk = _chunk_start(chunk_id, hostname, task_id)
    if chunk is None:
        return
    run = _Run(SweepChunk, chunk.pk, chunk.attempts, job_id=chunk.job_id)
    with _Heartbeat(run):
        try:
            _test_delay(run)
            data = bridge.run_sweep_chunk(chunk.job, (chunk.index, chunk.job.chunks_total),
                                          run.progress)
        except JobCancelled:
            _chunk_finish(chunk, JobState.CANCELLED)
        except Exception as exc:
            logger.warning("chunk %s failed", chunk.pk, exc_info=not isinstance(exc, ValidationError))
            _chunk_finish(chunk, JobState.FAILED, error=_error_text(exc))
        else:
            _chunk_finish(chunk, JobState.SUCCEEDED, data=data)


def _chunk_start(chunk_id: int, hostname: str, task_id: str) -> SweepChunk | None:
    with transaction.atomic():
        chunk = (SweepChunk.objects.select_for_update().select_related("job__revision")
                 .filter(pk=chunk_id).first())
        if chunk is None or chunk.state != JobState.QUEUED:
            return None
        if chunk.job.state != JobState.RUNNING or chunk.job.cancel_requested:
            chunk.save(update_fields=chunk.transition(JobState.CANCELLED))
            transaction.on_commit(partial(_sweep_settle, chunk.job_id))
            return None
        fields = chunk.transition(JobState.RUNNING)
        chunk.attempts += 1
        chunk.worker_hostname = hostname[:255]
        chunk.celery_task_id = task_id or chunk.celery_task_id
        chunk.save(update_fields=[*fields, "attempts", "worker_hostname", "celery_task_id"])
    return chunk


def _chunk_finish(chunk: SweepChunk, state: str, *, error: str = "", data: dict | None = None
                  ) -> None:
    with transaction.atomic():
        locked = SweepChunk.objects.select_for_update().filter(pk=chunk.pk).first()
        if locked is None or locked.state != JobState.RUNNING or locked.attempts != chunk.attempts:
            return  # superseded, or deleted with its topology
        fields = locked.transition(state)
        locked.error, locked.result = error, data
        locked.progress = 100 if state == JobState.SUCCEEDED else locked.progress
        locked.save(update_fields=[*fields, "error", "result", "progress"])
    _sweep_settle(chunk.job_id)


def _sweep_settle(job_id: int) -> None:
    with transaction.atomic():
        job = SimulationJob.objects.select_for_update().filter(pk=job_id).first()
        if job is not None:  # None: deleted with its topology
            _sweep_settle_locked(job)


def _sweep_settle_locked(job: SimulationJob) -> None:
    """Decide a sweep's fate from its chunks; the caller holds the job's row lock."""
    if job.state != JobState.RUNNING or not job.chunks_total:
        return
    counts = dict(job.chunks.values_list("state").annotate(n=Count("pk")))
    failed = job.chunks.filter(state=JobState.FAILED).order_by("index").first()
    if failed is not None:
        _chunks_cancel_queued(job)
        job.error = f"chunk {failed.index}: {failed.error}"
        fields = job.transition(JobState.FAILED,
                                message="failed: " + failed.error.splitlines()[0])
        job.save(update_fields=[*fields, "error"])
    elif job.cancel_requested:
        _chunks_cancel_queued(job)
        if not counts.get(JobState.RUNNING):
            job.save(update_fields=job.transition(JobState.CANCELLED, message="cancelled"))
    elif counts.get(JobState.SUCCEEDED, 0) == job.chunks_total:
        _sweep_merge(job)


def _sweep_merge(job: SimulationJob) -> None:
    parts = list(job.chunks.order_by("index").values_list("result", flat=True))
    try:
        data = bridge.merge_sweep_parts(parts)
    except Exception as exc:
        job.error = _error_text(exc)
        job.save(update_fields=[*job.transition(JobState.FAILED, message="failed: merge"),
                                "error"])
        return
    SimulationResult.objects.update_or_create(job=job, defaults={"data": data})
    job.chunks.update(result=None)  # merged into the job's result; do not keep two copies
    fields = job.transition(JobState.SUCCEEDED, message=_done_message(job, data))
    job.progress = 100
    job.save(update_fields=[*fields, "progress"])


def _chunks_cancel_queued(job: SimulationJob) -> None:
    job.chunks.filter(state=JobState.QUEUED).update(state=JobState.CANCELLED,
                                                    finished_at=timezone.now())


def _sweep_progress(job_id: int, now) -> None:
    """Job progress = mean chunk progress (finished chunks count 100); runs after chunk writes."""
    figures = SweepChunk.objects.filter(job_id=job_id).aggregate(
        total=Count("pk"),
        done=Count("pk", filter=Q(state=JobState.SUCCEEDED)),
        points=Sum(Case(When(state=JobState.SUCCEEDED, then=100), default=F("progress"),
                        output_field=IntegerField())))
    total = figures["total"] or 1
    SimulationJob.objects.filter(pk=job_id, state=JobState.RUNNING).update(
        progress=min(99, (figures["points"] or 0) // total), heartbeat_at=now,
        message=f"{figures['done']} of {figures['total']} chunks done")


# --- Worker loss -----------------------------------------------------------------------------------

def job_reap_stale(*, now=None) -> dict[str, int]:
    """Re-queue (or fail) jobs and chunks whose worker stopped writing heartbeats.

    A run is lost when its heartbeat is older than FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT seconds. It
    is re-queued while it has run fewer than FABRICSCOPE_JOB_MAX_ATTEMPTS times, else it fails
    with "worker lost". Called by celery beat every FABRICSCOPE_REAPER_INTERVAL seconds;
    safe to run concurrently (each row is re-checked under its lock).
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT)
    outcome = {"requeued": 0, "failed": 0, "cancelled": 0}
    # A sweep past its prepare step is alive through its chunks, which are checked one by one.
    for pk in SimulationJob.objects.filter(state=JobState.RUNNING, heartbeat_at__lt=cutoff,
                                           chunks_total=0).values_list("pk", flat=True):
        outcome[_job_reap(pk, cutoff)] += 1
    for pk in SweepChunk.objects.filter(state=JobState.RUNNING,
                                        heartbeat_at__lt=cutoff).values_list("pk", flat=True):
        outcome[_chunk_reap(pk, cutoff)] += 1
    outcome.pop("", None)
    if any(outcome.values()):
        logger.warning("reaper: %s", outcome)
    return outcome


def _job_reap(pk: int, cutoff) -> str:
    with transaction.atomic():
        job = _lock_job(pk)
        if job.state != JobState.RUNNING or job.chunks_total or job.heartbeat_at >= cutoff:
            return ""
        outcome, fields = _lost_run_outcome(job)
        if outcome == "requeued":
            job.celery_task_id = _task_id()
            job.progress = 0
            fields += ["celery_task_id", "progress"]
            transaction.on_commit(partial(_enqueue_job, job.pk, job.celery_task_id))
        job.save(update_fields=fields)
    return outcome


def _chunk_reap(pk: int, cutoff) -> str:
    with transaction.atomic():
        chunk = SweepChunk.objects.select_for_update().select_related("job").get(pk=pk)
        if chunk.state != JobState.RUNNING or chunk.heartbeat_at >= cutoff:
            return ""
        outcome, fields = _lost_run_outcome(chunk, cancel=chunk.job.cancel_requested)
        if outcome == "requeued":
            chunk.celery_task_id = _task_id()
            fields.append("celery_task_id")
            transaction.on_commit(partial(_enqueue_chunks, [(chunk.pk, chunk.celery_task_id)]))
        chunk.save(update_fields=fields)
        transaction.on_commit(partial(_sweep_settle, chunk.job_id))
    return outcome


def _lost_run_outcome(row, *, cancel: bool | None = None) -> tuple[str, list[str]]:
    """Decide what a lost run becomes; returns the outcome and the changed fields."""
    who = row.worker_hostname or "an unknown worker"
    timeout = settings.FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT
    limit = settings.FABRICSCOPE_JOB_MAX_ATTEMPTS
    cancel = row.cancel_requested if cancel is None else cancel
    is_job = isinstance(row, SimulationJob)

    def transition(state, message):
        return row.transition(state, message=message) if is_job else row.transition(state)

    if cancel:
        return "cancelled", transition(JobState.CANCELLED, f"cancelled (worker {who} lost)")
    if row.attempts < limit:
        message = f"worker {who} lost; re-queued (attempt {row.attempts + 1} of {limit})"
        return "requeued", transition(JobState.QUEUED, message)
    row.error = (f"worker lost: {who} sent no heartbeat for {timeout:g} s during attempt "
                 f"{row.attempts} of {limit}")
    return "failed", [*transition(JobState.FAILED, "failed: worker lost"), "error"]


# --- Queue plumbing --------------------------------------------------------------------------------

def _lock_job(pk: int) -> SimulationJob:
    return SimulationJob.objects.select_for_update().get(pk=pk)


def _copy_fields(source: SimulationJob, target: SimulationJob) -> None:
    if source is not target:
        target.__dict__.update({k: v for k, v in source.__dict__.items() if k != "_state"})


def _task_id() -> str:
    return str(uuid.uuid4())


def _send(task_name: str, *args, task_id: str) -> None:
    """Publish a task by name (services are imported by tasks.py, not the reverse)."""
    from designer.celery import app

    # The request id travels in the message headers: the worker logs it with every line of the
    # task (designer/ops/worker.py), and chunks published by a job's runner inherit it.
    app.send_task(task_name, args=list(args), task_id=task_id,
                  headers={"request_id": current_request_id()})


def _enqueue_job(job_id: int, task_id: str) -> None:
    try:
        _send("designer.tasks.job_run", job_id, task_id=task_id)
    except Exception as exc:
        logger.exception("could not queue job %s", job_id)
        with transaction.atomic():
            job = _lock_job(job_id)
            if job.state == JobState.QUEUED:
                job.error = f"could not reach the job queue: {exc}"
                fields = job.transition(JobState.FAILED, message="failed: job queue unreachable")
                job.save(update_fields=[*fields, "error"])


def _enqueue_chunks(chunks: list[tuple[int, str]]) -> None:
    for chunk_id, task_id in chunks:
        try:
            _send("designer.tasks.sweep_chunk_run", chunk_id, task_id=task_id)
        except Exception as exc:
            logger.exception("could not queue sweep chunk %s", chunk_id)
            with transaction.atomic():
                chunk = SweepChunk.objects.select_for_update().get(pk=chunk_id)
                if chunk.state == JobState.QUEUED:
                    chunk.error = f"could not reach the job queue: {exc}"
                    chunk.save(update_fields=[*chunk.transition(JobState.FAILED), "error"])
            _sweep_settle(SweepChunk.objects.values_list("job_id", flat=True).get(pk=chunk_id))


def _revoke(task_ids: list[str]) -> None:
    """Tell workers to drop these messages (the row's state already makes them no-ops)."""
    if not task_ids:
        return
    try:
        from designer.celery import app

        app.control.revoke(task_ids)
    except Exception:
        logger.warning("could not broadcast revoke for %s", task_ids, exc_info=True)


# --- Added by the REST API task: scenario deletion and API tokens ---------------------------------

def scenario_delete(*, scenario: Scenario) -> None:
    """Delete a scenario; its jobs and results stay (their inputs are a snapshot)."""
    scenario.delete()


def api_token_rotate(*, user: AbstractBaseUser):
    """Create the user's API token, replacing (revoking) any previous one."""
    from rest_framework.authtoken.models import Token

    with transaction.atomic():
        Token.objects.filter(user=user).delete()
        return Token.objects.create(user=user)


def api_token_revoke(*, user: AbstractBaseUser) -> bool:
    """Delete the user's API token; True when there was one."""
    from rest_framework.authtoken.models import Token

    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


__all__ += ["scenario_delete", "api_token_rotate", "api_token_revoke"]


# --- Sharing, share links, ownership, forks and the audit trail (issue 9) ---------------------------
# Callers have checked the actor's role with designer.selectors.topology_require (the one place
# the rules live); these functions enforce only invariants of the data (never share with the
# owner, one grant per grantee, links shown once, a transfer target without a clashing name).

def audit_record(*, topology: Topology | None, actor, action: str, summary: str,
                 details: dict | None = None):
    """Append an audit event (``designer.models.AuditEvent``); returns it."""
    from designer.models import AuditEvent

    return AuditEvent.objects.create(
        topology=topology, topology_name=topology.name if topology else "",
        actor=actor if getattr(actor, "is_authenticated", False) else None, action=action,
        summary=summary[:500], details=details or {})


def share_grant(*, topology: Topology, actor: AbstractBaseUser, role: str,
                user: AbstractBaseUser | None = None, group=None):
    """Give ``user`` or ``group`` (exactly one) ``role`` on ``topology``; an existing grant of
    the same grantee changes role instead. Returns the grant.

    Raises
    ------
    ValidationError
        No or two grantees, the owner as grantee, an unknown role.
    """
    from designer.choices import AuditAction, ShareRole
    from designer.models import TopologyShare

    if (user is None) == (group is None):
        raise ValidationError({"grantee": "give either a user or a team (group)"})
    if role not in ShareRole.values:
        raise ValidationError({"role": f"choose among {', '.join(ShareRole.values)}"})
    if user is not None and user.pk == topology.owner_id:
        raise ValidationError({"user": "the owner already has every right"})
    with transaction.atomic():
        share, created = TopologyShare.objects.select_for_update().get_or_create(
            topology=topology, user=user, group=group,
            defaults={"role": role, "created_by": actor})
        if not created and share.role == role:
            return share
        old = share.role
        if not created:
            share.role = role
            share.save(update_fields=["role", "updated_at"])
        action = AuditAction.SHARE_GRANT if created else AuditAction.SHARE_CHANGE
        text = (f"shared with {share.grantee} as {role}" if created
                else f"{share.grantee}: {old} -> {role}")
        audit_record(topology=topology, actor=actor, action=action, summary=text,
                     details={"share": share.pk, "role": role, **_grantee(share)})
    return share


def _grantee(share) -> dict:
    return ({"user": share.user.get_username()} if share.user_id
            else {"group": share.group.name})


def share_update(*, share, actor: AbstractBaseUser, role: str):
    """Change the role of an existing grant."""
    grantee = {"user": share.user} if share.user_id else {"group": share.group}
    return share_grant(topology=share.topology, actor=actor, role=role, **grantee)


def share_revoke(*, share, actor: AbstractBaseUser) -> None:
    """Remove a grant: the grantee loses access at once (their next request is a 404)."""
    from designer.choices import AuditAction

    with transaction.atomic():
        audit_record(topology=share.topology, actor=actor, action=AuditAction.SHARE_REVOKE,
                     summary=f"revoked {share.grantee} ({share.role})",
                     details={"share": share.pk, "role": share.role, **_grantee(share)})
        share.delete()


def share_link_create(*, topology: Topology, actor: AbstractBaseUser,
                      job: SimulationJob | None = None, expires_at=None, label: str = ""):
    """Create a read-only link to ``topology`` (or to ``job``'s result). Returns (link, token):
    the token is ``secrets.token_urlsafe(32)`` and only its sha256 is stored, so show it now."""
    import secrets

    from designer.choices import AuditAction
    from designer.models import ShareLink
    from designer.selectors import share_link_hash

    if job is not None and job.topology_id != topology.pk:
        raise ValidationError({"job": "the job belongs to another topology"})
    if expires_at is not None and expires_at <= timezone.now():
        raise ValidationError({"expires_at": "must be in the future"})
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        link = ShareLink(topology=topology, job=job, token_hash=share_link_hash(token),
                         label=label[:200], created_by=actor, expires_at=expires_at)
        link.full_clean()
        link.save()
        what = f"the result of job {job.pk}" if job is not None else "the topology"
        audit_record(topology=topology, actor=actor, action=AuditAction.LINK_CREATE,
                     summary=f"read-only link {link.pk} to {what}"
                             + (f", expires {expires_at:%Y-%m-%d %H:%M} UTC" if expires_at else ""),
                     details={"link": link.pk, "job": job.pk if job else None})
    return link, token


def share_link_revoke(*, link, actor: AbstractBaseUser):
    """Revoke a link (kept, marked revoked, so the audit trail and list still show it)."""
    from designer.choices import AuditAction

    if link.revoked_at is not None:
        return link
    link.revoked_at = timezone.now()
    with transaction.atomic():
        link.save(update_fields=["revoked_at"])
        audit_record(topology=link.topology, actor=actor, action=AuditAction.LINK_REVOKE,
                     summary=f"revoked read-only link {link.pk}", details={"link": link.pk})
    return link


def topology_transfer(*, topology: Topology, actor: AbstractBaseUser,
                      new_owner: AbstractBaseUser) -> Topology:
    """Make ``new_owner`` the owner. Their own grant (if any) is removed; the previous owner
    keeps editor access (they can be revoked like anyone else).

    Raises
    ------
    ValidationError
        ``new_owner`` already owns it, is inactive, or owns a topology with the same name.
    """
    from designer.choices import AuditAction, ShareRole
    from designer.models import TopologyShare

    if new_owner.pk == topology.owner_id:
        raise ValidationError({"user": "already the owner"})
    if not new_owner.is_active:
        raise ValidationError({"user": "that account is disabled"})
    if Topology.objects.filter(owner=new_owner, name=topology.name).exists():
        raise ValidationError({"user": f"{new_owner.get_username()} already has a topology "
                                       f"named {topology.name!r}; rename one first"})
    with transaction.atomic():
        locked = Topology.objects.select_for_update().get(pk=topology.pk)
        previous = locked.owner
        TopologyShare.objects.filter(topology=locked, user=new_owner).delete()
        locked.owner = new_owner
        locked.save(update_fields=["owner", "updated_at"])
        TopologyShare.objects.update_or_create(
            topology=locked, user=previous, defaults={"role": ShareRole.EDITOR, "created_by": actor})
        audit_record(topology=locked, actor=actor, action=AuditAction.OWNER_TRANSFER,
                     summary=f"ownership {previous.get_username()} -> {new_owner.get_username()}"
                             f" ({previous.get_username()} keeps editor access)",
                     details={"from": previous.get_username(), "to": new_owner.get_username()})
    topology.owner, topology.updated_at = new_owner, locked.updated_at
    return topology


def topology_fork(*, topology: Topology, user: AbstractBaseUser, name: str | None = None
                  ) -> Topology:
    """Copy the current revision and its scenarios into a new topology owned by ``user``.

    Scenarios written for an older revision are not copied (their targets may not exist in the
    current document). The new topology's name defaults to ``"<name> (fork)"``, numbered when
    the user already has one.
    """
    from designer.choices import AuditAction

    source = topology.current_revision
    name = (name or "").strip() or _fork_name(topology.name, user)
    with transaction.atomic():
        fork = Topology(owner=user, name=name, description=topology.description)
        fork.full_clean()
        fork.save()
        if source is not None:
            revision = _revision_append(
                fork, user, source.document,
                f"forked from {topology.owner.get_username()}/{topology.name} r{source.number}")
            for scenario in Scenario.objects.filter(topology=topology, revision=source):
                Scenario.objects.create(
                    topology=fork, revision=revision, name=scenario.name,
                    description=scenario.description, workload=scenario.workload,
                    routing=scenario.routing, failures=scenario.failures, mode=scenario.mode,
                    created_by=user)
        audit_record(topology=topology, actor=user, action=AuditAction.TOPOLOGY_FORK,
                     summary=f"forked by {user.get_username()} as {name!r}",
                     details={"fork": fork.pk, "revision": source.number if source else None})
    return fork


def _fork_name(name: str, user) -> str:
    taken = set(Topology.objects.filter(owner=user, name__startswith=name[:180])
                .values_list("name", flat=True))
    base = f"{name[:180]} (fork)"
    n = 2
    candidate = base
    while candidate in taken:
        candidate, n = f"{name[:180]} (fork {n})", n + 1
    return candidate


__all__ += ["audit_record", "share_grant", "share_update", "share_revoke", "share_link_create",
            "share_link_revoke", "topology_transfer", "topology_fork"]

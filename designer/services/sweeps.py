"""Failure sweeps and design-space explorations: chunks run as parallel tasks, merged by the last
one to finish.

A sweep runs in two steps: the runner (:func:`sweep_prepare`) lists the candidate failures and
splits them into ``SweepChunk`` rows, each published as its own task (so more workers finish
sooner); every chunk that ends calls :func:`sweep_settle` under the job's row lock, and the one
that finds all chunks done merges their rankings - a chord whose counter is the database, not a
result backend.

Exactly once (docs/RELIABILITY.md, "Exactly-once completion"): every step is a transaction whose outcome is in the rows, so a process
that dies between two steps leaves a state the reaper finishes - chunk rows without a message
(``published_at`` null: re-published), all chunks terminal under a running job (settled by the
reaper). Settling holds the job's row lock and returns unless the job is still running, so the
merge runs once whoever calls it, and writes the one ``SimulationResult`` in the same
transaction as the job's terminal state. Chunk results and the merged result are stored with
their ranking as columns (``fabricscope.sweep-columns/1``, docs/FORMATS.md, "Stored sweeps"),
written by the bridge's chunk run and merge; readers expand them with ``bridge.results.rows_of``.

An ``explore`` job (docs/FORMATS.md, "Design-space explorer") takes the same road: its items are
the grid's points instead of failures (kept in the chunk's ``failures`` list), its chunk run and
merge are the bridge's explorer functions (:data:`CHUNKED_KINDS`).
"""
from __future__ import annotations

import logging
from functools import partial

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count
from django.utils import timezone

from designer import bridge
from designer.choices import JobKind, JobState
from designer.exceptions import JobCancelled
from designer.models import SimulationJob, SimulationResult, SweepChunk
from designer.services.queue import enqueue_chunk, lock_job, new_task_id
from designer.services.runs import done_message, error_text, Heartbeat, job_finish, Run

__all__ = ["CHUNKED_KINDS", "sweep_prepare", "sweep_chunk_run", "sweep_settle", "sweep_settle_locked",
           "enqueue_chunks"]

logger = logging.getLogger(__name__)

# The kinds run in chunks → the bridge functions (looked up at call time: tests wrap them there)
# listing the items, running one block (i, n) of them, and merging the parts.
CHUNKED_KINDS = {
    JobKind.SWEEP: ("sweep_candidates", "run_sweep_chunk", "merge_sweep_parts"),
    JobKind.EXPLORE: ("explore_points", "run_explore_chunk", "merge_explore_parts"),
}


def _engine(job, step: int):
    return getattr(bridge, CHUNKED_KINDS.get(job.kind, CHUNKED_KINDS[JobKind.SWEEP])[step])


def sweep_prepare(job: SimulationJob, run: Run) -> None:
    """A sweep or explore job's run (called by the runner): list its candidate failures (grid
    points) and split them into ``SweepChunk`` rows, each published as its own task after the commit."""
    failures = _engine(job, 0)(job)
    what = "design points" if job.kind == JobKind.EXPLORE else "failures"
    run.progress(0.0, f"{len(failures)} {what} to try")
    n = min(len(failures), int(job.parameters.get("chunks") or settings.FABRICSCOPE_SWEEP_CHUNKS))
    if n == 0:  # nothing to try: the engine's unchunked sweep says so (the job fails with it)
        data = _engine(job, 1)(job, None, run.progress)
        job_finish(job.pk, job.attempts, JobState.SUCCEEDED, data=data,
                    message=done_message(job, data))
        return
    # What the engine's chunk=(i, n) evaluates, stored so pages can show each chunk: contiguous
    # blocks of failures, every n-th design point (bridge.explore_chunk_points).
    parts = ([bridge.explore_chunk_points(failures, i, n) for i in range(n)] if job.kind == JobKind.EXPLORE else
             [failures[i * len(failures) // n:(i + 1) * len(failures) // n] for i in range(n)])
    with transaction.atomic():
        locked = lock_job(job.pk)
        if locked.state != JobState.RUNNING or locked.attempts != job.attempts:
            return
        if locked.cancel_requested:
            fields = locked.transition(JobState.CANCELLED, message="cancelled")
            locked.save(update_fields=fields)
            return
        SweepChunk.objects.filter(job=locked).delete()  # left by an earlier, lost attempt
        # heartbeat_at of a queued chunk = when it was queued: the reaper's clock for a publish
        # that never happened (this process dying before on_commit runs).
        now = timezone.now()
        SweepChunk.objects.bulk_create(
            SweepChunk(job=locked, index=i, failures=part, celery_task_id=new_task_id(),
                       heartbeat_at=now)
            for i, part in enumerate(parts))
        locked.chunks_total = n
        locked.message = f"{len(failures)} {what} in {n} chunks"
        locked.save(update_fields=["chunks_total", "message"])
        chunks = list(SweepChunk.objects.filter(job=locked).values_list("pk", "celery_task_id"))
        transaction.on_commit(partial(enqueue_chunks, chunks))


def sweep_chunk_run(*, chunk_id: int, hostname: str = "", task_id: str = "") -> None:
    """Run one queued sweep chunk (called by ``tasks.sweep_chunk_run``; redelivery-safe).

    Parameters
    ----------
    chunk_id : int
        Primary key of the ``SweepChunk``.
    hostname, task_id : str
        The Celery worker's name and the message id, stored on the chunk.
    """
    chunk = _chunk_start(chunk_id, hostname, task_id)
    if chunk is None:
        return
    run = Run(SweepChunk, chunk.pk, chunk.attempts, job_id=chunk.job_id)
    with Heartbeat(run):
        try:
            data = _engine(chunk.job, 1)(chunk.job, (chunk.index, chunk.job.chunks_total),
                                         run.progress)
        except JobCancelled:
            finished = _chunk_finish(chunk, JobState.CANCELLED)
        except Exception as exc:
            logger.warning("chunk %s failed", chunk.pk, exc_info=not isinstance(exc, ValidationError))
            finished = _chunk_finish(chunk, JobState.FAILED, error=error_text(exc))
        else:
            finished = _chunk_finish(chunk, JobState.SUCCEEDED, data=data)
    if finished:  # a separate transaction: if this process dies first, the reaper settles
        sweep_settle(chunk.job_id)


def _chunk_start(chunk_id: int, hostname: str, task_id: str) -> SweepChunk | None:
    with transaction.atomic():
        # Lock the chunk and its job, not the revision: a build job's revision is nullable, and
        # PostgreSQL refuses FOR UPDATE on the nullable side of an outer join.
        chunk = (SweepChunk.objects.select_for_update(of=("self", "job")).select_related("job__revision")
                 .filter(pk=chunk_id).first())
        if chunk is None or chunk.state != JobState.QUEUED:
            return None
        if chunk.job.state != JobState.RUNNING or chunk.job.cancel_requested:
            chunk.save(update_fields=chunk.transition(JobState.CANCELLED))
            transaction.on_commit(partial(sweep_settle, chunk.job_id))
            return None
        fields = chunk.transition(JobState.RUNNING)
        chunk.attempts += 1
        chunk.worker_hostname = hostname[:255]
        chunk.celery_task_id = task_id or chunk.celery_task_id
        chunk.save(update_fields=[*fields, "attempts", "worker_hostname", "celery_task_id"])
    return chunk


def _chunk_finish(chunk: SweepChunk, state: str, *, error: str = "", data: dict | None = None
                  ) -> bool:
    """Commit a chunk run's outcome; False (nothing written) when the run was superseded."""
    with transaction.atomic():
        locked = SweepChunk.objects.select_for_update().filter(pk=chunk.pk).first()
        if locked is None or locked.state != JobState.RUNNING or locked.attempts != chunk.attempts:
            return False  # superseded, or deleted with its topology
        fields = locked.transition(state)
        locked.error, locked.result = error, data
        locked.progress = 100 if state == JobState.SUCCEEDED else locked.progress
        locked.save(update_fields=[*fields, "error", "result", "progress"])
    return True


def sweep_settle(job_id: int) -> None:
    """Settle a sweep from its chunks' rows (idempotent: a settled sweep is left as it is)."""
    with transaction.atomic():
        job = SimulationJob.objects.select_for_update().filter(pk=job_id).first()
        if job is not None:  # None: deleted with its topology
            sweep_settle_locked(job)


def sweep_settle_locked(job: SimulationJob) -> None:
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
    elif not counts.get(JobState.QUEUED) and not counts.get(JobState.RUNNING):
        # Every chunk ended, not all succeeded, none failed, no cancel asked: a chunk was
        # cancelled by a path outside the sweep's own; end the job rather than wait for ever.
        job.error = f"{job.chunks_total - counts.get(JobState.SUCCEEDED, 0)} chunk(s) cancelled"
        job.save(update_fields=[*job.transition(JobState.FAILED, message="failed: " + job.error),
                                "error"])


def _sweep_merge(job: SimulationJob) -> None:
    parts = list(job.chunks.order_by("index").values_list("result", flat=True))
    try:
        data = _engine(job, 2)(parts)
    except Exception as exc:
        job.error = error_text(exc)
        job.save(update_fields=[*job.transition(JobState.FAILED, message="failed: merge"),
                                "error"])
        return
    SimulationResult.objects.update_or_create(job=job, defaults={"data": data})
    job.chunks.update(result=None)  # merged into the job's result; do not keep two copies
    fields = job.transition(JobState.SUCCEEDED, message=done_message(job, data))
    job.progress = 100
    job.save(update_fields=[*fields, "progress"])


def _chunks_cancel_queued(job: SimulationJob) -> None:
    job.chunks.filter(state=JobState.QUEUED).update(state=JobState.CANCELLED,
                                                    finished_at=timezone.now())


def enqueue_chunks(chunks: list[tuple[int, str]]) -> None:
    """Publish chunks (after commit); a chunk that cannot be queued fails, which settles its sweep."""
    for chunk_id, task_id in chunks:
        if not enqueue_chunk(chunk_id, task_id):
            sweep_settle(SweepChunk.objects.values_list("job_id", flat=True).get(pk=chunk_id))

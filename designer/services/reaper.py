"""Worker loss: re-queue (or fail) lost runs, settle orphaned sweeps, re-send lost publishes.

Celery beat calls :func:`job_reap_stale` every FABRICSCOPE_REAPER_INTERVAL seconds, in the beat
process itself (``designer.celery.BeatScheduler``), so it runs even while every pool process is
busy or dead, and a lost worker never leaves a job running forever. A re-queued run gets a new
message id; the lost runner's late writes match no row (``attempts`` is the run's token, see
``runs``). Everything it decides comes from the rows (docs/RELIABILITY.md, "Exactly-once completion"):

- running job or chunk, heartbeat older than FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT: re-queued/failed;
- running sweep whose chunks have all ended: settled (the process that committed the last chunk
  died before its settle transaction);
- queued job or chunk whose message was never accepted by the broker (``published_at`` null for
  longer than the heartbeat timeout) or has waited too long (held by a dead worker, lost with
  the broker's data; backoff in :func:`_republish_lost`): its message is sent again.
"""
from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.db.models.functions import Coalesce
from django.utils import timezone

from designer.choices import JobState
from designer.models import SimulationJob, SweepChunk
from designer.services.queue import enqueue_job, lock_job, republish, new_task_id
from designer.services.sweeps import enqueue_chunks, sweep_settle

__all__ = ["job_reap_stale"]

logger = logging.getLogger(__name__)

ACTIVE = (JobState.QUEUED, JobState.RUNNING)


def job_reap_stale(*, now=None) -> dict[str, int]:
    """Finish what dead processes left: lost runs, orphaned sweeps, unsent or stuck messages.

    A run is lost when its heartbeat is older than FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT seconds. It
    is re-queued while it has run fewer than FABRICSCOPE_JOB_MAX_ATTEMPTS times, else it fails
    with "worker lost". Then running sweeps whose chunks have all ended are settled, and queued
    rows whose message was never sent or waited too long are published again (module
    docstring). Called by celery beat every FABRICSCOPE_REAPER_INTERVAL seconds; safe to run
    concurrently (each row is re-checked under its lock; a duplicate message is a no-op).

    Parameters
    ----------
    now : datetime, optional
        The reference time (default: now).

    Returns
    -------
    dict
        Counts of runs ``requeued``, ``failed`` and ``cancelled``, of sweeps ``settled`` and of
        messages ``republished``.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=settings.FABRICSCOPE_JOB_HEARTBEAT_TIMEOUT)
    outcome = {"requeued": 0, "failed": 0, "cancelled": 0}
    _reap_runs(cutoff, outcome)
    outcome["settled"] = _settle_orphaned_sweeps()
    outcome["republished"] = _republish_lost(now, cutoff)
    if any(outcome.values()):
        logger.warning("reaper: %s", outcome)
    return outcome


def _reap_runs(cutoff, outcome: dict[str, int]) -> None:
    """Re-queue, fail or cancel the runs whose heartbeat is older than ``cutoff``."""
    # A sweep past its prepare step is alive through its chunks, which are checked one by one.
    for pk in SimulationJob.objects.filter(state=JobState.RUNNING, heartbeat_at__lt=cutoff,
                                           chunks_total=0).values_list("pk", flat=True):
        outcome[_job_reap(pk, cutoff)] += 1
    for pk in SweepChunk.objects.filter(state=JobState.RUNNING,
                                        heartbeat_at__lt=cutoff).values_list("pk", flat=True):
        outcome[_chunk_reap(pk, cutoff)] += 1
    outcome.pop("", None)


def _settle_orphaned_sweeps() -> int:
    """Settle running sweeps none of whose chunks is still queued or running; returns how many
    ended. Settling re-checks under the job's lock, so racing the worker's own settle is safe."""
    settled = 0
    orphans = (SimulationJob.objects.filter(state=JobState.RUNNING, chunks_total__gt=0)
               .exclude(chunks__state__in=ACTIVE).values_list("pk", flat=True))
    for pk in orphans:
        sweep_settle(pk)
        settled += SimulationJob.objects.filter(pk=pk).exclude(state=JobState.RUNNING).exists()
    return settled


def _republish_lost(now, cutoff) -> int:
    """Send again the messages of queued rows that waited too long; returns how many were sent.

    A row queued before ``cutoff`` is re-sent when the broker never accepted its message
    (``published_at`` null: the publisher died after its commit), or when its message has
    waited since its last publish longer than the row had waited before it, and at least the
    heartbeat timeout - a backoff that doubles, so a row waiting a time T in a busy queue is
    sent at most ~log2(T / timeout) extra times. That rescues a message the broker holds for a
    dead consumer (a prefetched, never-started message of a SIGKILLed worker comes back only
    after the broker's visibility timeout, an hour) or lost with the broker's data. Each
    duplicate is a no-op for the runner (it starts only a row that is still queued).
    """
    # Queued since: heartbeat_at when the reaper re-queued the row or sweeps created the chunk,
    # else (a job as submitted) its creation time.
    jobs = (SimulationJob.objects.filter(state=JobState.QUEUED)
            .annotate(queued_at=Coalesce("heartbeat_at", "created_at")))
    chunks = (SweepChunk.objects.filter(state=JobState.QUEUED, job__state=JobState.RUNNING)
              .annotate(queued_at=Coalesce("heartbeat_at", "job__started_at")))
    waiting = Q(queued_at__lt=cutoff) & (Q(published_at=None) | Q(published_at__lt=cutoff))
    sent = 0
    for model, rows in ((SimulationJob, jobs), (SweepChunk, chunks)):
        for pk, task_id, queued, published in rows.filter(waiting).values_list(
                "pk", "celery_task_id", "queued_at", "published_at"):
            if published is None or now - published >= published - queued:
                sent += republish(model, pk, task_id)
    return sent


def _job_reap(pk: int, cutoff) -> str:
    with transaction.atomic():
        job = lock_job(pk)
        if job.state != JobState.RUNNING or job.chunks_total or job.heartbeat_at >= cutoff:
            return ""
        outcome, fields = _lost_run_outcome(job)
        if outcome == "requeued":
            job.celery_task_id, job.published_at = new_task_id(), None
            job.progress, job.heartbeat_at = 0, timezone.now()  # queued since, see _republish_lost
            fields += ["celery_task_id", "published_at", "progress", "heartbeat_at"]
            transaction.on_commit(partial(enqueue_job, job.pk, job.celery_task_id))
        job.save(update_fields=fields)
    return outcome


def _chunk_reap(pk: int, cutoff) -> str:
    with transaction.atomic():
        chunk = SweepChunk.objects.select_for_update().select_related("job").get(pk=pk)
        if chunk.state != JobState.RUNNING or chunk.heartbeat_at >= cutoff:
            return ""
        outcome, fields = _lost_run_outcome(chunk, cancel=chunk.job.cancel_requested)
        if outcome == "requeued":
            chunk.celery_task_id, chunk.published_at = new_task_id(), None
            chunk.heartbeat_at = timezone.now()  # queued since, see _republish_lost
            fields += ["celery_task_id", "published_at", "heartbeat_at"]
            transaction.on_commit(partial(enqueue_chunks, [(chunk.pk, chunk.celery_task_id)]))
        chunk.save(update_fields=fields)
        transaction.on_commit(partial(sweep_settle, chunk.job_id))
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

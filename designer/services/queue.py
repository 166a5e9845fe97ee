"""Queue plumbing: publishing job and chunk messages, revoking them, locking a job row.

The bottom of ``designer.services``: it imports no other service module but ``fairness`` (each
message's priority in the queue). Every Celery publish
goes through :func:`_send` (tests replace ``designer.services.queue._send`` to record messages).
A publish that fails marks its row failed: a job is never silently lost (docs/RELIABILITY.md).
A publish that succeeds stamps the row's ``published_at``; a queued row still without it after
a grace period lost its publish to a crash, and the reaper sends it again (:func:`republish`).
"""
from __future__ import annotations

import logging
import uuid

from django.db import transaction
from django.utils import timezone

from designer.choices import JobState
from designer.models import SimulationJob, SweepChunk
from designer.ops.logs import current_request_id
from designer.services.fairness import message_priority

__all__ = ["TASK_FOR", "lock_job", "copy_fields", "new_task_id", "republish", "enqueue_job",
           "enqueue_chunk", "revoke"]

logger = logging.getLogger(__name__)


def lock_job(pk: int) -> SimulationJob:
    """The job row, locked until the caller's transaction ends (``select_for_update``)."""
    return SimulationJob.objects.select_for_update().get(pk=pk)


def copy_fields(source: SimulationJob, target: SimulationJob) -> None:
    """Make the caller's ``target`` instance show what ``source`` (a locked re-read) holds."""
    if source is not target:
        target.__dict__.update({k: v for k, v in source.__dict__.items() if k != "_state"})


def new_task_id() -> str:
    """A fresh Celery message id (stored on the row before the message is sent)."""
    return str(uuid.uuid4())


def _send(task_name: str, *args, task_id: str) -> None:
    """Publish a task by name (services are imported by tasks.py, not the reverse)."""
    from designer.celery import app

    # The request id travels in the message headers: the worker logs it with every line of the
    # task (designer/ops/worker.py), and chunks published by a job's runner inherit it.
    app.send_task(task_name, args=list(args), task_id=task_id,
                  headers={"request_id": current_request_id()},
                  priority=_priority(task_name, args[0]))


def _priority(task_name: str, pk: int) -> int:
    """The message's place in the fair queue (``fairness``); 0 when it cannot be computed, so
    a failed count never costs a job its publish."""
    model = next(m for m, name in TASK_FOR.items() if name == task_name)
    try:
        return message_priority(model, pk)
    except Exception:
        logger.warning("could not compute the queue priority of %s %s; sending it first",
                       model.__name__, pk, exc_info=True)
        return 0


TASK_FOR = {SimulationJob: "designer.tasks.job_run", SweepChunk: "designer.tasks.sweep_chunk_run"}


def _mark_published(model, pk: int, task_id: str) -> None:
    """Record that the broker took this row's current message (a later re-queue, with a new
    task id, is not marked by this one)."""
    try:
        model.objects.filter(pk=pk, celery_task_id=task_id).update(published_at=timezone.now())
    except Exception:  # the message is out; the worst case is one harmless re-publish
        logger.warning("could not stamp %s %s as published", model.__name__, pk, exc_info=True)


def republish(model, pk: int, task_id: str) -> bool:
    """Send a queued row's message again (reaper); False when the broker is unreachable.

    Unlike the first publish, a failure here changes nothing: the row stays queued and the
    next reaper pass tries again. A duplicate message is harmless (runners start only a row
    that is still queued).
    """
    try:
        _send(TASK_FOR[model], pk, task_id=task_id)
    except Exception:
        logger.warning("could not re-publish %s %s", model.__name__, pk, exc_info=True)
        return False
    _mark_published(model, pk, task_id)
    return True


def enqueue_job(job_id: int, task_id: str) -> None:
    """Publish a job's message (after commit); a publish that fails marks the job failed."""
    try:
        _send(TASK_FOR[SimulationJob], job_id, task_id=task_id)
    except Exception as exc:
        logger.exception("could not queue job %s", job_id)
        with transaction.atomic():
            job = lock_job(job_id)
            if job.state == JobState.QUEUED:
                job.error = f"could not reach the job queue: {exc}"
                fields = job.transition(JobState.FAILED, message="failed: job queue unreachable")
                job.save(update_fields=[*fields, "error"])
        return
    _mark_published(SimulationJob, job_id, task_id)


def enqueue_chunk(chunk_id: int, task_id: str) -> bool:
    """Publish one sweep chunk; False when the publish failed (the chunk is then marked failed
    and the caller settles its sweep, see ``sweeps.enqueue_chunks``)."""
    try:
        _send(TASK_FOR[SweepChunk], chunk_id, task_id=task_id)
    except Exception as exc:
        logger.exception("could not queue sweep chunk %s", chunk_id)
        with transaction.atomic():
            chunk = SweepChunk.objects.select_for_update().get(pk=chunk_id)
            if chunk.state == JobState.QUEUED:
                chunk.error = f"could not reach the job queue: {exc}"
                chunk.save(update_fields=[*chunk.transition(JobState.FAILED), "error"])
        return False
    _mark_published(SweepChunk, chunk_id, task_id)
    return True


def revoke(task_ids: list[str]) -> None:
    """Tell workers to drop these messages (the row's state already makes them no-ops)."""
    if not task_ids:
        return
    try:
        from designer.celery import app

        app.control.revoke(task_ids)
    except Exception:
        logger.warning("could not broadcast revoke for %s", task_ids, exc_info=True)

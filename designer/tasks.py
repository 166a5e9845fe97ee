"""Celery tasks: interfaces only. Each takes an id and calls a service (designer/services/).

``acks_late`` + ``reject_on_worker_lost``: a message is acknowledged only after the task ran, and
a worker process that dies mid-task gives its message back. Redelivery is harmless because the
runners return unless the row is still queued; a job whose worker died is re-queued by
``jobs_reap``, not by the broker. Beat runs ``jobs_reap`` in its own process (never through the
queue, see ``designer.celery.BeatScheduler``), so recovery does not wait for a pool process.
"""
from __future__ import annotations

from celery import shared_task

from designer import services

__all__ = ["job_run", "sweep_chunk_run", "jobs_reap"]

_RUNNER = {"acks_late": True, "reject_on_worker_lost": True, "ignore_result": True}


@shared_task(bind=True, name="designer.tasks.job_run", **_RUNNER)
def job_run(self, job_id: int) -> None:
    services.job_run(job_id=job_id, hostname=self.request.hostname or "",
                     task_id=self.request.id or "")


@shared_task(bind=True, name="designer.tasks.sweep_chunk_run", **_RUNNER)
def sweep_chunk_run(self, chunk_id: int) -> None:
    services.sweep_chunk_run(chunk_id=chunk_id, hostname=self.request.hostname or "",
                             task_id=self.request.id or "")


@shared_task(name="designer.tasks.jobs_reap", ignore_result=True)
def jobs_reap() -> None:
    services.job_reap_stale()  # logs what it re-queued or failed

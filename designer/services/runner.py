"""The job runner: run one queued job to a terminal state (docs/ARCHITECTURE.md, "One walk";
docs/RELIABILITY.md, "Exactly-once completion").

:func:`job_run` (called by a task with the job id) locks the row, returns unless it is still
queued (so a redelivered message is harmless), marks it running, calls the engine through
``designer.bridge`` with a progress callback, and always ends in a terminal state with a
message. A side thread writes a heartbeat (``runs.Heartbeat``); the reaper re-queues or fails
jobs whose heartbeat stopped. A sweep or explore job's run only prepares its chunks (``sweeps``);
a build job's run saves its topology's first revision (``builds``). When a job
succeeds, its result page's figures are built and stored (``results.figures_prebuild``).
"""
from __future__ import annotations

import logging

from django.core.exceptions import ValidationError
from django.db import transaction

from designer import bridge
from designer.choices import JobKind, JobState
from designer.exceptions import JobCancelled
from designer.models import SimulationJob
from designer.services.builds import build_run
from designer.services.results import figures_prebuild
from designer.services.runs import Heartbeat, Run, done_message, error_text, job_finish
from designer.services.sweeps import CHUNKED_KINDS, sweep_prepare

__all__ = ["job_run"]

logger = logging.getLogger(__name__)

# The bridge function computing each kind's result (looked up at call time: tests wrap them there);
# a sweep's run only prepares its chunks.
_RUNNERS = {JobKind.COMPARE: "run_compare", JobKind.DIAGNOSE: "run_diagnose"}


def job_run(*, job_id: int, hostname: str = "", task_id: str = "") -> None:
    """Run a queued job to a terminal state (called by ``tasks.job_run``; redelivery-safe).

    Parameters
    ----------
    job_id : int
        Primary key of the ``SimulationJob``.
    hostname, task_id : str
        The Celery worker's name and the message id, stored on the job.
    """
    job = _job_start(job_id, hostname, task_id)
    if job is None:
        return
    run = Run(SimulationJob, job.pk, job.attempts, job_id=job.pk)
    stored = None
    with Heartbeat(run):
        try:
            if job.kind in CHUNKED_KINDS:
                sweep_prepare(job, run)
                return
            if job.kind == JobKind.BUILD:  # saves its topology's first revision and ends the job
                build_run(job, run)
                return
            runner = getattr(bridge, _RUNNERS.get(job.kind, "run_simulation"))
            data = runner(job, run.progress)
        except JobCancelled as exc:
            job_finish(job.pk, job.attempts, JobState.CANCELLED, message=str(exc))
        except Exception as exc:  # any error ends the job as failed, with its text
            logger.warning("job %s failed", job.pk, exc_info=not isinstance(exc, ValidationError))
            job_finish(job.pk, job.attempts, JobState.FAILED, error=error_text(exc))
        else:
            if job_finish(job.pk, job.attempts, JobState.SUCCEEDED, data=data,
                           message=done_message(job, data)):
                stored = data
    if stored is not None:  # after the heartbeat: the job has ended, its page is being prepared
        figures_prebuild(job, stored)


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

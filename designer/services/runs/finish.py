"""How a run of a job ends: its terminal write (exactly once) and the texts it leaves.

Every write is conditional on the row still being this run's (``attempts`` is the run's token):
a superseded runner's outcome matches no row and is dropped.
"""
from __future__ import annotations

import logging

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from designer.choices import JobKind, JobState
from designer.exceptions import EngineValidationError
from designer.models import SimulationJob
from designer.ops import limits as ops_limits
from designer.services.results import result_store

__all__ = ["job_finish", "done_message", "error_text"]

logger = logging.getLogger(__name__)


def job_finish(job_id: int, attempt: int, state: str, *, message: str = "", error: str = "",
               data: dict | None = None) -> bool:
    """End run ``attempt`` of a job; False (nothing written) when another run superseded it."""
    with transaction.atomic():
        job = SimulationJob.objects.select_for_update().filter(pk=job_id).first()
        if job is None or job.state != JobState.RUNNING or job.attempts != attempt:
            # Superseded by another run, cancelled, or deleted with its topology.
            logger.warning("job %s: run %s was superseded; its outcome is dropped", job_id, attempt)
            return False
        if data is not None:
            result_store(job=job, document=data)
        if state == JobState.FAILED and not message:
            message = "failed: " + error.splitlines()[0] if error else "failed"
        fields = job.transition(state, message=message or state)
        job.error = error
        if state == JobState.SUCCEEDED:
            job.progress = 100
        job.save(update_fields=[*fields, "error", "progress"])
    return True


def done_message(job: SimulationJob, data: dict) -> str:
    """The job page's line for a job that succeeded (how long it took, failures ranked)."""
    elapsed = (timezone.now() - job.started_at).total_seconds() if job.started_at else 0.0
    if job.kind == JobKind.SWEEP:
        from designer.bridge.results import ranked  # numpy only when a sweep ends (a worker)

        return f"{ranked(data)} failures ranked in {elapsed:.1f} s"
    if job.kind == JobKind.EXPLORE:
        return f"{len(data.get('points') or [])} designs explored in {elapsed:.1f} s: {(data.get('summary') or {}).get('headline', '')}"
    if job.kind == JobKind.DIAGNOSE:
        return f"diagnosed in {elapsed:.1f} s: {data.get('summary') or ''}".rstrip(": ")
    return f"done in {elapsed:.1f} s"


def error_text(exc: BaseException) -> str:
    """The failure text stored on a job or chunk: which limit was hit, the engine's located
    problems one per line, or the exception's type and message."""
    if limit_text := ops_limits.describe_error(exc):  # time or memory limit: say which
        return limit_text
    if isinstance(exc, EngineValidationError):
        lines = [f"{d['path']}: {d['message']}" if d.get("path") else d["message"]
                 for d in exc.details]
        return "\n".join([exc.engine_message, *lines])
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    return f"{type(exc).__name__}: {exc}"

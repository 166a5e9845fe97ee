"""Resource limits of the web app and the workers, in one place (values: docs/RELIABILITY.md).

- Scenario size: the engine's own limits (``document.LIMITS``, ``workloads.MAX_FLOWS``) plus
  ``FABRICSCOPE_JOB_MAX_FLOWS``, a cheap flow count checked when a scenario is saved and when a
  job is submitted, so an over-limit scenario is a 400 up front, not a worker running out of
  memory minutes later.
- Per-user concurrency: ``FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER`` queued + running jobs (429).
- Per-job time: Celery ``soft_time_limit`` / ``time_limit`` (settings), turned into a clear
  failure message by :func:`describe_error`.
- Per-job memory: ``RLIMIT_AS`` of each worker pool process (:func:`apply_memory_limit`), so a
  too-large job fails with ``MemoryError`` (a clear message) instead of the kernel's OOM killer
  taking the worker down.
"""
from __future__ import annotations

import logging
import resource

from django.conf import settings

from designer.ops.errors import TooManyJobs

__all__ = ["validate_scenario", "scenario_flow_count", "check_active_jobs", "apply_memory_limit",
           "describe_error", "summary"]

logger = logging.getLogger(__name__)


def scenario_flow_count(normalized) -> int:
    """Flows the engine will generate for a normalized scenario (no flow is built)."""
    from designer.engine.workloads import pattern_flow_count

    return sum(pattern_flow_count(p) for p in normalized.patterns)


def validate_scenario(scenario: dict) -> int:
    """Engine validation plus the flow-count limit; returns the flow count.

    Raises
    ------
    EngineValidationError
        Invalid scenario, or code ``limit_exceeded`` at ``workload`` when it makes more than
        ``FABRICSCOPE_JOB_MAX_FLOWS`` flows.
    """
    from designer.bridge import engine_errors
    from designer.engine.errors import LimitExceeded, Problem
    from designer.engine.scenario import normalize_scenario

    limit = settings.FABRICSCOPE_JOB_MAX_FLOWS
    with engine_errors():
        flows = scenario_flow_count(normalize_scenario(scenario))
        if flows > limit:
            message = (f"the workload makes {flows:,} flows; this server runs at most {limit:,} "
                       "per job (FABRICSCOPE_JOB_MAX_FLOWS): use fewer participants or channels")
            raise LimitExceeded(message, [Problem("workload", message)])
    return flows


def check_active_jobs(*, user) -> None:
    """Raise :class:`TooManyJobs` when ``user`` has the maximum of queued + running jobs.

    Call inside the submitting transaction: the user's row is locked, so two concurrent
    submissions by one user cannot both pass the count.
    """
    from django.contrib.auth import get_user_model

    from designer.choices import JobState
    from designer.models import SimulationJob

    limit = settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER
    if not limit or user is None or not getattr(user, "pk", None):
        return
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    active = SimulationJob.objects.filter(
        submitted_by=user, state__in=[JobState.QUEUED, JobState.RUNNING]).count()
    if active >= limit:
        raise TooManyJobs(
            f"you already have {active} jobs queued or running (limit {limit} per user); wait "
            "for one to finish or cancel one, then submit again",
            details={"active": active, "limit": limit, "retry_after_s": 10})


def apply_memory_limit(limit_mb: float | None = None) -> int | None:
    """Cap this process's address space (``RLIMIT_AS``) at ``limit_mb`` MiB; 0/None: no cap.

    Returns the limit in bytes, or None when none was applied.
    """
    limit_mb = settings.FABRICSCOPE_JOB_MEMORY_LIMIT_MB if limit_mb is None else limit_mb
    if not limit_mb:
        return None
    limit = int(limit_mb * 1024 * 1024)
    _, hard = resource.getrlimit(resource.RLIMIT_AS)
    if hard != resource.RLIM_INFINITY:
        limit = min(limit, hard)
    resource.setrlimit(resource.RLIMIT_AS, (limit, hard))
    return limit


def describe_error(exc: BaseException) -> str | None:
    """A clear failure message for resource-limit errors, or None for any other error."""
    from celery.exceptions import SoftTimeLimitExceeded, TimeLimitExceeded

    if isinstance(exc, MemoryError):
        return (f"out of memory: the job needed more than the worker's limit of "
                f"{settings.FABRICSCOPE_JOB_MEMORY_LIMIT_MB:g} MiB "
                "(FABRICSCOPE_JOB_MEMORY_LIMIT_MB); simulate a smaller topology or workload")
    if isinstance(exc, (SoftTimeLimitExceeded, TimeLimitExceeded)):
        return (f"time limit exceeded: the job ran longer than "
                f"{settings.FABRICSCOPE_JOB_SOFT_TIME_LIMIT:g} s "
                "(FABRICSCOPE_JOB_SOFT_TIME_LIMIT); simulate a smaller topology or workload")
    return None


def summary() -> dict:
    """Every limit in force, for docs, /readyz consumers and support."""
    from designer.engine.document import LIMITS
    from designer.engine.workloads import MAX_FLOWS

    return {
        "api_max_body_bytes": settings.FABRICSCOPE_API_MAX_BODY_BYTES,
        "document": dict(LIMITS),
        "engine_max_flows": MAX_FLOWS,
        "job_max_flows": settings.FABRICSCOPE_JOB_MAX_FLOWS,
        "job_max_active_per_user": settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER,
        "job_soft_time_limit_s": settings.FABRICSCOPE_JOB_SOFT_TIME_LIMIT,
        "job_time_limit_s": settings.FABRICSCOPE_JOB_TIME_LIMIT,
        "job_memory_limit_mb": settings.FABRICSCOPE_JOB_MEMORY_LIMIT_MB,
    }

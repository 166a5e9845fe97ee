"""Enumerations shared by models, services, the API and the pages, and the job state machine."""
from __future__ import annotations

from django.db import models

__all__ = ["JobKind", "JobState", "ScenarioMode", "TERMINAL_STATES", "ALLOWED_TRANSITIONS"]


class JobKind(models.TextChoices):
    SIMULATE = "simulate", "Simulation"
    SWEEP = "sweep", "Failure sweep"
    COMPARE = "compare", "Policy comparison"


class JobState(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"
    CANCELLED = "cancelled", "Cancelled"


class ScenarioMode(models.TextChoices):
    STEADY = "steady", "Steady state"
    TIMELINE = "timeline", "Timeline"


TERMINAL_STATES = frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED})

# Every legal state change. Anything else raises IllegalTransition. The one way back,
# running -> queued, is the reaper re-queueing a job whose worker was lost.
ALLOWED_TRANSITIONS: dict[str, frozenset[str]] = {
    JobState.QUEUED: frozenset({JobState.RUNNING, JobState.CANCELLED, JobState.FAILED}),
    JobState.RUNNING: frozenset({JobState.SUCCEEDED, JobState.FAILED, JobState.CANCELLED,
                                 JobState.QUEUED}),
    JobState.SUCCEEDED: frozenset(),
    JobState.FAILED: frozenset(),
    JobState.CANCELLED: frozenset(),
}

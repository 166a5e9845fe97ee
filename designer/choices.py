"""Enumerations shared by models, services, the API and the pages, and the job state machine."""
from __future__ import annotations

from django.db import models

__all__ = ["JobKind", "JobState", "ScenarioMode", "TERMINAL_STATES", "ALLOWED_TRANSITIONS",
           "ShareRole", "AuditAction", "TokenScope"]


class JobKind(models.TextChoices):
    SIMULATE = "simulate", "Simulation"
    SWEEP = "sweep", "Failure sweep"
    COMPARE = "compare", "Policy comparison"
    DIAGNOSE = "diagnose", "Diagnosis"
    EXPLORE = "explore", "Design-space exploration"
    BUILD = "build", "Topology build"


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


class ShareRole(models.TextChoices):
    """What a grant lets its user or group do (the owner can do everything; see selectors)."""

    VIEWER = "viewer", "Viewer"
    EDITOR = "editor", "Editor"


class AuditAction(models.TextChoices):
    REVISION_SAVE = "revision.save", "Revision saved"
    SHARE_GRANT = "share.grant", "Access granted"
    SHARE_CHANGE = "share.change", "Role changed"
    SHARE_REVOKE = "share.revoke", "Access revoked"
    LINK_CREATE = "link.create", "Share link created"
    LINK_REVOKE = "link.revoke", "Share link revoked"
    OWNER_TRANSFER = "owner.transfer", "Ownership transferred"
    TOPOLOGY_FORK = "topology.fork", "Forked"
    TOPOLOGY_DELETE = "topology.delete", "Deleted"
    JOB_SUBMIT = "job.submit", "Job submitted"


class TokenScope(models.TextChoices):
    """What an API token may do: ``read`` = GET/HEAD/OPTIONS only; ``write`` = anything its
    user may do."""

    READ = "read", "Read"
    WRITE = "write", "Read and write"

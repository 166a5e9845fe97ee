"""Resource limits of the web app and the workers, in one place (values: docs/RELIABILITY.md).

- Scenario size: the engine's own limits (``document.LIMITS``, ``workloads.MAX_FLOWS``) plus
  ``FABRICSCOPE_JOB_MAX_FLOWS``, a cheap flow count checked with the scenario's validation
  (:func:`designer.bridge.validate_scenario`, once per request: when a scenario is saved, when a
  job is submitted), so an over-limit scenario is a 400 up front, not a worker running out of
  memory minutes later.
- Per-user concurrency: ``FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER`` queued + running jobs (429).
- Per-job time: Celery ``soft_time_limit`` / ``time_limit`` (settings), turned into a clear
  failure message by :func:`describe_error`.
- Per-job memory: ``RLIMIT_AS`` of each worker pool process (:func:`apply_memory_limit`), so a
  too-large job fails with ``MemoryError`` (a clear message) instead of the kernel's OOM killer
  taking the worker down.
- Request bodies: ``FABRICSCOPE_MAX_BODY_BYTES`` for API and pages (413,
  :class:`designer.ops.middleware.BodyLimitMiddleware`), JSON nesting
  ``FABRICSCOPE_JSON_MAX_DEPTH`` (400, ``api.parsers``).
- Per-user quotas, checked by the services (``designer.services.topologies``):
  ``FABRICSCOPE_QUOTA_TOPOLOGIES`` topologies owned and ``FABRICSCOPE_QUOTA_STORED_MB`` MiB of
  revision documents owned (403 ``quota_exceeded``, :func:`check_topology_quota`,
  :func:`check_storage_quota`); per build request at most ``FABRICSCOPE_BUILD_MAX_ELEMENTS``
  nodes + links (400 ``build_too_large``) and per user at most
  ``FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE`` built per minute (429 ``build_rate_exceeded``)
  (:func:`check_build`), estimated from the one-host template before anything is built.
"""
from __future__ import annotations

import logging
import resource
import time

from django.conf import settings
from django.db.models import BigIntegerField, Func

from designer.ops.errors import BuildRateExceeded, BuildTooLarge, QuotaExceeded, TooManyJobs

__all__ = ["check_active_jobs", "apply_memory_limit",
           "describe_error", "summary", "build_elements", "check_build", "check_topology_quota",
           "check_storage_quota", "stored_bytes", "document_bytes"]

logger = logging.getLogger(__name__)


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
    from designer.bridge.facts import engine_limits

    engine = engine_limits()
    return {
        "max_body_bytes": settings.FABRICSCOPE_MAX_BODY_BYTES,
        "json_max_depth": settings.FABRICSCOPE_JSON_MAX_DEPTH,
        "quota_topologies": settings.FABRICSCOPE_QUOTA_TOPOLOGIES,
        "quota_stored_bytes": settings.FABRICSCOPE_QUOTA_STORED_BYTES,
        "build_max_elements": settings.FABRICSCOPE_BUILD_MAX_ELEMENTS,
        "build_elements_per_minute": settings.FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE,
        "document": engine["document"],
        "engine_max_flows": engine["max_flows"],
        "job_max_flows": settings.FABRICSCOPE_JOB_MAX_FLOWS,
        "job_max_active_per_user": settings.FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER,
        "job_soft_time_limit_s": settings.FABRICSCOPE_JOB_SOFT_TIME_LIMIT,
        "job_time_limit_s": settings.FABRICSCOPE_JOB_TIME_LIMIT,
        "job_memory_limit_mb": settings.FABRICSCOPE_JOB_MEMORY_LIMIT_MB,
    }


# ------------------------------------------------------------------------------ quotas
_clock = time.time  # seconds; tests pin it to stay inside one budget window


def build_elements(*, template, hosts: int, options: dict | None = None) -> int:
    """Nodes + links that ``hosts`` hosts of ``template`` make, from the one-host spec.

    Fabric switches and their links are left out (measured: 4.5 % more elements for
    ``gb200-nvl72`` racks, 7.5-10 % for 3-tier and fat-tree DGX-H100 pods; a test keeps it under
    15 %), so this is what the build costs in proportion to (the 2,048-host DGX-H100 build: 102,472 nodes +
    174,592 links). A spec the engine refuses costs 0 here: the build then reports
    the error itself, located.
    """
    from designer.bridge.facts import host_elements

    if not isinstance(hosts, int) or hosts < 1:
        return 0
    return hosts * host_elements(template, (options or {}).get("params"))


def check_build(*, user, template, hosts: int, options: dict | None = None,
                larger: str = "build fewer hosts") -> int:
    """Refuse a build before it starts when it is too large for one request, or when the user
    has spent the minute's build budget; returns its element count. ``larger`` ends the
    too-large message: what the caller offers instead (the API names its build-job path).

    Raises
    ------
    BuildTooLarge
        More than ``FABRICSCOPE_BUILD_MAX_ELEMENTS`` nodes + links (400).
    BuildRateExceeded
        Together with this minute's earlier builds, more than
        ``FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE`` (429, ``retry_after_s``).
    """
    elements = build_elements(template=template, hosts=hosts, options=options)
    limit = settings.FABRICSCOPE_BUILD_MAX_ELEMENTS
    if limit and elements > limit:
        raise BuildTooLarge(
            f"{hosts:,} hosts of {template} make about {elements:,} nodes and links; one build "
            f"request makes at most {limit:,} (FABRICSCOPE_BUILD_MAX_ELEMENTS): {larger}",
            details={"hosts": hosts, "elements": elements, "limit_elements": limit})
    _spend_build_budget(user, elements)
    return elements


def _spend_build_budget(user, elements: int) -> None:
    """Fixed one-minute windows per user in the cache (shared by every web process when the
    cache is Redis; per process with the local-memory cache, which is then a looser bound)."""
    from django.core.cache import cache

    budget = settings.FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE
    uid = getattr(user, "pk", None)
    if not budget or uid is None or not elements:
        return
    now = _clock()
    key = f"fabricscope:build-budget:{uid}:{int(now // 60)}"
    cache.add(key, 0, timeout=120)
    spent = cache.incr(key, elements)
    if spent > budget:
        cache.decr(key, elements)  # a refused build spends nothing
        retry = max(1, int(60 - now % 60) + 1)
        raise BuildRateExceeded(
            f"you built {spent - elements:,} nodes and links this minute; with this build "
            f"({elements:,}) that is over the limit of {budget:,} per minute "
            f"(FABRICSCOPE_BUILD_ELEMENTS_PER_MINUTE): try again in {retry} s",
            details={"elements": elements, "spent_elements": spent - elements,
                     "limit_elements": budget, "retry_after_s": retry})


def check_topology_quota(*, user) -> None:
    """Raise :class:`QuotaExceeded` when ``user`` already owns ``FABRICSCOPE_QUOTA_TOPOLOGIES``
    topologies (0: no quota). Staff accounts are not limited. Call inside the creating
    transaction (the user's row is locked, as in :func:`check_active_jobs`)."""
    from designer.models import Topology

    from django.contrib.auth import get_user_model

    limit = settings.FABRICSCOPE_QUOTA_TOPOLOGIES
    if not limit or _unlimited(user):
        return
    # Inside the creating transaction, the owner's row lock orders concurrent creations.
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    owned = Topology.objects.filter(owner=user).count()
    if owned >= limit:
        raise QuotaExceeded(
            f"you own {owned:,} topologies, the most allowed per user "
            f"(FABRICSCOPE_QUOTA_TOPOLOGIES={limit:,}); delete one first",
            details={"quota": "topologies", "used": owned, "limit": limit})


def stored_bytes(*, user) -> int:
    """Bytes of revision documents and patches in the topologies ``user`` owns (the database's own measure:
    ``pg_column_size`` on PostgreSQL, the stored JSON text on SQLite)."""
    from django.db.models import Sum, Value
    from django.db.models.functions import Coalesce

    from designer.models import TopologyRevision

    # a revision holds a whole document or a patch (the other column is null)
    sizes = (Coalesce(_StoredSize("stored_document"), Value(0))
             + Coalesce(_StoredSize("patch"), Value(0)))
    total = TopologyRevision.objects.filter(topology__owner=user).aggregate(
        total=Sum(sizes))["total"]
    return int(total or 0)


def check_storage_quota(*, user, adding_bytes: int, what: str = "this revision") -> None:
    """Raise :class:`QuotaExceeded` when storing ``adding_bytes`` more for ``user`` (the owner of
    the topology, whoever saves) would pass ``FABRICSCOPE_QUOTA_STORED_BYTES`` (0: no quota);
    ``what`` names the bytes in the message."""
    limit = settings.FABRICSCOPE_QUOTA_STORED_BYTES
    if not limit or _unlimited(user):
        return
    used = stored_bytes(user=user)
    if used + adding_bytes > limit:
        raise QuotaExceeded(
            f"{what} ({adding_bytes:,} bytes) would take {_owner(user)} stored topology "
            f"revisions to {used + adding_bytes:,} bytes, over the quota of {limit:,} "
            "(FABRICSCOPE_QUOTA_STORED_MB); delete old topologies first",
            details={"quota": "stored_bytes", "used_bytes": used, "size_bytes": adding_bytes,
                     "limit_bytes": limit})


def document_bytes(document: dict) -> int:
    """Bytes a revision document adds to its owner's storage (its canonical JSON)."""
    from designer.bridge import canonical_json

    return len(canonical_json(document).encode("utf-8"))


def _owner(user) -> str:
    return f"{user.get_username()}'s" if hasattr(user, "get_username") else "the owner's"


def _unlimited(user) -> bool:
    return user is None or not getattr(user, "pk", None) or getattr(user, "is_staff", False)


class _StoredSize(Func):
    """Stored bytes of a JSON column (PostgreSQL: its on-disk, possibly compressed size)."""

    template = "LENGTH(CAST(%(expressions)s AS BLOB))"
    output_field = BigIntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        return self.as_sql(compiler, connection, template="pg_column_size(%(expressions)s)",
                           **extra)

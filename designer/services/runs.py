"""One run of a job or a sweep chunk: progress, heartbeat, cancellation, and how it ends.

Shared by ``runner`` (jobs) and ``sweeps`` (chunks), below both. Each run increments the row's
``attempts``, which doubles as the run's token: every write here is conditional on the row
still being this run's, so a superseded runner's writes match no row and are dropped.
"""
from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Case, Count, F, IntegerField, Q, Sum, When
from django.utils import timezone

from designer.choices import JobKind, JobState
from designer.exceptions import EngineValidationError, JobCancelled
from designer.models import SimulationJob, SweepChunk
from designer.ops import limits as ops_limits
from designer.services.results import result_store

__all__: list[str] = []  # private to the runner and sweeps; services/__init__ re-exports a few

logger = logging.getLogger(__name__)


def _job_finish(job_id: int, attempt: int, state: str, *, message: str = "", error: str = "",
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


def _done_message(job: SimulationJob, data: dict) -> str:
    elapsed = (timezone.now() - job.started_at).total_seconds() if job.started_at else 0.0
    if job.kind == JobKind.SWEEP:
        return f"{len(data.get('ranking') or [])} failures ranked in {elapsed:.1f} s"
    return f"done in {elapsed:.1f} s"


def _error_text(exc: BaseException) -> str:
    if limit_text := ops_limits.describe_error(exc):  # time or memory limit: say which
        return limit_text
    if isinstance(exc, EngineValidationError):
        lines = [f"{d['path']}: {d['message']}" if d.get("path") else d["message"]
                 for d in exc.details]
        return "\n".join([exc.engine_message, *lines])
    if isinstance(exc, ValidationError):
        return "; ".join(exc.messages)
    return f"{type(exc).__name__}: {exc}"


class _Run:
    """Progress, heartbeat and cancellation for one run of a job or a sweep chunk.

    ``progress`` is the engine's callback: it raises :class:`JobCancelled` once a stop was seen
    and writes to the database at most every FABRICSCOPE_JOB_PROGRESS_INTERVAL seconds. Every
    write is conditional on the row still being this run's (state running, same attempt, no
    cancel request); when it matches nothing, the run stops.
    """

    def __init__(self, model, pk: int, attempt: int, *, job_id: int):
        self.model, self.pk, self.attempt, self.job_id = model, pk, attempt, job_id
        self.stopped = threading.Event()
        self.reason = ""
        self._last_save = 0.0
        self._interval = settings.FABRICSCOPE_JOB_PROGRESS_INTERVAL

    def progress(self, fraction: float, message: str = "") -> None:
        if self.stopped.is_set():
            raise JobCancelled(self.reason)
        now = time.monotonic()
        if now - self._last_save < self._interval:
            return
        self._last_save = now
        percent = max(0, min(99, int(float(fraction) * 100)))
        if not self._write(progress=percent, message=str(message)[:500]):
            raise JobCancelled(self.reason)

    def beat(self) -> bool:
        """Heartbeat; False once the run must stop."""
        return self._write()

    def _mine(self):
        rows = self.model.objects.filter(pk=self.pk, state=JobState.RUNNING, attempts=self.attempt)
        if self.model is SweepChunk:
            return rows.filter(job__state=JobState.RUNNING, job__cancel_requested=False)
        return rows.filter(cancel_requested=False)

    def _write(self, **fields) -> bool:
        now = timezone.now()
        if self._mine().update(heartbeat_at=now, **fields):
            if self.model is SweepChunk:
                _sweep_progress(self.job_id, now)
            return True
        self.stop()
        return False

    def stop(self) -> None:
        state = self.model.objects.filter(pk=self.pk).values_list("state", flat=True).first()
        self.reason = ("cancelled" if state == JobState.RUNNING
                       else "stopped: this run was superseded")
        self.stopped.set()


class _Heartbeat:
    """Side thread writing the run's heartbeat even while the engine computes without progress."""

    def __init__(self, run: _Run):
        self.run = run
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"heartbeat-{run.pk}", daemon=True)

    def __enter__(self) -> "_Heartbeat":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.done.set()
        self.thread.join(timeout=10)

    def _loop(self) -> None:
        interval = settings.FABRICSCOPE_JOB_HEARTBEAT_INTERVAL
        try:
            while not self.done.wait(interval) and not self.run.stopped.is_set():
                try:
                    self.run.beat()
                except Exception:  # a locked database must not kill the heartbeat
                    logger.warning("heartbeat of %s failed", self.run.pk, exc_info=True)
        finally:
            connection.close()


def _sweep_progress(job_id: int, now) -> None:
    """Job progress = mean chunk progress (finished chunks count 100); runs after chunk writes."""
    figures = SweepChunk.objects.filter(job_id=job_id).aggregate(
        total=Count("pk"),
        done=Count("pk", filter=Q(state=JobState.SUCCEEDED)),
        points=Sum(Case(When(state=JobState.SUCCEEDED, then=100), default=F("progress"),
                        output_field=IntegerField())))
    total = figures["total"] or 1
    SimulationJob.objects.filter(pk=job_id, state=JobState.RUNNING).update(
        progress=min(99, (figures["points"] or 0) // total), heartbeat_at=now,
        message=f"{figures['done']} of {figures['total']} chunks done")

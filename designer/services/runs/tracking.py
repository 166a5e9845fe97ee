"""Progress, heartbeat and cancellation of one run of a job or a sweep chunk.

Each run increments the row's ``attempts``, which doubles as the run's token: every write here is
conditional on the row still being this run's, so a superseded runner's writes match no row and
the run stops.
"""
from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.db import connection
from django.db.models import Case, Count, F, IntegerField, Q, Sum, When
from django.utils import timezone

from designer.choices import JobState
from designer.exceptions import JobCancelled
from designer.models import SimulationJob, SweepChunk

__all__ = ["Run", "Heartbeat"]

logger = logging.getLogger(__name__)


class Run:
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


class Heartbeat:
    """Side thread writing the run's heartbeat even while the engine computes without progress."""

    def __init__(self, run: Run):
        self.run = run
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._loop, name=f"heartbeat-{run.pk}", daemon=True)

    def __enter__(self) -> "Heartbeat":
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

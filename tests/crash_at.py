"""Kill the process at one named point of a job's life, once (a test hook; production has none).

Each point is a seam between two durable steps (docs/RELIABILITY.md, "Exactly-once completion"), reached by
wrapping the real service function the way :mod:`tests.job_delay` wraps engine calls; the
wrapper calls ``os._exit(1)`` - no cleanup, no ``finally``, no commit - exactly as a SIGKILL or
an OOM kill would, but at a chosen instant instead of a random one:

=============  ===============================================================================
point          the process dies ...
=============  ===============================================================================
web_publish    after the web request committed a queued job, before publishing its message
job_finish     after a simulation computed its result, before the transaction that stores it
chunk_publish  after a sweep committed its chunk rows, before publishing any chunk message
chunk_commit   after the last chunk committed "succeeded", before the sweep is settled
settle_merge   inside the settle transaction, after merging the rankings, before its commit
merge_commit   after the merge committed the result and the job's end, before the ack
=============  ===============================================================================

It fires once per marker file (created atomically just before dying), so the replacement pool
process, or a rescuing worker started with the same environment, runs through. It never fires
in celery beat's process ("Beat"): beat hosts the reaper that must do the rescuing.

- In a real worker: ``celery_worker(FABRICSCOPE_TEST_CRASH_AT="chunk_commit",
  FABRICSCOPE_TEST_CRASH_MARKER=path)``; ``tests.worker_app`` installs it at import.
- As a dying web process: ``python -m tests.crash_at submit-sweep SCENARIO USER`` with the same
  two variables submits a sweep through the real service and dies at ``web_publish``.
"""
from __future__ import annotations

import functools
import multiprocessing
import os
import sys

__all__ = ["POINTS", "install", "crash"]

POINTS = ("web_publish", "job_finish", "chunk_publish", "chunk_commit", "settle_merge",
          "merge_commit")


def crash(point: str, marker: str) -> None:
    """Exit the process at once with status 1 unless ``marker`` exists (then do nothing)."""
    if multiprocessing.current_process().name == "Beat":
        return
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return  # already crashed once: this is the rescuer
    os.write(fd, f"{point} {os.getpid()}\n".encode())
    os.close(fd)
    os._exit(1)


def _before(call, point: str, marker: str, when=lambda *a, **k: True):
    @functools.wraps(call)
    def wrapper(*args, **kwargs):
        if when(*args, **kwargs):
            crash(point, marker)
        return call(*args, **kwargs)
    return wrapper


def _after(call, point: str, marker: str, when):
    @functools.wraps(call)
    def wrapper(*args, **kwargs):
        value = call(*args, **kwargs)
        if when(value, *args, **kwargs):
            crash(point, marker)
        return value
    return wrapper


def _last_chunk_committed(finished: bool, chunk, *args, **kwargs) -> bool:
    from designer.choices import JobState
    from designer.models import SweepChunk

    return finished and not SweepChunk.objects.filter(job_id=chunk.job_id).exclude(
        state=JobState.SUCCEEDED).exists()


def _sweep_ended(value, job_id: int) -> bool:
    from designer.choices import JobState
    from designer.models import SimulationJob

    return SimulationJob.objects.filter(pk=job_id, state=JobState.SUCCEEDED).exists()


def _seams(point: str, marker: str):
    """(module, attribute, wrapper factory) of the function to wrap for ``point``."""
    from designer import bridge
    from designer.choices import JobState
    from designer.services import queue, runner, sweeps

    return {
        "web_publish": (queue, "_send", lambda f: _before(
            f, point, marker, lambda name, *a, **k: name == "designer.tasks.job_run")),
        "job_finish": (runner, "job_finish", lambda f: _before(
            f, point, marker, lambda job_id, attempt, state, **k: state == JobState.SUCCEEDED)),
        "chunk_publish": (sweeps, "enqueue_chunks", lambda f: _before(f, point, marker)),
        "chunk_commit": (sweeps, "_chunk_finish",
                         lambda f: _after(f, point, marker, _last_chunk_committed)),
        "settle_merge": (bridge, "merge_sweep_parts",
                         lambda f: _after(f, point, marker, lambda *a, **k: True)),
        "merge_commit": (sweeps, "sweep_settle",
                         lambda f: _after(f, point, marker, _sweep_ended)),
    }[point]


def install(point: str, marker: str, *, setattr=setattr) -> None:
    """Make this process die once at ``point`` (one of :data:`POINTS`).

    The wrapped names are module globals looked up at call time (``runner.job_finish``,
    ``sweeps._chunk_finish``, ...), so wrapping the attribute reaches every caller in that
    module. ``setattr`` is ``monkeypatch.setattr`` in a test process.
    """
    if point not in POINTS:
        raise ValueError(f"FABRICSCOPE_TEST_CRASH_AT={point!r}: choose among {', '.join(POINTS)}")
    module, name, wrap = _seams(point, marker)
    setattr(module, name, wrap(getattr(module, name)))


def _submit_sweep(scenario_pk: str, user_pk: str) -> None:
    """Submit a 2-chunk NIC sweep as the web would (``submit-sweep`` command)."""
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from designer import services
    from designer.models import Scenario

    install(os.environ["FABRICSCOPE_TEST_CRASH_AT"], os.environ["FABRICSCOPE_TEST_CRASH_MARKER"])
    services.job_submit_sweep(scenario=Scenario.objects.get(pk=scenario_pk),
                              user=get_user_model().objects.get(pk=user_pk),
                              over=["nic"], chunks=2)


if __name__ == "__main__":
    if sys.argv[1:2] != ["submit-sweep"] or len(sys.argv) != 4:
        sys.exit("usage: python -m tests.crash_at submit-sweep SCENARIO_ID USER_ID")
    _submit_sweep(sys.argv[2], sys.argv[3])

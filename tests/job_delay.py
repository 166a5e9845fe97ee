"""Hold jobs in the running state before the engine starts, so tests can kill or cancel a job
that is verifiably running (a test hook; production code carries none).

The seam is the engine call the runner makes: ``designer.bridge.run_simulation``,
``run_compare`` and ``run_sweep_chunk`` (the runner looks them up on ``designer.bridge`` at
call time). :func:`install` wraps each so it first waits ``seconds``, reporting progress through
the runner's own callback, which keeps honouring cancellation and the worker's time limits.

- In the test process: ``job_delay.install(30.0, setattr=monkeypatch.setattr)``.
- In a real worker: ``celery_worker(FABRICSCOPE_TEST_JOB_DELAY=60)`` starts the worker with
  ``-A tests.worker_app:app``, which installs the delay when that variable is set.
"""
from __future__ import annotations

import functools
import time

from designer import bridge

__all__ = ["ENGINE_CALLS", "hold", "install"]

ENGINE_CALLS = ("run_simulation", "run_compare", "run_sweep_chunk")


def hold(seconds: float, progress) -> None:
    """Wait ``seconds`` (s), calling ``progress(fraction, message)`` every 0.05 s.

    The fraction stays below 0.01, so the bar barely moves; ``progress`` raises
    ``JobCancelled`` once the run was cancelled or superseded, which ends the wait.
    """
    start = time.monotonic()
    while (elapsed := time.monotonic() - start) < seconds:
        progress(0.01 * elapsed / seconds, "test delay before the engine starts")
        time.sleep(0.05)


def _delayed(call, seconds: float):
    @functools.wraps(call)
    def wrapper(*args, **kwargs):
        hold(seconds, kwargs["progress"] if "progress" in kwargs else args[-1])
        return call(*args, **kwargs)
    return wrapper


def install(seconds: float, *, setattr=setattr) -> None:
    """Make every engine call of the runner wait ``seconds`` (s) first.

    ``setattr`` is ``monkeypatch.setattr`` in a test (undone at teardown); the plain builtin in
    a worker process, which lives only as long as the test that started it.
    """
    for name in ENGINE_CALLS:
        setattr(bridge, name, _delayed(getattr(bridge, name), seconds))

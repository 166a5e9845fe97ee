"""The Celery app the tests' real workers run (``celery -A tests.worker_app:app``).

It is the production app (``designer.celery.app``) unchanged, plus two test hooks, both off
unless the worker's environment sets them:

- ``FABRICSCOPE_TEST_JOB_DELAY`` (seconds): every job and sweep chunk waits that long in the
  running state before the engine starts (:mod:`tests.job_delay`). Installed here, at import, so
  the prefork pool's children inherit it.
- ``FABRICSCOPE_TEST_CRASH_AT`` (a point of :data:`tests.crash_at.POINTS`) with
  ``FABRICSCOPE_TEST_CRASH_MARKER`` (a file path): a pool process dies once at that point
  (:mod:`tests.crash_at`). Installed in each pool process as it starts (the services it wraps
  need Django set up), never in beat's process, which hosts the rescuing reaper.
"""
from __future__ import annotations

import os

from celery.signals import worker_process_init

from designer.celery import app
from tests import crash_at, job_delay

__all__ = ["app"]

_DELAY = float(os.environ.get("FABRICSCOPE_TEST_JOB_DELAY") or 0)
if _DELAY > 0:
    job_delay.install(_DELAY)

_CRASH_AT = os.environ.get("FABRICSCOPE_TEST_CRASH_AT", "")
if _CRASH_AT:
    _MARKER = os.environ["FABRICSCOPE_TEST_CRASH_MARKER"]  # required: the crash fires once

    @worker_process_init.connect(weak=False)
    def _install_crash(**_):
        crash_at.install(_CRASH_AT, _MARKER)

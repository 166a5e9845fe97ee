"""Celery worker signal handlers (connected by :class:`designer.ops.apps.OpsConfig`).

- ``worker_process_init``: each pool process caps its address space (``RLIMIT_AS``).
- ``task_prerun``/``task_postrun``: the request id sent in the message headers by the submitting
  web request (``services.queue._send``) goes into every log line of the task, and into the headers of
  the chunks a sweep publishes; the task's start and end are logged with its duration. A job
  re-queued by the reaper after a worker loss runs without it (``request_id=-``); its job id
  links the lines.
"""
from __future__ import annotations

import logging
import time

from celery.signals import task_postrun, task_prerun, worker_process_init

from designer.ops import limits
from designer.ops.logs import request_id_var

logger = logging.getLogger("designer.ops.worker")

_started: dict[str, tuple[float, object]] = {}


@worker_process_init.connect
def _limit_memory(**kwargs) -> None:
    applied = limits.apply_memory_limit()
    if applied:
        logger.info("pool process memory limit %d MiB (RLIMIT_AS)", applied // (1024 * 1024))


@worker_process_init.connect
def _warm_engine(**kwargs) -> None:
    # A cold numba cache costs a first job seconds of compilation; pay it before any job arrives.
    from designer import bridge

    started = time.monotonic()
    bridge.warm_up()
    logger.info("engine kernels ready in %.1f s", time.monotonic() - started)


def task_request_id(task) -> str:
    """The request id the web request sent with this task's message ('' when none)."""
    request = getattr(task, "request", None)
    value = getattr(request, "request_id", None)
    if not value:
        value = (getattr(request, "headers", None) or {}).get("request_id")
    return str(value or "")


def _level(task) -> int:
    # The reaper runs every few seconds: its start/end lines would drown the job lines.
    return logging.INFO if task is not None and task.name in _JOB_TASKS else logging.DEBUG


_JOB_TASKS = {"designer.tasks.job_run", "designer.tasks.sweep_chunk_run"}


@task_prerun.connect
def _task_started(task_id=None, task=None, args=None, **kwargs) -> None:
    token = request_id_var.set(task_request_id(task))
    _started[task_id] = (time.monotonic(), token)
    logger.log(_level(task), "task %s started", task.name,
               extra={"task_id": task_id, "task_args": list(args or [])})


@task_postrun.connect
def _task_finished(task_id=None, task=None, state=None, **kwargs) -> None:
    start, token = _started.pop(task_id, (time.monotonic(), None))
    logger.log(_level(task), "task %s finished", task.name, extra={
        "task_id": task_id, "celery_state": state,
        "duration_ms": round((time.monotonic() - start) * 1000, 1)})
    if token is not None:
        request_id_var.reset(token)

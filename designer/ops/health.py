"""Probes. ``/healthz``: the process answers (no dependency is touched; for liveness).
``/readyz``: database and broker reachable, with per-dependency status and latency; 503 when
any is not (for readiness: a load balancer stops sending traffic, nothing is restarted).
"""
from __future__ import annotations

import logging
import time

from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache

__all__ = ["healthz", "readyz", "check_database", "check_broker"]


logger = logging.getLogger("designer.ops.health")


@never_cache
def healthz(request):
    return JsonResponse({"status": "ok"})


def _timed(probe) -> dict:
    start = time.perf_counter()
    try:
        probe()
    except Exception as exc:
        # Only the exception's class: its text can name hosts and users, and /readyz is public.
        # The full error goes to the log for operators.
        logger.warning("readiness probe failed: %s", exc)
        return {"ok": False, "latency_ms": _ms(start), "error": type(exc).__name__}
    return {"ok": True, "latency_ms": _ms(start)}


def _ms(start: float) -> float:
    return round((time.perf_counter() - start) * 1000, 2)


def check_database() -> dict:
    def probe():
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    return _timed(probe)


def check_broker() -> dict:
    from designer.ops import broker

    return _timed(broker.ping)


@never_cache
def readyz(request):
    checks = {"database": check_database(), "broker": check_broker()}
    ready = all(c["ok"] for c in checks.values())
    return JsonResponse({"status": "ready" if ready else "not ready", "checks": checks},
                        status=200 if ready else 503)

"""Prometheus metrics in the text exposition format (0.0.4), implemented here (no dependency).

Counted in the serving process (under gunicorn each worker process has its own counters; a
scrape reaches one of them, so read rates, or run one web process per scrape target):
  ``fabricscope_http_requests_total{method,route,status}``        counter
  ``fabricscope_http_request_duration_seconds{method,route}``     histogram
Computed at scrape time from the database and Redis (the same for every process):
  ``fabricscope_jobs{state}``                                      gauge, jobs by state
  ``fabricscope_job_duration_seconds{kind}``                       histogram of finished runs
  ``fabricscope_queue_depth{queue}``                               gauge, Redis LLEN of the queue
  ``fabricscope_broker_up`` / ``fabricscope_database_up``          gauges, 1 or 0

Access: see :func:`metrics_allowed` (loopback only, or a bearer token when
``FABRICSCOPE_METRICS_TOKEN`` is set).
"""
from __future__ import annotations

import hmac
import ipaddress
import logging
import math
import threading
from collections import defaultdict

from django.conf import settings
from django.db.models import Count, DurationField, ExpressionWrapper, F, Q, Sum
from django.http import HttpResponse, JsonResponse

__all__ = ["observe_request", "render", "metrics_allowed", "metrics_view",
           "REQUEST_BUCKETS", "JOB_BUCKETS"]

logger = logging.getLogger(__name__)

REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
JOB_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

_lock = threading.Lock()
_requests: dict[tuple[str, str, str], int] = defaultdict(int)
# (method, route) -> [bucket counts..., +Inf count], sum
_latency: dict[tuple[str, str], list] = {}


def observe_request(method: str, route: str, status: int, seconds: float) -> None:
    """Count one finished request and its latency."""
    with _lock:
        _requests[(method, route, str(status))] += 1
        hist = _latency.setdefault((method, route), [[0] * (len(REQUEST_BUCKETS) + 1), 0.0])
        for i, bound in enumerate(REQUEST_BUCKETS):
            if seconds <= bound:
                hist[0][i] += 1
        hist[0][-1] += 1
        hist[1] += seconds


def _esc(value) -> str:
    return str(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(**labels) -> str:
    inner = ",".join(f'{k}="{_esc(v)}"' for k, v in labels.items())
    return "{" + inner + "}" if inner else ""


def _num(value: float) -> str:
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    return repr(float(value)) if isinstance(value, float) else str(value)


def _histogram(lines: list[str], name: str, buckets, counts, total, labels: dict) -> None:
    for bound, count in zip(buckets, counts):
        lines.append(f"{name}_bucket{_labels(**labels, le=_num(float(bound)))} {count}")
    lines.append(f"{name}_bucket{_labels(**labels, le='+Inf')} {counts[-1]}")
    lines.append(f"{name}_sum{_labels(**labels)} {_num(float(total))}")
    lines.append(f"{name}_count{_labels(**labels)} {counts[-1]}")


def _request_lines() -> list[str]:
    with _lock:
        requests = dict(_requests)
        latency = {k: ([*v[0]], v[1]) for k, v in _latency.items()}
    lines = ["# HELP fabricscope_http_requests_total HTTP requests by method, route and status "
             "(this process).", "# TYPE fabricscope_http_requests_total counter"]
    for (method, route, status), n in sorted(requests.items()):
        lines.append(f"fabricscope_http_requests_total"
                     f"{_labels(method=method, route=route, status=status)} {n}")
    lines += ["# HELP fabricscope_http_request_duration_seconds HTTP request latency "
              "(this process).", "# TYPE fabricscope_http_request_duration_seconds histogram"]
    for (method, route), (counts, total) in sorted(latency.items()):
        _histogram(lines, "fabricscope_http_request_duration_seconds", REQUEST_BUCKETS, counts,
                   total, {"method": method, "route": route})
    return lines


def _job_lines() -> list[str]:
    from designer.choices import JobState
    from designer.models import SimulationJob

    by_state = dict(SimulationJob.objects.order_by().values_list("state")
                    .annotate(n=Count("pk")))
    lines = ["# HELP fabricscope_jobs Simulation jobs by state (database, at scrape time).",
             "# TYPE fabricscope_jobs gauge"]
    lines += [f"fabricscope_jobs{_labels(state=s)} {by_state.get(s, 0)}" for s in JobState.values]
    duration = ExpressionWrapper(F("finished_at") - F("started_at"), output_field=DurationField())
    finished = (SimulationJob.objects.order_by()
                .filter(state__in=[JobState.SUCCEEDED, JobState.FAILED],
                        started_at__isnull=False, finished_at__isnull=False)
                .annotate(d=duration))
    aggregates = {f"b{i}": Count("pk", filter=Q(d__lte=_seconds(b)))
                  for i, b in enumerate(JOB_BUCKETS)}
    rows = finished.values("kind").annotate(n=Count("pk"), total=Sum("d"), **aggregates)
    lines += ["# HELP fabricscope_job_duration_seconds Run time of finished jobs "
              "(started to finished; database, at scrape time).",
              "# TYPE fabricscope_job_duration_seconds histogram"]
    for row in sorted(rows, key=lambda r: r["kind"]):
        counts = [row[f"b{i}"] for i in range(len(JOB_BUCKETS))] + [row["n"]]
        total = row["total"].total_seconds() if row["total"] else 0.0
        _histogram(lines, "fabricscope_job_duration_seconds", JOB_BUCKETS, counts, total,
                   {"kind": row["kind"]})
    return lines


def _seconds(value: float):
    from datetime import timedelta

    return timedelta(seconds=value)


def _broker_lines() -> list[str]:
    from designer.ops import broker

    queue = broker.queue_name()
    lines = ["# HELP fabricscope_broker_up 1 when the broker (Redis) answered this scrape.",
             "# TYPE fabricscope_broker_up gauge"]
    try:
        depth = broker.queue_depth(queue)
    except Exception as exc:
        logger.warning("metrics: broker unreachable: %s", exc)
        return lines + ["fabricscope_broker_up 0"]
    return lines + ["fabricscope_broker_up 1",
                    "# HELP fabricscope_queue_depth Messages waiting in the Celery queue.",
                    "# TYPE fabricscope_queue_depth gauge",
                    f"fabricscope_queue_depth{_labels(queue=queue)} {depth}"]


def render() -> str:
    """The whole exposition text."""
    lines = _request_lines()
    db = ["# HELP fabricscope_database_up 1 when the database answered this scrape.",
          "# TYPE fabricscope_database_up gauge"]
    try:
        job_lines = _job_lines()
        db.append("fabricscope_database_up 1")
    except Exception as exc:
        logger.warning("metrics: database unreachable: %s", exc)
        job_lines = []
        db.append("fabricscope_database_up 0")
    return "\n".join([*lines, *db, *job_lines, *_broker_lines()]) + "\n"


def metrics_allowed(request) -> bool:
    """``FABRICSCOPE_METRICS_TOKEN`` set: only ``Authorization: Bearer <token>``. Unset: only
    direct loopback clients (no ``X-Forwarded-For``: behind a proxy every client looks local)."""
    token = getattr(settings, "FABRICSCOPE_METRICS_TOKEN", "")
    if token:
        given = request.META.get("HTTP_AUTHORIZATION", "")
        return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())
    if request.META.get("HTTP_X_FORWARDED_FOR"):
        return False
    try:
        return ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
    except ValueError:
        return False


def metrics_view(request):
    if not metrics_allowed(request):
        return JsonResponse({"error": {
            "code": "forbidden", "details": [],
            "message": "metrics are served to loopback clients, or with "
                       "'Authorization: Bearer <FABRICSCOPE_METRICS_TOKEN>'"}}, status=403)
    return HttpResponse(render(), content_type=CONTENT_TYPE)

"""Probe and metrics routes, included at the site root (``/healthz``, ``/readyz``, ``/metrics``)."""
from django.urls import path

from designer.ops import health, metrics

urlpatterns = [
    path("healthz", health.healthz, name="healthz"),
    path("readyz", health.readyz, name="readyz"),
    path("metrics", metrics.metrics_view, name="metrics"),
]

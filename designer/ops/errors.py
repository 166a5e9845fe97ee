"""Errors raised by services when the system, not the input, refuses a request.

They subclass DRF's ``APIException`` so the API's one error shape
(``{"error": {"code", "message", "details"}}``) and status come out of
``api.exception_handlers`` unchanged; :class:`designer.ops.middleware.RequestIdMiddleware`
turns them into a clear page on the HTML side.
"""
from __future__ import annotations

from rest_framework.exceptions import APIException

__all__ = ["ServiceRefused", "BrokerUnavailable", "TooManyJobs", "QuotaExceeded", "BuildTooLarge",
           "BuildRateExceeded"]


class ServiceRefused(APIException):
    """Base: a request refused for an operational reason (``details`` is a dict)."""

    status_code = 503
    default_code = "unavailable"

    def __init__(self, message: str, *, details: dict | None = None):
        super().__init__(detail=message, code=self.default_code)
        self.message = message
        self.details = details or {}

    def __str__(self) -> str:
        return self.message


class BrokerUnavailable(ServiceRefused):
    """The job queue (Redis) cannot be reached: the job was not accepted (HTTP 503)."""

    status_code = 503
    default_code = "broker_unavailable"


class TooManyJobs(ServiceRefused):
    """The user already has the allowed number of queued + running jobs (HTTP 429)."""

    status_code = 429
    default_code = "too_many_jobs"


class QuotaExceeded(ServiceRefused):
    """A per-user quota (topologies, stored bytes) would be exceeded (HTTP 403; designer.ops.limits)."""

    status_code = 403
    default_code = "quota_exceeded"


class BuildTooLarge(ServiceRefused):
    """One build request would generate more elements than allowed per request (HTTP 400)."""

    status_code = 400
    default_code = "build_too_large"


class BuildRateExceeded(ServiceRefused):
    """The user's build budget for this minute is spent (HTTP 429, ``retry_after_s``)."""

    status_code = 429
    default_code = "build_rate_exceeded"

"""Errors raised by services when the system, not the input, refuses a request.

They subclass DRF's ``APIException`` so the API's one error shape
(``{"error": {"code", "message", "details"}}``) and status come out of
``api.exception_handlers`` unchanged; :class:`designer.ops.middleware.RequestIdMiddleware`
turns them into a clear page on the HTML side.
"""
from __future__ import annotations

from rest_framework.exceptions import APIException

__all__ = ["ServiceRefused", "BrokerUnavailable", "TooManyJobs"]


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

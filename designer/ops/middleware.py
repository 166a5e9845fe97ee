"""Request id, access log and request metrics for every request; a clear page when the system
refuses a page request (broker down, too many jobs).

Put :class:`RequestIdMiddleware` first in ``MIDDLEWARE`` so it times and ids everything.
"""
from __future__ import annotations

import logging
import re
import time

from django.http import HttpResponse
from django.template.loader import render_to_string

from designer.ops import metrics
from designer.ops.errors import ServiceRefused
from designer.ops.logs import clean_request_id, request_id_var

__all__ = ["RequestIdMiddleware", "HEADER"]

HEADER = "X-Request-ID"
access_logger = logging.getLogger("designer.ops.access")
# Probes and scrapes arrive every few seconds: logged at DEBUG so they do not drown real traffic.
_QUIET = {"/healthz", "/readyz", "/metrics"}
# Share-link tokens are bearer secrets (stored only hashed): never write them to the logs.
_SHARE_TOKEN = re.compile(r"^/s/[^/]+")


def _log_path(path: str) -> str:
    return _SHARE_TOKEN.sub("/s/<token>", path)


class RequestIdMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        request_id = clean_request_id(request.META.get("HTTP_X_REQUEST_ID"))
        request.request_id = request_id
        token = request_id_var.set(request_id)
        start = time.perf_counter()
        try:
            response = self.get_response(request)
            response[HEADER] = request_id
            self._record(request, response.status_code, time.perf_counter() - start)
            return response
        except Exception:
            self._record(request, 500, time.perf_counter() - start)
            raise
        finally:
            request_id_var.reset(token)

    def process_exception(self, request, exception):
        """Pages (not the API, whose handler has its own shape) explain a refusal in words."""
        if not isinstance(exception, ServiceRefused) or request.path.startswith("/api/"):
            return None
        access_logger.warning("refused: %s", exception, extra={"code": exception.default_code})
        html = render_to_string("ops/refused.html", {
            "message": exception.message, "code": exception.default_code,
            "back": request.META.get("HTTP_REFERER") or request.path}, request=request)
        response = HttpResponse(html, status=exception.status_code)
        if retry := exception.details.get("retry_after_s"):
            response["Retry-After"] = str(retry)
        return response

    @staticmethod
    def _record(request, status: int, seconds: float) -> None:
        match = getattr(request, "resolver_match", None)
        route = match.route if match is not None and match.route else "<unmatched>"
        metrics.observe_request(request.method, route, status, seconds)
        level = logging.DEBUG if request.path in _QUIET else logging.INFO
        path = _log_path(request.path)
        access_logger.log(level, "%s %s %s", request.method, path, status, extra={
            "method": request.method, "path": path, "route": route, "status": status,
            "duration_ms": round(seconds * 1000, 1),
            "user": getattr(getattr(request, "user", None), "pk", None)})

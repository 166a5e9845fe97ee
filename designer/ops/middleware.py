"""Request id, access log and request metrics for every request; a clear page when the system
refuses a page request (broker down, too many jobs); one request-body limit for pages and API;
security headers on every response.

Put :class:`RequestIdMiddleware` first in ``MIDDLEWARE`` so it times and ids everything, then
:class:`SecurityHeadersMiddleware`; :class:`BodyLimitMiddleware` last (it still answers before any
``process_view`` hook or view reads the body, and its 413 gets every other middleware's headers).
"""
from __future__ import annotations

import logging
import re
import threading
import time

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

from designer.ops import metrics
from designer.ops.errors import ServiceRefused
from designer.ops.logs import clean_request_id, request_id_var

__all__ = ["RequestIdMiddleware", "BodyLimitMiddleware", "SecurityHeadersMiddleware", "HEADER",
           "payload_too_large"]

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


def payload_too_large(size: int | None, limit: int) -> JsonResponse:
    """The documented 413: ``{"error": {"code", "message", "details": {limit_bytes, size_bytes}}}``."""
    shown = f"{size:,} bytes" if size is not None else "the request body"
    message = (f"{shown} is over the limit of {limit:,} bytes per request "
               "(FABRICSCOPE_MAX_BODY_BYTES)")
    return JsonResponse({"error": {"code": "payload_too_large", "message": message,
                                   "details": {"limit_bytes": limit, "size_bytes": size}}},
                        status=413)


class BodyLimitMiddleware:
    """One body limit for every request, API and pages: ``FABRICSCOPE_MAX_BODY_BYTES``.

    Checked from ``Content-Length`` before any middleware or view reads the body, so an
    oversized request costs nothing and every one gets the same 413 (Django's own check, with
    ``DATA_UPLOAD_MAX_MEMORY_SIZE`` set to the same number, answered a bare 400 on pages and a
    413 without ``details`` in the API). Without a usable ``Content-Length`` Django reads at most
    that many bytes anyway (``LimitedStream``).
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        limit = settings.FABRICSCOPE_MAX_BODY_BYTES
        raw = request.META.get("CONTENT_LENGTH") or ""
        size = int(raw) if raw.isascii() and raw.isdigit() and len(raw) < 20 else None
        if size is not None and size > limit:
            return payload_too_large(size, limit)
        if size is None or size <= settings.FABRICSCOPE_LARGE_BODY_BYTES:
            return self.get_response(request)
        # A large body: one at a time in this process (its threads share the memory it takes).
        if not LARGE_BODY_GATE.acquire(blocking=False):
            return large_body_busy(size)
        try:
            return self.get_response(request)
        finally:
            LARGE_BODY_GATE.release()


# One large body at a time per web process (FABRICSCOPE_LARGE_BODY_BYTES).
LARGE_BODY_GATE = threading.Semaphore(1)


def large_body_busy(size: int) -> JsonResponse:
    """The 503 of a large body while this process already handles one."""
    limit = settings.FABRICSCOPE_LARGE_BODY_BYTES
    response = JsonResponse({"error": {"code": "busy_with_large_body", "message": (
        f"this server process is already handling a request body over {limit:,} bytes "
        "(FABRICSCOPE_LARGE_BODY_BYTES); one such body at a time per process: retry in a few seconds"),
        "details": {"size_bytes": size, "large_body_bytes": limit}}}, status=503)
    response["Retry-After"] = "2"
    return response


class SecurityHeadersMiddleware:
    """Content-Security-Policy on every response.

    Django's ``SecurityMiddleware`` and ``XFrameOptionsMiddleware`` already send
    ``X-Content-Type-Options: nosniff``, ``Referrer-Policy``, ``Cross-Origin-Opener-Policy`` and
    ``X-Frame-Options: DENY`` (settings ``SECURE_*``, ``X_FRAME_OPTIONS``); this adds the one
    header Django 5.2 has no setting for.
    The policy (``FABRICSCOPE_CSP``) allows scripts from this origin only — the templates have
    no inline script or event handler; data for scripts travels in ``json_script`` blocks, which
    are not executed — and inline styles (Plotly and Cytoscape set ``style`` attributes).
    ``FABRICSCOPE_CSP_RELAXED_PATHS`` (the Swagger UI and Redoc pages, whose drf-spectacular
    templates start the viewer from an inline script) get ``FABRICSCOPE_CSP_RELAXED``.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        relaxed = request.path.startswith(tuple(settings.FABRICSCOPE_CSP_RELAXED_PATHS))
        policy = settings.FABRICSCOPE_CSP_RELAXED if relaxed else settings.FABRICSCOPE_CSP
        response.headers.setdefault("Content-Security-Policy", policy)
        return response

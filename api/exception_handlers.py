"""One error shape for the whole API: ``{"error": {"code", "message", "details"}}``.

``details`` is a list of ``{"path", "message"}`` for input problems (engine problems keep their
document location, prefixed by the request field that held the document, e.g.
``document.links[3].b``), and an object for other errors (``{"current_revision": 7}`` on a
revision conflict, ``{"retry_after": 12}`` when throttled).

:func:`api_exception_handler` is DRF's ``EXCEPTION_HANDLER``; :func:`handler404` /
:func:`handler500` are Django handlers that answer JSON under ``/api/`` and defer to Django's
default pages elsewhere (the root URLconf may point ``handler404``/``handler500`` at them);
:func:`not_found_view` is the catch-all at the end of ``api/urls.py``.
"""
from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import Http404, JsonResponse
from django.urls import Resolver404, resolve
from django.views import defaults
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions, status
from rest_framework.response import Response

from designer.bridge.results import DamagedResult
from designer.exceptions import EngineValidationError, IllegalTransition, RevisionConflict

__all__ = ["ApiError", "PayloadTooLarge", "api_exception_handler", "error_body", "handler404",
           "handler500", "not_found_view", "flatten_errors"]

logger = logging.getLogger(__name__)


class ApiError(exceptions.APIException):
    """An API error with an explicit code, status and details (409s, 501s…)."""

    def __init__(self, *, status_code: int, code: str, message: str, details: Any = None):
        super().__init__(detail=message, code=code)
        self.status_code = status_code
        self.error_code = code
        self.message = message
        self.details = details


class PayloadTooLarge(exceptions.APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_code = "payload_too_large"

    def __init__(self, *, size: int | None, limit: int):
        shown = f"{size} bytes" if size is not None else "the request body"
        super().__init__(f"{shown} is over the limit of {limit} bytes per request "
                         f"(FABRICSCOPE_MAX_BODY_BYTES)")
        self.details = {"limit_bytes": limit, "size_bytes": size}


def error_body(code: str, message: str, details: Any = None) -> dict:
    return {"error": {"code": code, "message": message,
                      "details": [] if details is None else details}}


def flatten_errors(errors: Any, prefix: str = "") -> list[dict]:
    """DRF/Django nested error structures as ``[{"path": "a.b[2]", "message": ...}]``."""
    if isinstance(errors, dict):
        out = []
        for key, value in errors.items():
            if isinstance(key, int):  # ListField/DictField errors are keyed by index
                out += flatten_errors(value, f"{prefix}[{key}]")
                continue
            key = "" if key in ("non_field_errors", "__all__") else str(key)
            out += flatten_errors(value, _join(prefix, key))
        return out
    if isinstance(errors, (list, tuple)):
        if all(not isinstance(e, (dict, list, tuple)) for e in errors):
            return [{"path": prefix, "message": str(e)} for e in errors]
        out = []
        for i, value in enumerate(errors):
            if value:  # DRF lists one (possibly empty) entry per list item
                out += flatten_errors(value, f"{prefix}[{i}]")
        return out
    return [{"path": prefix, "message": str(errors)}]


def _join(prefix: str, key: str) -> str:
    if not prefix:
        return key
    return f"{prefix}.{key}" if key else prefix


def _engine_details(exc: EngineValidationError) -> list[dict]:
    field = next(iter(exc.error_dict), None) if hasattr(exc, "error_dict") else None
    field = getattr(exc, "api_field", None) or field
    return [{"path": _join(field or "", d.get("path") or ""), "message": d["message"]}
            for d in exc.details] or [{"path": field or "", "message": exc.engine_message}]


def _translate(exc: Exception) -> tuple[int, dict, dict]:
    """(status, body, headers) for a known exception; raises LookupError for unknown ones."""
    if isinstance(exc, EngineValidationError):
        return 400, error_body(exc.engine_code, exc.engine_message, _engine_details(exc)), {}
    if isinstance(exc, DjangoValidationError):
        errors = exc.message_dict if hasattr(exc, "error_dict") else exc.messages
        return 400, error_body("invalid", "the input is invalid", flatten_errors(errors)), {}
    if isinstance(exc, RevisionConflict):
        return 409, error_body("conflict", str(exc), {
            "current_revision": exc.current_number, "base_revision": exc.base_number}), {}
    if isinstance(exc, IllegalTransition):
        return 409, error_body("conflict", str(exc), {"state": exc.old}), {}
    if isinstance(exc, DamagedResult):  # the stored body does not decode: the data, not the request
        logger.error("damaged stored result: %s", exc)
        return 409, error_body("result_damaged", str(exc)), {}
    if isinstance(exc, (RequestDataTooBig, TooManyFieldsSent)):
        return 413, error_body("payload_too_large", str(exc) or "request body too large", {
            "limit_bytes": settings.FABRICSCOPE_MAX_BODY_BYTES, "size_bytes": None}), {}
    if isinstance(exc, TooManyFilesSent):   # a multipart upload of more files than Django reads
        limit = settings.DATA_UPLOAD_MAX_NUMBER_FILES
        return 400, error_body("too_many_files", f"more than {limit} files in one request", [
            {"path": "", "message": f"at most {limit} files per request (DATA_UPLOAD_MAX_NUMBER_FILES)"}]), {}
    if isinstance(exc, Http404):
        return 404, error_body("not_found", str(exc) or "not found"), {}
    if isinstance(exc, DjangoPermissionDenied):
        return 403, error_body("permission_denied", str(exc) or "permission denied"), {}
    if isinstance(exc, ApiError):
        return exc.status_code, error_body(exc.error_code, exc.message, exc.details), {}
    if isinstance(exc, exceptions.APIException):
        return _translate_drf(exc)
    raise LookupError(type(exc).__name__)


def _translate_drf(exc: exceptions.APIException) -> tuple[int, dict, dict]:
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if isinstance(exc, exceptions.ValidationError):
        return 400, error_body("invalid", "the input is invalid", flatten_errors(exc.detail)), {}
    details: Any = getattr(exc, "details", None)
    if isinstance(exc, exceptions.Throttled):
        details = {"retry_after": exc.wait and int(exc.wait + 0.999)}
        if exc.wait is not None:
            headers["Retry-After"] = str(int(exc.wait + 0.999))
    elif isinstance(details, dict) and details.get("retry_after_s"):
        # Operational refusals (broker down: 503, too many active jobs: 429) say when to retry
        # in the body; the header lets generic HTTP clients back off too (RFC 9110 §10.2.3).
        headers["Retry-After"] = str(details["retry_after_s"])
    code = exc.get_codes() if isinstance(exc.get_codes(), str) else exc.default_code
    return exc.status_code, error_body(code, str(exc.detail), details), headers


def api_exception_handler(exc: Exception, context: dict) -> Response:
    """DRF exception handler: every error, including unexpected ones, in the one shape."""
    if isinstance(exc, (exceptions.NotAuthenticated, exceptions.AuthenticationFailed)):
        request = context.get("request")
        view = context.get("view")
        header = view.get_authenticate_header(request) if view and request else None
        exc.auth_header = header
        if header:
            exc.status_code = 401
    try:
        code, body, headers = _translate(exc)
    except LookupError:
        logger.exception("unhandled error in API view %s", context.get("view"))
        code, body, headers = 500, error_body("server_error", "internal server error; the "
                                              "administrators can find it in the logs"), {}
    return Response(body, status=code, headers=headers)


def _is_api(request) -> bool:
    return request.path.startswith("/api/")


def handler404(request, exception=None):
    """Django 404 handler: JSON under /api/, Django's page elsewhere."""
    if not _is_api(request):
        return defaults.page_not_found(request, exception)
    return JsonResponse(error_body("not_found", f"no API endpoint at {request.path}"), status=404)


def handler500(request):
    """Django 500 handler: JSON under /api/, Django's page elsewhere."""
    if not _is_api(request):
        return defaults.server_error(request)
    return JsonResponse(error_body("server_error", "internal server error"), status=500)


@csrf_exempt  # else a POST with a session cookie got Django's HTML 403 instead of the JSON 404
def not_found_view(request, *args, **kwargs):
    """Catch-all for unknown ``/api/v1/`` paths: a JSON 404, with a hint for a missing slash."""
    message = f"no API endpoint at {request.path}"
    if not request.path.endswith("/"):
        try:
            match = resolve(request.path + "/")
        except Resolver404:
            match = None
        if match is not None and match.func is not not_found_view:
            message += f"; did you mean {request.path}/ (API paths end with a slash)?"
    return JsonResponse(error_body("not_found", message), status=404)

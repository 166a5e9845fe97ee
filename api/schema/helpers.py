"""Building blocks of the endpoint docs: error responses with examples, and examples.

Every error the API answers has the one shape ``{"error": {"code", "message", "details"}}``
(:mod:`api.exception_handlers`); :func:`errors` documents a status with that shape and one
example per ``code`` the endpoint can give for it. 401 (no or bad credentials) and 429 (rate
limit) can happen anywhere, so every operation lists them.
"""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse

from api.serializers import ErrorSerializer

__all__ = ["errors", "example", "id_query", "LIST_ERRORS", "retry_after"]

# status -> (description, [(code, message, details), ...]); the first example is the usual one.
_ERRORS = {
    400: ("invalid input; details locate each problem (a request field, a query parameter "
          "such as page, or a path in a document)", [
              ("invalid_topology", "invalid topology document: 1 problem",
               [{"path": "document.links[0].b", "message": 'unknown node "h0/nic9"'}]),
              ("invalid", "the input is invalid",
               [{"path": "page", "message": "must be an integer from 1 to 2147483647"}])]),
    401: ("not authenticated, or a share-link token that is unknown, revoked, expired or "
          "empty (refused even next to a valid bearer token)", [
              ("not_authenticated", "Authentication credentials were not provided.", []),
              ("invalid_share_link", "this share link does not exist, has expired or was "
                                     "revoked", []),
              ("token_expired", "token expired on 2026-04-05 10:00 UTC: create a new one "
                                "(profile page, or manage.py api_token create)", [])]),
    403: ("authenticated but not allowed (a share link is read-only, and so is an API token "
          "with the read scope)", [
        ("permission_denied", "you may view this topology but not change it", []),
        ("insufficient_scope", "this API token ('ci', fsk_Ab12Cd34…) has the read scope: it "
                               "may GET, HEAD and OPTIONS only, not POST; use a token with the "
                               "write scope", [])]),
    404: ("no such object, or not yours; on lists, a page past the last one", [
        ("not_found", "no such topology", []),
        ("not_found", "page 3 is past the last page (2)", {"last_page": 2})]),
    405: ("method not allowed", [("method_not_allowed", 'Method "PUT" not allowed.', [])]),
    409: ("conflict with the current state", [
        ("conflict", "revision conflict: you edited revision 3, but the topology is now at "
                     "revision 4; reload and apply your changes again",
         {"current_revision": 4, "base_revision": 3})]),
    413: ("request body over FABRICSCOPE_API_MAX_BODY_BYTES", [
        ("payload_too_large", "140000000 bytes is over the API limit of 134217728 bytes",
         {"limit_bytes": 134217728, "size_bytes": 140000000})]),
    415: ("unsupported Content-Type", [
        ("unsupported_media_type", 'Unsupported media type "text/plain" in request.', [])]),
    429: ("rate limit exceeded (Retry-After says when to try again)", [
        ("throttled", "Request was throttled.", {"retry_after": 12})]),
    503: ("the job queue (Redis) is unreachable: nothing was queued; Retry-After says when to "
          "try again", [
              ("broker_unavailable", "the job queue is unreachable, so the job was not accepted "
                                     "(nothing was queued); try again in a minute",
               {"reason": "ConnectionError: Error 111 connecting to 127.0.0.1:6379.",
                "retry_after_s": 30})]),
}

# Extra examples of a status for the endpoints that can give them.
TOO_MANY_JOBS = ("too_many_jobs", "you already have 4 jobs queued or running (limit 4 per "
                                  "user); wait for one to finish or cancel one, then submit again",
                 {"active": 4, "limit": 4, "retry_after_s": 10})
EXPORT_TOO_LARGE = ("export_too_large", "format=graphml: revision 2 has 45568 nodes and links; the API "
                                        "exports at most 12000 as GraphML (GRAPHML_MAX_ELEMENTS): export it "
                                        "as JSON (format=json) and run `python -m designer.engine export "
                                        "<document.json> --format graphml -o <file>`, which does the same "
                                        "export offline",
                    {"path": "format", "elements": 45568, "limit_elements": 12000,
                     "command": "python -m designer.engine export <document.json> --format graphml -o <file>"})
_EXTRA = {"job_submit": {429: [TOO_MANY_JOBS]},
          "job_result": {409: [("job_not_finished", "job 12 is running (40%): no result yet; "
                                "poll the job until it succeeds",
                                {"state": "running", "progress": 40})]}}


# A status that means something else on an endpoint: its description and examples replace the
# general ones (an export is a GET: its 413 is about the answer's size, not the request body).
_REPLACED = {"export": {413: ("the revision has more nodes + links than the API exports as GraphML "
                              "(GRAPHML_MAX_ELEMENTS): export JSON and convert it offline with the "
                              "command in details", [EXPORT_TOO_LARGE])}}


def retry_after(*codes: int) -> OpenApiParameter:
    """The ``Retry-After`` response header (seconds, RFC 9110 §10.2.3) of these statuses."""
    return OpenApiParameter("Retry-After", OpenApiTypes.INT, OpenApiParameter.HEADER,
                            response=list(codes), description="seconds to wait before retrying")


def errors(*codes: int, extra: str = "") -> dict[int, OpenApiResponse]:
    """Error responses (always 401 and 429 too) for ``extend_schema(responses=...)``.

    ``extra`` names a set of additional examples in ``_EXTRA`` (e.g. ``"job_submit"``).
    """
    out = {}
    more = _EXTRA.get(extra, {})
    for code in sorted({*codes, 401, 429}):
        description, cases = _REPLACED.get(extra, {}).get(code) or _ERRORS[code]
        cases = [*cases, *more.get(code, [])]
        out[code] = OpenApiResponse(ErrorSerializer, description=description, examples=[
            OpenApiExample(f"{code} {key}" + (f" ({i})" if i else ""), value={"error": {
                "code": key, "message": message, "details": details}}, response_only=True,
                status_codes=[str(code)])
            for i, (key, message, details) in enumerate(cases)])
    return out


# Lists: a malformed query parameter (400) or a page past the last one (404).
LIST_ERRORS = (400, 404)


def id_query(name: str, description: str, *, maximum: int = 2 ** 63 - 1) -> OpenApiParameter:
    """A query parameter holding a non-negative integer (an id within a bigint by default).

    django-filter's NumberFilter and ``api.views.base.query_int`` read as ``type: number`` or an
    unbounded integer in the schema; this states the range really accepted (anything else is a
    located 400). An empty value means "not given", as for every query parameter here.
    """
    return OpenApiParameter(name, {"type": "integer", "minimum": 0, "maximum": maximum},
                            description=description, allow_blank=True)


def example(name: str, value, *, request: bool = False, status: int = 200,
            description: str = "") -> OpenApiExample:
    if request:
        return OpenApiExample(name, value=value, request_only=True, description=description)
    return OpenApiExample(name, value=value, response_only=True, status_codes=[str(status)],
                          description=description)

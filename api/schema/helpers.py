"""Building blocks of the endpoint docs: error responses with examples, and examples."""
from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, OpenApiResponse

from api.serializers import ErrorSerializer

__all__ = ["errors", "example"]

_ERRORS = {
    400: ("invalid input; details locate each problem", "invalid_topology",
          "invalid topology document: 1 problem",
          [{"path": "document.links[0].b", "message": 'unknown node "h0/nic9"'}]),
    401: ("not authenticated", "not_authenticated",
          "Authentication credentials were not provided.", []),
    403: ("authenticated but not allowed", "permission_denied",
          "you may view this topology but not change it", []),
    404: ("no such object, or not yours", "not_found", "no such topology", []),
    405: ("method not allowed", "method_not_allowed", 'Method "PUT" not allowed.', []),
    409: ("conflict with the current state", "conflict",
          "revision conflict: you edited revision 3, but the topology is now at revision 4; "
          "reload and apply your changes again", {"current_revision": 4, "base_revision": 3}),
    413: ("request body over FABRICSCOPE_API_MAX_BODY_BYTES", "payload_too_large",
          "70000000 bytes is over the API limit of 67108864 bytes", {"limit_bytes": 67108864}),
    415: ("unsupported Content-Type", "unsupported_media_type",
          'Unsupported media type "text/plain" in request.', []),
    429: ("rate limit exceeded", "throttled", "Request was throttled.", {"retry_after": 12}),
    501: ("not available yet", "not_implemented", "figures are not available yet", []),
}


def errors(*codes: int) -> dict[int, OpenApiResponse]:
    """Error responses (always 401 and 429 too) for ``extend_schema(responses=...)``."""
    out = {}
    for code in sorted({*codes, 401, 429}):
        description, key, message, details = _ERRORS[code]
        out[code] = OpenApiResponse(ErrorSerializer, description=description, examples=[
            OpenApiExample(f"{code} {key}", value={"error": {
                "code": key, "message": message, "details": details}}, response_only=True,
                status_codes=[str(code)])])
    return out


def example(name: str, value, *, request: bool = False, status: int = 200,
            description: str = "") -> OpenApiExample:
    if request:
        return OpenApiExample(name, value=value, request_only=True, description=description)
    return OpenApiExample(name, value=value, response_only=True, status_codes=[str(status)],
                          description=description)

"""What every API view shares: :class:`ApiMixin` and the small request helpers.

:class:`ApiMixin` hooks into DRF's request start (``APIView.initial``) without copying it:
two cheap checks run before it, and its throttle check is moved before its permission check.
"""
from __future__ import annotations

from django.conf import settings
from django.http import Http404
from rest_framework.exceptions import ValidationError
from rest_framework.settings import api_settings

from api.authentication import ShareLinkAuthentication
from api.exception_handlers import PayloadTooLarge

__all__ = ["ApiMixin", "MAX_ID", "ID", "valid_data", "body_ref", "query_int"]

MAX_ID = 2 ** 63 - 1  # ids beyond a bigint name nothing; the database would reject the query
ID = r"[0-9]+"


class ApiMixin:
    """Shared by every view: body size limit and sane ids, checked before anything else.

    Share-link tokens are read first (``api.authentication.ShareLinkAuthentication``); views
    that serve shared objects accept such visitors for reads (``IsUserOrShareLinkReader``),
    every other view refuses them (``IsAuthenticatedUser``).
    """

    authentication_classes = [ShareLinkAuthentication,
                              *api_settings.DEFAULT_AUTHENTICATION_CLASSES]

    def initial(self, request, *args, **kwargs):
        """Refuse oversized bodies (413) and out-of-range ids (404), then DRF's own start:
        negotiation, versioning, authentication, throttles and permissions."""
        _check_body_size(request)
        _check_ids(kwargs)
        super().initial(request, *args, **kwargs)

    def check_permissions(self, request):
        """Throttles first, then permissions: DRF checks permissions first, so an anonymous
        flood would be answered 401 forever and never limited."""
        self.check_throttles(request)
        super().check_permissions(request)

    def check_throttles(self, request):
        """Once per request: DRF's ``initial`` asks again after :meth:`check_permissions`, and
        a second check would count every request twice against the rate."""
        if getattr(self, "_throttles_checked", False):
            return
        self._throttles_checked = True
        super().check_throttles(request)


def _check_body_size(request) -> None:
    limit = settings.FABRICSCOPE_API_MAX_BODY_BYTES
    try:
        size = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        size = 0
    if size > limit:
        raise PayloadTooLarge(size=size, limit=limit)


def _check_ids(kwargs: dict) -> None:
    for value in kwargs.values():
        if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
            if int(value) > MAX_ID:
                raise Http404("no such object")


def valid_data(serializer_class, data, **kwargs) -> dict:
    """``serializer_class(data=data, **kwargs)``'s validated data; a 400 when invalid."""
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def body_ref(getter, user, pk: int, field: str):
    """An object named in a request body: a missing or invisible one is a located 400."""
    try:
        return getter(user=user, pk=pk)
    except Http404:
        raise ValidationError({field: [f"no {field} with id {pk}"]}) from None


def query_int(request, name: str, *, default: int) -> int:
    """Query parameter ``name`` as a non-negative int (at most 2**31); a located 400 otherwise."""
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or int(raw) > 2 ** 31:
        raise ValidationError({name: ["must be a non-negative integer"]})
    return int(raw)

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
from designer.params import MAX_ID, MAX_INT32, InvalidParam, int_param

__all__ = ["ApiMixin", "MAX_ID", "ID", "valid_data", "body_ref", "query_int"]

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
    # designer.ops.middleware.BodyLimitMiddleware answers first; kept for views called without
    # the middleware stack (APIRequestFactory in tests).
    limit = settings.FABRICSCOPE_MAX_BODY_BYTES
    try:
        size = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        size = 0
    if size > limit:
        raise PayloadTooLarge(size=size, limit=limit)


def _check_ids(kwargs: dict) -> None:
    # ``<int:...>`` path converters give ints of any size; beyond a bigint they name nothing and
    # the database would reject the query (OverflowError on SQLite, DataError on PostgreSQL).
    for value in kwargs.values():
        if isinstance(value, int) and not isinstance(value, bool) and value > MAX_ID:
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


def query_int(request, name: str, *, default: int, maximum: int = MAX_INT32) -> int:
    """Query parameter ``name`` as an int in ``[0, maximum]`` (``designer.params.int_param``:
    ASCII digits only, ``"²"`` is refused); a located 400 otherwise."""
    try:
        return int_param(request, name, default=default, maximum=maximum)
    except InvalidParam as exc:
        raise ValidationError({name: [exc.message]}) from None

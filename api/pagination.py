"""One pagination style for every API list: page numbers (``?page=2&page_size=100``).

Why not DRF's defaults as they are: DRF answers ``?page=0`` or ``?page=abc`` with a 404 "Invalid
page." and silently ignores ``?page_size=0`` or ``?page_size=abc``. A malformed number is the
client's mistake, so it is a located 400 here (``details[0].path`` is ``page`` or
``page_size``); a well-formed page past the last one stays a 404 (the page does not exist), with
the last page's number in ``details``. ``page_size`` above :attr:`ApiPagination.max_page_size`
is clamped, as DRF does, and says so in the schema. An empty value (``?page=``) is the default,
as for every query parameter of the API.
"""
from __future__ import annotations

from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.pagination import PageNumberPagination

from api.exception_handlers import ApiError

__all__ = ["ApiPagination", "MAX_PAGE"]

MAX_PAGE = 2 ** 31 - 1  # beyond any real list; larger numbers are malformed, not "past the end"


class ApiPagination(PageNumberPagination):
    """``{"count", "next", "previous", "results"}``; 50 per page by default, at most 500."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

    def get_page_size(self, request) -> int:
        raw = request.query_params.get(self.page_size_query_param)
        if not raw:  # absent or empty: the default, like every query parameter of the API
            return self.page_size
        return min(_positive_int(raw, self.page_size_query_param), self.max_page_size)

    def paginate_queryset(self, queryset, request, view=None):
        """DRF's, with a 400 for a malformed ``page`` and a located 404 past the last page."""
        raw = request.query_params.get(self.page_query_param)
        if raw and raw not in self.last_page_strings:
            _positive_int(raw, self.page_query_param)
        try:
            return super().paginate_queryset(queryset, request, view)
        except NotFound:
            last = self.django_paginator_class(queryset, self.get_page_size(request)).num_pages
            raise ApiError(status_code=404, code="not_found", details={"last_page": last},
                           message=f"page {raw} is past the last page ({last})") from None

    def get_schema_operation_parameters(self, view):
        """``page`` and ``page_size`` as positive integers, with the limits stated."""
        return [
            {"name": self.page_query_param, "required": False, "in": "query",
             "description": "page number, from 1 (a page past the last one is a 404)",
             "allowEmptyValue": True, "schema": {"type": "integer", "minimum": 1,
                                                 "maximum": MAX_PAGE}},
            {"name": self.page_size_query_param, "required": False, "in": "query",
             "description": f"results per page (default {self.page_size}; values above "
                            f"{self.max_page_size} give {self.max_page_size})",
             "allowEmptyValue": True, "schema": {"type": "integer", "minimum": 1,
                                                 "maximum": MAX_PAGE}},
        ]


def _positive_int(raw: str, name: str) -> int:
    # str.isdigit() accepts "²" and other Unicode digits that int() refuses: ASCII only.
    if not (raw.isascii() and raw.isdigit()) or not 1 <= int(raw) <= MAX_PAGE:
        raise ValidationError({name: [f"must be an integer from 1 to {MAX_PAGE}"]})
    return int(raw)

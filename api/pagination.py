"""One pagination style for every API list: page numbers (``?page=2&page_size=100``)."""
from __future__ import annotations

from rest_framework.pagination import PageNumberPagination

__all__ = ["ApiPagination"]


class ApiPagination(PageNumberPagination):
    """``{"count", "next", "previous", "results"}``; 50 per page by default, at most 500."""

    page_size = 50
    page_size_query_param = "page_size"
    max_page_size = 500

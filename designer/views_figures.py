"""The figure the result page asks for on a click (a picked flow's path, a clicked host).

The page posts the slice of its own embedded data that the figure needs and draws what comes
back (see :mod:`designer.figures.interactive`), so figures are only ever built in Python. The
endpoint reads nothing from the database and writes nothing: it is open to share-link visitors
like the page itself, and a request can only get a figure of the data it sent.
"""
from __future__ import annotations

from django.conf import settings
from django.http import JsonResponse
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_POST

from designer.figures import figure_from_slice
from designer.params import json_loads_bounded

__all__ = ["figure_render"]


@gzip_page  # a host drill-down of a big server is ~50 kB of JSON; nothing secret in it
@require_POST
def figure_render(request, kind: str):
    """``POST /figures/<kind>/`` with a JSON slice → the figure dict (400 when malformed)."""
    try:
        data = json_loads_bounded(request.body, max_depth=settings.FABRICSCOPE_JSON_MAX_DEPTH)
        return JsonResponse(figure_from_slice(kind, data))
    except ValueError as exc:  # SliceError, JsonTooDeep, json.JSONDecodeError: all ValueErrors
        return JsonResponse({"error": str(exc)}, status=400)

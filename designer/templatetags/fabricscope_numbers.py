"""Number filters that never fail a page.

Django's ``filesizeformat`` raises ``OverflowError`` on ``inf`` and on integers past the float
range; a scenario stored before the engine bounded its sizes (two 1e308-byte collectives sum to
inf) made its page a 500 for everyone who could open it.
"""
from __future__ import annotations

import math

from django import template
from django.template.defaultfilters import filesizeformat

register = template.Library()

# The engine refuses a pattern over 2**60 B (docs/RELIABILITY.md, "Bounded parsing and
# arithmetic"); a sum past it can only come from values stored before that bound.
SHOWN_BYTES_LIMIT = 2 ** 60


@register.filter
def gbps_as_tbps(value) -> str:
    """Gb/s shown in Tb/s with one decimal and thousands separators (``819200.0`` → ``819.2``), the
    unit of every bisection figure (build preview, topology page, compare page); "–" for what is
    not a finite number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return "–"
    return f"{value / 1000:,.1f}"


@register.filter
def bounded_filesize(value) -> str:
    """``filesizeformat`` for any value: "over 1 EiB" past :data:`SHOWN_BYTES_LIMIT` or not
    finite, "—" for what is not a number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "—"
    if isinstance(value, float) and math.isnan(value):
        return "—"
    if value > SHOWN_BYTES_LIMIT:      # also inf, and ints too large for a float
        return "over 1 EiB"
    if value < 0:
        return "—"
    return filesizeformat(value)

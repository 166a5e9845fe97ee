"""JSON-safe numbers: results carry ``null`` where a float is infinite or undefined.

One definition for every module that writes result documents (simulate, diff, what-if,
completion, bottlenecks), so "no finite value" always reads the same.
"""
from __future__ import annotations

import math

__all__ = ["json_float"]


def json_float(x) -> float | None:
    """``float(x)``, or None when ``x`` is None, NaN or ±inf."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None

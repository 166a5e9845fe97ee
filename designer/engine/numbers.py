"""JSON-safe numbers, and the integer codes of a column of values.

:func:`json_float`: results carry ``null`` where a float is infinite or undefined — one
definition for every module that writes result documents (simulate, diff, what-if, completion,
bottlenecks), so "no finite value" always reads the same.

:func:`first_appearance_codes`: a column of values (node kinds, link techs, key tuples) as its
distinct values and one int64 code per value — shared by the document's column-wise acceptance,
the compiled topology, routing and the collectives.
"""
from __future__ import annotations

import math
from itertools import count

import numpy as np

__all__ = ["json_float", "first_appearance_codes"]


def json_float(x) -> float | None:
    """``float(x)``, or None when ``x`` is None, NaN or ±inf."""
    if x is None:
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def first_appearance_codes(values, size: int | None = None) -> tuple[list, np.ndarray]:
    """The distinct values in order of first appearance, and per value its position there
    (int64). Values are told apart as a dict does (``==`` and hash); raises TypeError on an
    unhashable one. ``values``: a list, or an iterable of ``size`` values (read once).

    One ``setdefault`` pass (each value's first position), then a search among the distinct
    ones' first positions: cheaper than ``dict.fromkeys`` then one lookup per value."""
    index: dict = {}
    size = len(values) if size is None else size
    first = np.fromiter(map(index.setdefault, values, count()), dtype=np.int64, count=size)
    starts = np.fromiter(index.values(), dtype=np.int64, count=len(index))
    return list(index), np.searchsorted(starts, first)

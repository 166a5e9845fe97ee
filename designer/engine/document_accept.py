"""Column-wise acceptance of a topology document's nodes and links: a fast *yes* for the common,
valid document, or "don't know" — never a wrong yes.

:func:`designer.engine.document.validate` walks every node and link in Python to locate each
problem (~300k items at 16,384 GPUs: about 1 s of CPU). A valid document has no problem to
locate, so :func:`accept_nodes` and :func:`accept_links` first test the same rules on whole columns
(one comprehension per field, set inclusions, one regular-expression search over all ids joined,
numpy range tests on the numbers). They accept only what they can vouch for, with rules at least
as strict as the item walk's (exact ``str``/``int``/``float`` types, no nested extra field, every
capacity positive even on a link declared down); anything else — a problem, or merely something
unusual — returns None/False and the item walk runs as before and reports exactly what it did.
So the problems validate returns are unchanged; only the time to find that there are none.
"""
from __future__ import annotations

import operator
from itertools import chain, repeat

import numpy as np

__all__ = ["accept_nodes", "accept_links"]

_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})
_NUMBER_TYPES = frozenset({int, float})
_NODE_KEYS = frozenset({"id", "kind", "group", "capacity_gbps", "attrs"})
_LINK_NUMBER_KEYS = ("capacity_gbps", "latency_ns", "capacity_ab_gbps", "capacity_ba_gbps")
_LINK_KEYS = frozenset({"id", "a", "b", "tech", "capacity_basis", "attrs", *_LINK_NUMBER_KEYS})


def _document():
    from designer.engine import document   # document imports this module: look up at call time

    return document


def accept_nodes(nodes: list, group_ids) -> set | None:
    """The node ids when every node certainly passes :func:`document._check_nodes`, else None."""
    from designer.engine.catalog import NODE_KINDS

    if not _all_dicts(nodes):
        return None
    columns = _columns(nodes)
    if columns is None or not columns.keys() <= {*_NODE_KEYS, *_extra_scalar_keys(columns, _NODE_KEYS)}:
        return None
    ids = columns.get("id")   # required: a missing id is None, which _valid_ids refuses
    if ids is None or not _valid_ids(ids) or len(set(ids)) != len(ids):
        return None
    kinds = columns.get("kind")   # required too (None refused by the type test)
    if kinds is None or _types(kinds) != {str} or not set(kinds) <= NODE_KINDS.keys():
        return None
    groups = [g for g in columns.get("group", ()) if g is not None]
    if not _types(groups) <= {str} or not set(groups) <= set(group_ids):
        return None
    if not _positive_numbers(columns.get("capacity_gbps", ())):
        return None
    if not _attrs_ok(columns.get("attrs", ())):
        return None
    return set(ids)


def accept_links(links: list, node_ids) -> bool:
    """Whether every link certainly passes :func:`document._check_links`."""
    from designer.engine.catalog import TECHS

    doc = _document()
    if not _all_dicts(links):
        return False
    columns = _columns(links)
    if columns is None or not columns.keys() <= {*_LINK_KEYS, *_extra_scalar_keys(columns, _LINK_KEYS)}:
        return False
    ids = [i for i in columns.get("id", ()) if i is not None]
    if not _valid_ids(ids) or len(set(ids)) != len(ids):
        return False
    a, b = columns.get("a"), columns.get("b")
    if a is None or b is None or _types(a) != {str} or _types(b) != {str}:
        return False
    known = node_ids if isinstance(node_ids, (set, frozenset)) else set(node_ids)
    if not (set(a) <= known and set(b) <= known) or any(map(operator.eq, a, b)):
        return False
    absent = [None] * len(links)
    tech = columns.get("tech", absent)
    if not _types(tech) <= {str, type(None)} or not set(tech) - {None} <= TECHS.keys():
        return False
    cap = columns.get("capacity_gbps", absent)
    if None in cap and any(c is None and t is None for c, t in zip(cap, tech)):
        return False
    basis = columns.get("capacity_basis", ())
    if not _types(basis) <= {str, type(None)} or not set(basis) <= {None, *doc._BASES}:
        return False
    if not all(_positive_numbers(columns.get(k, ())) for k in ("capacity_gbps", *doc._DIRECTION_KEYS)):
        return False
    return _non_negative_numbers(columns.get("latency_ns", ())) and _attrs_ok(columns.get("attrs", ()))


# ---------------------------------------------------------------------------- columns

def _all_dicts(items: list) -> bool:
    return not items or _types(items) == {dict}


def _types(values) -> set:
    return set(map(type, values))


def _columns(items: list[dict]) -> dict[str, list] | None:
    """Key → ``item.get(key)`` of every item, aligned (None where absent, as the item walk reads
    it), for every key some item has; None when a key is not a string."""
    keys = set(chain.from_iterable(items))
    if not all(k.__class__ is str for k in keys):
        return None
    return {k: list(map(dict.get, items, repeat(k))) for k in keys}


def _extra_scalar_keys(columns: dict, known: frozenset) -> set:
    """Unknown extra keys whose values are all scalars (a nested extra goes to the item walk,
    which bounds its depth)."""
    return {k for k, v in columns.items() if k not in known and _types(v) <= _SCALAR_TYPES}


def _valid_ids(ids: list) -> bool:
    """Every id an exact ``str`` of 1 to ``max_id_length`` characters, all printable (one search
    over the ids joined by a space, itself printable)."""
    doc = _document()
    if not ids:
        return True
    if _types(ids) != {str}:
        return False
    lengths = list(map(len, ids))
    if min(lengths) < 1 or max(lengths) > doc.LIMITS["max_id_length"]:
        return False
    return doc._UNPRINTABLE.search(" ".join(ids)) is None


def _numbers(values: list) -> np.ndarray | None:
    """Float64 array of exact ints and floats (None values dropped), None when another type is
    present or an int does not fit a float."""
    present = [v for v in values if v is not None]
    if not _types(present) <= _NUMBER_TYPES:
        return None
    try:
        return np.array(present, dtype=np.float64)
    except OverflowError:
        return None


def _positive_numbers(values: list) -> bool:
    """Capacities: finite and at least the smallest normal float (the item walk's positive
    rule; a zero on a link declared down is left to it)."""
    arr = _numbers(values)
    return arr is not None and bool(np.all(np.isfinite(arr) & (arr >= _document()._SMALLEST_NORMAL)))


def _non_negative_numbers(values: list) -> bool:
    arr = _numbers(values)
    return arr is not None and bool(np.all(np.isfinite(arr) & (arr >= 0)))


def _attrs_ok(attrs_column: list) -> bool:
    """Every ``attrs`` an object of scalars whose ``*_gbps`` values are capacities and ``*_ns``
    values latencies (:func:`document._check_attrs`); nested attrs go to the item walk."""
    attrs = [a for a in attrs_column if a is not None]
    if not attrs:
        return True
    if _types(attrs) != {dict}:
        return False
    if not _types(chain.from_iterable(map(dict.values, attrs))) <= _SCALAR_TYPES:
        return False
    for key in set(chain.from_iterable(attrs)):
        if key.__class__ is not str:
            continue
        if key.endswith("_gbps") or key.endswith("_ns"):
            values = [a[key] for a in attrs if key in a]
            if any(v is None for v in values):
                return False
            check = _positive_numbers if key.endswith("_gbps") else _non_negative_numbers
            if not check(values):
                return False
    return True

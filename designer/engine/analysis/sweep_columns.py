"""Failure sweeps stored columnar (docs/FORMATS.md, "Stored sweeps").

A ``fabricscope.sweep/1`` keeps one record per failure tried (``ranking``): at 4,096 GPUs an
N-1 NIC sweep is 4,096 records of ~1.3 kB of JSON each, the same ~45 keys written every time
and most values (the baseline's figures, the pattern names, the fallback's algorithm) the same
in every record. :func:`pack` keeps the document's other keys as they are and turns the ranking
into ``ranking_columns``: one array per field, in ranking order, a field whose records all hold
one value written once. :func:`rows` gives back the row form exactly (equal values, the same keys
in the same order in every record, the ranking's order); it takes either form, so every reader —
the chunk merge, the pages, the API — calls it and never looks at which form was stored.

The packed document::

    {"format": "fabricscope.sweep-columns/1", <the sweep's other keys, in its order>,
     "ranking_columns": {
        "rows": N,                       # records in the ranking
        "fields": [["index"], ["failure", "target"], ["impact", "slowdown"], ...],
        "shapes": [[0, 1, 2, ...], ...], # each distinct field sequence of a record, in key order
        "shape": <column>,               # each record's shape (an index into "shapes")
        "columns": [<column>, ...]}}     # per field: the values of the records holding it

A field is the key path to a leaf: any value but a non-empty object (numbers, strings, null,
lists, ``{}``). A column is a JSON array, or ``{"all": value}`` when every record holding the
field holds that value. The codec knows nothing of what an impact is: new keys or nested
objects in a sweep's records round-trip without a change here.

The engine's :func:`~designer.engine.analysis.whatif.sweep` returns the row form (the CLI and
in-process callers read records); the storage layer packs it, through the bridge.
"""
from __future__ import annotations

import copy
from itertools import repeat
from typing import Any

from designer.engine.analysis.result_columns import DamagedResult
from designer.engine.collector import gc_paused

__all__ = ["SWEEP_FORMAT", "COLUMNS_FORMAT", "is_packed", "pack", "rows", "ranked"]

SWEEP_FORMAT = "fabricscope.sweep/1"
COLUMNS_FORMAT = "fabricscope.sweep-columns/1"
_ROWS_KEY, _COLUMNS_KEY = "ranking", "ranking_columns"


def is_packed(document: Any) -> bool:
    """Whether ``document`` is a packed sweep (``fabricscope.sweep-columns/1``)."""
    return isinstance(document, dict) and document.get("format") == COLUMNS_FORMAT


def ranked(document: dict) -> int:
    """How many failures the sweep ranked, in either form, without expanding it."""
    if is_packed(document):
        return int((document.get(_COLUMNS_KEY) or {}).get("rows") or 0)
    return len(document.get(_ROWS_KEY) or [])


def pack(sweep: dict) -> dict:
    """The columnar form of a row-form sweep (a packed one is returned as it is).

    Parameters
    ----------
    sweep : dict
        A JSON-ready ``fabricscope.sweep/1`` (plain dicts, lists, str, numbers, bools, None).

    Returns
    -------
    dict
        ``fabricscope.sweep-columns/1``: the other keys shared, not copied; ``rows(pack(s)) == s``.

    Raises
    ------
    ValueError
        ``sweep`` is not a ``fabricscope.sweep/1`` with a ``ranking`` list of records.
    """
    if is_packed(sweep):
        return sweep
    records = sweep.get(_ROWS_KEY) if isinstance(sweep, dict) else None
    if not isinstance(sweep, dict) or sweep.get("format") != SWEEP_FORMAT or not isinstance(records, list):
        raise ValueError(f"not a {SWEEP_FORMAT} document with a ranking list")
    out = {}
    for key, value in sweep.items():
        if key == _ROWS_KEY:
            out[_COLUMNS_KEY] = _encode(records)
        else:
            out[key] = COLUMNS_FORMAT if key == "format" else value
    return out


def rows(document: dict) -> dict:
    """The row form of a sweep stored either way (a row-form document is returned as it is).

    Raises
    ------
    DamagedResult
        A packed document whose columns do not fit its shapes (located, e.g.
        ``ranking_columns.columns[3]: 4,090 values for 4,096 records``).
    """
    if not is_packed(document):
        return document
    out = {}
    for key, value in document.items():
        if key == _COLUMNS_KEY:
            # ~10 objects per record, none in a cycle: a collection would only rescan them.
            with gc_paused():
                out[_ROWS_KEY] = _decode(value)
        else:
            out[key] = SWEEP_FORMAT if key == "format" else value
    if _ROWS_KEY not in out:
        raise DamagedResult(f"{_COLUMNS_KEY}: missing from a {COLUMNS_FORMAT} document")
    return out


# --- packing ------------------------------------------------------------------------------------

def _leaves(record: dict, prefix: tuple, out: list) -> None:
    """``(path, value)`` of every leaf of ``record``, depth first in key order (so rebuilding
    the objects in this order restores every key order)."""
    for key, value in record.items():
        path = (*prefix, key)
        if type(value) is dict and value:
            _leaves(value, path, out)
        else:
            out.append((path, value))


def _encode(records: list) -> dict:
    field_ids: dict[tuple, int] = {}
    shape_ids: dict[tuple, int] = {}
    shape_of: list[int] = []
    values: list[list] = []
    for k, record in enumerate(records):
        if type(record) is not dict:
            raise ValueError(f"ranking[{k}] is not an object")
        leaves: list = []
        _leaves(record, (), leaves)
        shape = []
        for path, value in leaves:
            fid = field_ids.get(path)
            if fid is None:
                fid = field_ids[path] = len(values)
                values.append([])
            values[fid].append(value)
            shape.append(fid)
        shape_of.append(shape_ids.setdefault(tuple(shape), len(shape_ids)))
    return {"rows": len(records), "fields": [list(p) for p in field_ids], "shapes": [list(s) for s in shape_ids],
            "shape": _column(shape_of), "columns": [_column(v) for v in values]}


def _column(values: list) -> Any:
    """``{"all": v}`` when every value is one value of one type (``1`` and ``1.0`` and ``True``
    are equal in Python but not alike in JSON), else the list."""
    if not values:
        return values
    first = values[0]
    kind = type(first)
    if all(type(v) is kind and v == first for v in values):
        return {"all": first}
    return values


# --- reading ------------------------------------------------------------------------------------

def _decode(table: Any) -> list[dict]:
    try:
        n, fields, shapes = table["rows"], table["fields"], table["shapes"]
        shape_of = _values(table["shape"], n, f"{_COLUMNS_KEY}.shape")
        counts = [0] * len(fields)
        members: list[list[int]] = [[] for _ in shapes]
        for k, sid in enumerate(shape_of):
            if not (isinstance(sid, int) and 0 <= sid < len(shapes)):
                raise DamagedResult(f"{_COLUMNS_KEY}.shape[{k}]: {sid!r} is not one of {len(shapes)} shapes")
            members[sid].append(k)
        for sid, shape in enumerate(shapes):
            for fid in shape:
                if not (isinstance(fid, int) and 0 <= fid < len(fields)):
                    raise DamagedResult(f"{_COLUMNS_KEY}.shapes[{sid}]: {fid!r} is not one of {len(fields)} fields")
                counts[fid] += len(members[sid])
        columns = [_values(c, counts[f], f"{_COLUMNS_KEY}.columns[{f}]") for f, c in enumerate(table["columns"])]
        if len(columns) != len(fields):
            raise DamagedResult(f"{_COLUMNS_KEY}.columns: {len(columns):,} columns for {len(fields):,} fields")
        return _assemble(n, fields, shapes, members, columns)
    except (KeyError, TypeError, IndexError, ValueError) as exc:
        if isinstance(exc, DamagedResult):
            raise
        raise DamagedResult(f"{_COLUMNS_KEY}: damaged ({type(exc).__name__}: {str(exc)[:200]})") from None


def _values(column: Any, count: int, where: str) -> list:
    """A column's values, checked to be ``count`` (containers of an ``{"all": v}`` column are
    copied per record, as separate records read from JSON would be)."""
    if isinstance(column, dict):
        return _copies(column["all"], count)
    if not isinstance(column, list) or len(column) != count:
        got = f"{len(column):,} values" if isinstance(column, list) else type(column).__name__
        raise DamagedResult(f"{where}: {got} for {count:,} records")
    return column


def _copies(value: Any, count: int) -> list:
    """``count`` copies of one value: the value itself when it cannot change, a shallow copy of a
    container of such values (``["ar"]``, ``{}``), else a deep copy."""
    if not isinstance(value, (list, dict)):
        return list(repeat(value, count))
    items = value.values() if isinstance(value, dict) else value
    if all(not isinstance(v, (list, dict)) for v in items):
        return [value.copy() for _ in range(count)]
    return [copy.deepcopy(value) for _ in range(count)]


def _assemble(n: int, fields: list, shapes: list, members: list, columns: list) -> list[dict]:
    """The records, built a shape at a time: each object level is one pass of ``dict(zip())``
    over the records of the shape (C loops, not a Python walk per key)."""
    if len(shapes) == 1:
        by_shape = [columns]
    else:
        by_shape = _split_columns(fields, shapes, members, columns)
    out: list = [None] * n
    for shape, who, values in zip(shapes, members, by_shape):
        if who:
            built = _level([tuple(fields[fid]) for fid in shape], [values[fid] for fid in shape], 0, len(who))
            for k, record in zip(who, built):
                out[k] = record
    return out


def _split_columns(fields: list, shapes: list, members: list, columns: list) -> list[list]:
    """Per shape, per field: the values of that shape's records (a column holds the values of
    every record holding the field, in record order, whatever its shape)."""
    owner = [0] * sum(len(who) for who in members)
    for sid, who in enumerate(members):
        for k in who:
            owner[k] = sid
    holds = [set(shape) for shape in shapes]
    out: list[list] = [[None] * len(fields) for _ in shapes]
    for fid, column in enumerate(columns):
        buckets: dict[int, list] = {sid: [] for sid in range(len(shapes)) if fid in holds[sid]}
        owners = [sid for sid in owner if fid in holds[sid]]
        for value, sid in zip(column, owners):
            buckets[sid].append(value)
        for sid, values in buckets.items():
            out[sid][fid] = values
    return out


def _level(paths: list[tuple], values: list[list], depth: int, count: int) -> list[dict]:
    """The ``count`` objects at ``depth`` of one shape's records: their keys in order, each either
    a leaf's values or the objects one level down built from the paths that share the key."""
    if not paths:  # records that are empty objects
        return [{} for _ in range(count)]
    keys: list = []
    children: list = []
    k = 0
    while k < len(paths):
        key = paths[k][depth]
        if len(paths[k]) == depth + 1:
            keys.append(key)
            children.append(values[k])
            k += 1
            continue
        end = k
        while end < len(paths) and len(paths[end]) > depth + 1 and paths[end][depth] == key:
            end += 1
        keys.append(key)
        children.append(_level(paths[k:end], values[k:end], depth + 1, count))
        k = end
    return [dict(zip(keys, vals)) for vals in zip(*children)]

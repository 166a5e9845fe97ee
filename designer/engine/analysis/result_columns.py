"""Result documents stored compactly: a small head apart from columnar, compressed bulk.

A ``fabricscope.result/1`` document is mostly per-flow and per-resource records (a dict each,
their keys and node-id strings repeated thousands of times). :func:`pack` splits it in two:

- the **head**: every top-level key but the bulk ones (``format``, ``summary``, ``scenario``,
  ...) — what pages and summary readers show, a few kB;
- the **body**: the bulk keys (``flows``, ``resources``, ``diff``, ``latency``), each list of
  records turned into columns (one list per key; strings interned into one table, so a path is
  a list of small integers), written with orjson and compressed with zlib. From
  :data:`~designer.engine.analysis.result_groups.GROUP_FROM` resource records up, ``resources``
  is stored grouped by symmetry instead (:mod:`.result_groups`; 1.4 million records at
  100,000 GPUs), and expanded back when read.

:func:`unpack` gives back the document exactly (equal values, the same keys in the same order per
record). The codec knows nothing of what a flow is: any list of dicts is a table, so records of
new fields or shapes round-trip without a change here. The engine never imports Django: the
storage layer (``designer.models.SimulationResult``) calls these functions.
"""
from __future__ import annotations

import zlib
from typing import Any

import orjson

from designer.engine.analysis.result_groups import GROUP_FROM, expand_resources, group_resources

__all__ = ["ENCODING", "BULK_KEYS", "DamagedResult", "split", "pack", "unpack", "encode_table",
           "decode_table"]

ENCODING = "fabricscope.columns/1+zlib"
BULK_KEYS = ("flows", "resources", "diff", "latency")
# zlib level 6 (its default): level 9 saved ~2% more on a 1,024-GPU result at ~2x the time.
_LEVEL = 6


def split(document: dict) -> tuple[dict, dict]:
    """``(head, bulk)``: the document's keys outside :data:`BULK_KEYS` and those in it."""
    head = {k: v for k, v in document.items() if k not in BULK_KEYS}
    bulk = {k: v for k, v in document.items() if k in BULK_KEYS}
    return head, bulk


def pack(document: dict, *, group_from: int = GROUP_FROM) -> tuple[dict, bytes]:
    """Split a result document into its head and its compressed columnar body.

    Parameters
    ----------
    document : dict
        A JSON-ready ``fabricscope.result/1`` (plain dicts, lists, str, numbers, bools, None).
    group_from : int
        ``resources`` of at least this many records is stored grouped by symmetry (when it groups).

    Returns
    -------
    (dict, bytes)
        The head (a plain dict, shared values not copied) and the body (zlib-compressed JSON).
        ``unpack(head, body) == document``.
    """
    head, bulk = split(document)
    strings = _Strings()
    parts = {k: _encode_resources(v, group_from) or _encode_value(v, strings) if k == "resources"
             else _encode_value(v, strings) for k, v in bulk.items()}
    # The key order of the document, so unpack can rebuild it exactly (bulk keys sit between
    # head keys: "flows" comes after "summary" and before "scenario").
    payload = {"order": list(document), "strings": strings.table, "parts": parts}
    return head, zlib.compress(orjson.dumps(payload), _LEVEL)


class DamagedResult(ValueError):
    """A stored body that does not decode (truncated, overwritten, not this codec's)."""


def unpack(head: dict, body: bytes | memoryview | None) -> dict:
    """The document :func:`pack` split into ``head`` and ``body`` (``body`` None: ``head``).

    Raises
    ------
    DamagedResult
        The body is not a compressed payload of :func:`pack` (one error class, with what failed,
        instead of whichever of zlib, orjson, KeyError or TypeError the damage happened to hit).
    """
    if body is None:
        return head
    try:
        payload = orjson.loads(zlib.decompress(bytes(body)))
        strings = payload["strings"]
        parts = {k: _decode_value(v, strings) for k, v in payload["parts"].items()}
        return {k: (parts[k] if k in parts else head[k]) for k in payload["order"]
                if k in parts or k in head}
    except (zlib.error, orjson.JSONDecodeError, KeyError, TypeError, IndexError, AttributeError,
            StopIteration, RecursionError, ValueError) as exc:
        raise DamagedResult(f"the stored result body is damaged ({type(exc).__name__}: {str(exc)[:200]}); "
                            "run the job again to store a new result") from None


# --- tables -----------------------------------------------------------------------------------------

class _Strings:
    """One table of distinct strings; a string's index is its code."""

    def __init__(self):
        self.table: list[str] = []
        self.codes: dict[str, int] = {}

    def code(self, text: str) -> int:
        found = self.codes.get(text)
        if found is None:
            found = self.codes[text] = len(self.table)
            self.table.append(text)
        return found


def _is_table(value: Any) -> bool:
    return isinstance(value, list) and bool(value) and all(type(v) is dict for v in value)


def _encode_value(value: Any, strings: _Strings) -> Any:
    """A list of dicts → a table; a dict → its values encoded; anything else as it is."""
    if _is_table(value):
        return {"table": encode_table(value, strings)}
    if type(value) is dict:
        return {"dict": {k: _encode_value(v, strings) for k, v in value.items()}}
    return {"raw": value}


def _encode_resources(value: Any, group_from: int) -> dict | None:
    """``{"groups": ...}`` of a large list of resource records (:func:`group_resources`), or None."""
    if not isinstance(value, list) or len(value) < group_from:
        return None
    grouped = group_resources(value)
    return None if grouped is None else {"groups": grouped}


def _decode_value(value: dict, strings: list[str]) -> Any:
    if "groups" in value:
        return expand_resources(value["groups"])
    if "table" in value:
        return decode_table(value["table"], strings)
    if "dict" in value:
        return {k: _decode_value(v, strings) for k, v in value["dict"].items()}
    return value["raw"]


def encode_table(records: list[dict], strings: _Strings) -> dict:
    """Columns of a list of dicts.

    Returns
    -------
    dict
        ``shapes`` (each distinct key sequence, in first-seen order), ``shape`` (the index of each
        record's shape) and ``columns`` (key → the encoded values of the records holding that key,
        in record order).
    """
    shape_ids: dict[tuple, int] = {}
    shape_of: list[int] = []
    values: dict[str, list] = {}
    for rec in records:
        keys = tuple(rec)
        sid = shape_ids.get(keys)
        if sid is None:
            sid = shape_ids[keys] = len(shape_ids)
        shape_of.append(sid)
        for k, v in rec.items():
            column = values.get(k)
            if column is None:
                column = values[k] = []
            column.append(v)
    return {"shapes": [list(s) for s in shape_ids], "shape": shape_of,
            "columns": {k: _encode_column(col, strings) for k, col in values.items()}}


def decode_table(table: dict, strings: list[str]) -> list[dict]:
    """The records of :func:`encode_table`, equal and in key order."""
    columns = {k: iter(_decode_column(col, strings)) for k, col in table["columns"].items()}
    shapes = [[(k, columns[k]) for k in keys] for keys in table["shapes"]]
    return [{k: next(it) for k, it in shapes[sid]} for sid in table["shape"]]


# --- columns ----------------------------------------------------------------------------------------

def _encode_column(column: list, strings: _Strings) -> dict:
    """The most compact exact form of one column.

    ``str``: string codes (-1 = None) when every value is a string or None; ``strs``: offsets and
    codes when every value is a list of strings; ``tables``: offsets and one table when every value
    is a list of dicts; ``raw``: the values as they are.
    """
    if all(type(v) is str or v is None for v in column):
        return {"str": [-1 if v is None else strings.code(v) for v in column]}
    if all(type(v) is list for v in column):
        if all(type(s) is str for v in column for s in v):
            return {"strs": {"ends": _ends(column),
                             "codes": [strings.code(s) for v in column for s in v]}}
        if all(type(s) is dict for v in column for s in v):
            flat = [s for v in column for s in v]
            return {"tables": {"ends": _ends(column), "table": encode_table(flat, strings)}}
    return {"raw": column}


def _decode_column(column: dict, strings: list[str]) -> list:
    if "str" in column:
        return [None if c < 0 else strings[c] for c in column["str"]]
    if "strs" in column:
        codes = column["strs"]["codes"]
        return _cut([strings[c] for c in codes], column["strs"]["ends"])
    if "tables" in column:
        return _cut(decode_table(column["tables"]["table"], strings), column["tables"]["ends"])
    return column["raw"]


def _ends(column: list[list]) -> list[int]:
    """Where each list ends in the concatenation of all of them."""
    out, total = [], 0
    for v in column:
        total += len(v)
        out.append(total)
    return out


def _cut(flat: list, ends: list[int]) -> list[list]:
    out, start = [], 0
    for end in ends:
        out.append(flat[start:end])
        start = end
    return out

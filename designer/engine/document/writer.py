"""Writing a topology document as JSON text: top-level fields, then one group, node or link per line.

One item per line keeps a document diff-friendly. Each item is encoded by orjson (compact
separators, UTF-8, shortest round-trip floats), so reading the text back gives the same
document (equal values, same key order) as the stdlib encoder's text did, in about a tenth of
its time: 1.9 million items at 100,000 GPUs (docs/PERFORMANCE.md, "100,000 GPUs"). An item
orjson cannot encode exactly (an integer beyond 64 bits, a non-string key) or whose text holds
``null`` (orjson writes NaN as null; the stdlib encoder refuses it) is encoded by the stdlib
with ``allow_nan=False``, as before.

:func:`write_document` streams the text to a binary file in chunks, so a large document is never
held twice (as dicts and as one string).
"""
from __future__ import annotations

import json

import orjson

__all__ = ["dump", "write_document"]

_LISTS = ("groups", "nodes", "links")
_CHUNK = 20_000   # items encoded and written at a time by write_document
_NULL = b"null"


def _item(value) -> bytes:
    """The compact JSON of one item; the stdlib's where orjson would differ from it (see module)."""
    try:
        text = orjson.dumps(value)
    except TypeError:   # orjson.JSONEncodeError: ints beyond 64 bits, non-str keys
        return json.dumps(value, allow_nan=False, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    if _NULL in text:   # maybe a NaN orjson wrote as null: the stdlib refuses it
        return json.dumps(value, allow_nan=False, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return text


def _pieces(doc: dict):
    """The document's text in pieces (bytes), in order: the head, then each list's items."""
    head = [f"{json.dumps(k)}: {json.dumps(v, allow_nan=False)}" for k, v in doc.items() if k not in _LISTS]
    yield ("{" + ",\n ".join(head)).encode("utf-8")
    first = not head
    for key in _LISTS:
        if key not in doc:
            continue
        items = doc[key]
        yield (b"" if first else b",\n ") + json.dumps(key).encode("utf-8") + (b": [\n  " if items else b": []")
        first = False
        for start in range(0, len(items), _CHUNK):
            chunk = b",\n  ".join(map(_item, items[start:start + _CHUNK]))
            yield (b",\n  " if start else b"") + chunk
        if items:
            yield b"\n ]"
    yield b"}\n"


def dump(doc: dict) -> str:
    """JSON text of ``doc``: top-level fields, then one group/node/link per line (diff-friendly).

    Raises
    ------
    ValueError
        A value is NaN or infinite (not JSON).
    """
    return b"".join(_pieces(doc)).decode("utf-8")


def write_document(doc: dict, fh) -> int:
    """Write :func:`dump`'s text of ``doc`` to the binary file ``fh`` in chunks; the bytes written."""
    total = 0
    for piece in _pieces(doc):
        fh.write(piece)
        total += len(piece)
    return total

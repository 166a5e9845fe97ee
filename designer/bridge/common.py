"""What every bridge module shares: engine errors as located ``ValidationError``s, engine values
as plain JSON, and the canonical JSON checksums are computed on."""
from __future__ import annotations

import hashlib
import json
import math
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import orjson

from designer.engine.errors import EngineError
from designer.exceptions import EngineValidationError

__all__ = ["Progress", "engine_errors", "canonical_json", "canonical_json_bytes", "document_checksum",
           "DocumentJSONEncoder", "DocumentJSONDecoder", "collector_paused",
           "json_safe"]

Progress = Callable[[float, str], None]


@contextmanager
def engine_errors(field: str | None = None) -> Iterator[None]:
    """Re-raise any :class:`EngineError` as :class:`EngineValidationError` (under ``field``)."""
    try:
        yield
    except EngineError as exc:
        details = [p.as_dict() for p in exc.problems]
        raise EngineValidationError(code=exc.code, message=exc.message, details=details,
                                    field=field) from exc


@contextmanager
def collector_paused() -> Iterator[None]:
    """Python's cyclic collector off for a block that makes ~10^5-10^6 containers while a big
    document is alive: each full collection would rescan the whole document (~0.5 s at 1,024
    hosts, several per request); JSON documents hold no reference cycles to collect. The engine's
    pause (``designer.engine.collector.gc_paused``) counts nested and concurrent blocks, so one request's
    thread cannot switch the collector back on under another's."""
    from designer.engine.collector import gc_paused

    with gc_paused():
        yield


@contextmanager
def patch_errors() -> Iterator[None]:
    """Errors of applying a patch as located ValidationErrors: a patch that does not fit its
    base under ``patch``, an invalid result under ``document``."""
    from designer.engine.document.patch import InvalidPatch

    try:
        yield
    except InvalidPatch:
        with engine_errors("patch"):
            raise
    except EngineError:
        with engine_errors("document"):
            raise


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 as is: the form checksums are computed on."""
    return canonical_json_bytes(value).decode("utf-8")


def canonical_json_bytes(value: Any) -> bytes:
    """:func:`canonical_json` as UTF-8 bytes, byte for byte what
    ``json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)`` writes.

    Written by orjson (~5x faster on a 20 MB document: a patch save computes it once for the
    checksum and the storage quota) when orjson's text is certainly the same: orjson writes a
    float under 1e-4 as ``1e-7`` or ``0.00001`` where Python writes ``1e-07`` and ``1e-05``, so
    an ``e-`` or ``.0000`` anywhere in its text hands the value to ``json.dumps``, as do what orjson
    refuses (an integer beyond 64 bits, a non-string key, a lone surrogate). Values are finite
    (validated documents and ``json_safe`` results): orjson writes NaN as null."""
    try:
        text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:  # orjson.JSONEncodeError
        text = None
    if text is None or _orjson_may_differ(text):
        text = json.dumps(value, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8")
    return text


# A number in exponent form with a negative exponent, or a small decimal: where orjson's float
# text may differ from Python's (``1e-7`` / ``1e-07``, ``0.00001`` / ``1e-05``; a million random
# floats of every magnitude differed nowhere else). Both tests are substring searches (memmem):
# "e-" also matches words ("storage-"), which only costs that document the slower json.dumps.
def _orjson_may_differ(text: bytes) -> bool:
    """Whether orjson's ``text`` may hold a float Python writes otherwise."""
    return b"e-" in text or b".0000" in text


def document_checksum(document: dict, text: bytes | None = None) -> str:
    """sha256 hex digest of the document's canonical JSON (``text``, when already made)."""
    return hashlib.sha256(text if text is not None else canonical_json_bytes(document)).hexdigest()


def json_safe(value: Any) -> Any:
    """Plain-JSON copy of an engine result: numpy scalars/arrays unwrapped, NaN/inf -> None.

    PostgreSQL's jsonb rejects NaN and Infinity, and the JSON encoder rejects numpy types.
    Tried first as one orjson encode + decode (C, 3-4x faster than the Python walk on a
    multi-megabyte result, docs/PERFORMANCE.md; orjson already writes NaN/inf as null, floats round-trip exactly and
    key order is kept). What orjson would render differently from the walk — a non-string key,
    an integer beyond 64 bits, a datetime, a dataclass, a set or any other object the walk turns
    into ``str(value)`` — makes it raise, and the walk below does the whole value instead. (Two
    exceptions, absent from engine results: orjson writes an ``enum.Enum`` as its value and a
    ``uuid.UUID`` as its string, where the walk gives ``str(value)``.)
    """
    # The collector is paused: building a result's ~10^5-10^6 containers otherwise starts a
    # collection every 700 of them, which rescans the survivors (~2/3 of the time); JSON has no
    # reference cycles to collect.
    with collector_paused():
        try:
            return orjson.loads(orjson.dumps(value, default=_orjson_default, option=_ORJSON_STRICT))
        except TypeError:  # orjson.JSONEncodeError
            return _json_safe_walk(value)


# Subclasses (str, int, dict, list), datetimes and dataclasses go through _orjson_default, which
# hands them to the walk unless they are plain containers, so the two paths give equal values.
_ORJSON_STRICT = (orjson.OPT_PASSTHROUGH_SUBCLASS | orjson.OPT_PASSTHROUGH_DATETIME
                  | orjson.OPT_PASSTHROUGH_DATACLASS)


def _orjson_default(value: Any) -> Any:
    if hasattr(value, "tolist"):  # numpy arrays and scalars (np.float64 is a float subclass)
        return value.tolist()
    if hasattr(value, "as_dict"):
        return value.as_dict()
    for plain in (dict, list, str, int):
        if isinstance(value, plain) and not isinstance(value, bool):
            return plain(value)
    raise TypeError(f"left to the walk: {type(value).__name__}")


def _json_safe_walk(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _json_safe_walk(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_json_safe_walk(v) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if hasattr(value, "tolist"):  # numpy arrays and scalars
        return _json_safe_walk(value.tolist())
    if hasattr(value, "as_dict"):
        return _json_safe_walk(value.as_dict())
    return str(value)


class DocumentJSONEncoder(json.JSONEncoder):
    """The encoder of ``TopologyRevision.document``: orjson writes a 20 MB document in ~0.05 s
    where ``json.dumps`` takes ~0.45 s (the largest share of a small patch's save). What orjson
    refuses (an integer beyond 64 bits, a non-string key) goes to ``json.dumps``. Documents are
    validated, so finite: orjson would write NaN as null."""

    def encode(self, o) -> str:
        try:
            return orjson.dumps(o).decode("utf-8")
        except TypeError:  # orjson.JSONEncodeError
            return super().encode(o)


class DocumentJSONDecoder(json.JSONDecoder):
    """The decoder of ``TopologyRevision.document``: orjson with the collector paused (~3x
    faster than ``json.loads`` on a 40 MB document); ``json`` reads what orjson refuses."""

    def decode(self, s, *args, **kwargs):
        with collector_paused():   # ~10^6 containers made: see json_safe
            try:
                return orjson.loads(s)
            except orjson.JSONDecodeError:
                return super().decode(s, *args, **kwargs)

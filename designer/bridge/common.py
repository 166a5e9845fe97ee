"""What every bridge module shares: engine errors as located ``ValidationError``s, engine values
as plain JSON, and the canonical JSON checksums are computed on."""
from __future__ import annotations

import gc
import hashlib
import json
import math
from contextlib import contextmanager
from typing import Any, Callable, Iterator

import orjson

from designer.engine.errors import EngineError
from designer.exceptions import EngineValidationError

__all__ = ["Progress", "engine_errors", "canonical_json", "document_checksum", "json_safe"]

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


def canonical_json(value: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 as is: the form checksums are computed on."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def document_checksum(document: dict) -> str:
    """sha256 hex digest of the document's canonical JSON."""
    return hashlib.sha256(canonical_json(document).encode("utf-8")).hexdigest()


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
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return orjson.loads(orjson.dumps(value, default=_orjson_default, option=_ORJSON_STRICT))
    except TypeError:  # orjson.JSONEncodeError
        return _json_safe_walk(value)
    finally:
        if was_enabled:
            gc.enable()


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

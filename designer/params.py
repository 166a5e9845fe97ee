"""Typed, bounded parsing of what a request carries: integer query parameters, path ids, and JSON
bodies, shared by the pages (``designer/pages/``) and the API (``api/``).

Why a helper rather than ``int(request.GET[...])``: ``str.isdigit()`` accepts Unicode digits that
``int()`` refuses (``"²"``), ``int()`` accepts what no database column holds (``"9" * 20`` is an
``OverflowError`` on SQLite, a ``DataError`` on PostgreSQL) and other digits (``"٣"``, ``" 3"``),
and ``json.loads`` recurses once per nesting level (``RecursionError`` at ~1,000). Here an
integer is 1 to 19 ASCII digits and within the caller's bounds, and a JSON body is refused before
parsing when it nests deeper than the limit — each a clean 400 (or a 404 for an id that cannot name
an object), never a 500.

- :func:`int_param` — an integer query parameter in ``[minimum, maximum]`` or its default.
- :func:`id_param` — a query parameter naming an object: malformed is a 400, out of range a 404.
- :func:`parse_int` — the check itself, for values not taken from ``request.GET``.
- :func:`json_loads_bounded` — ``json.loads`` with a depth limit checked before parsing.
- :func:`check_printable` — a name shown to users has no control or bidi-override character.
"""
from __future__ import annotations

import json
import re

from django.core.exceptions import BadRequest, ValidationError
from django.http import Http404

__all__ = ["InvalidParam", "MAX_ID", "MAX_INT32", "int_param", "id_param", "parse_int",
           "JsonTooDeep", "json_depth_exceeds", "json_loads_bounded", "check_printable"]

MAX_ID = 2 ** 63 - 1      # a bigint primary key; beyond it an id names nothing
MAX_INT32 = 2 ** 31 - 1   # an integer column (counts, revision numbers)
_DIGITS = re.compile(r"[0-9]{1,19}")  # ASCII only: len(str(MAX_ID)) == 19


class InvalidParam(BadRequest):
    """A malformed or out-of-range request parameter: a 400 on pages, a located 400 in the API
    (``api.views.base`` turns it into DRF's ``ValidationError`` keyed by ``name``)."""

    def __init__(self, name: str, message: str):
        super().__init__(f"{name}: {message}")
        self.name = name
        self.message = message


def parse_int(raw, *, name: str, minimum: int = 0, maximum: int = MAX_INT32) -> int:
    """``raw`` as an int in ``[minimum, maximum]``.

    Parameters
    ----------
    raw : str
        The text as received (a leading ``-`` is allowed when ``minimum`` is negative).
    name : str
        The parameter's name, for the error.
    minimum, maximum : int
        Inclusive bounds.

    Raises
    ------
    InvalidParam
        Not 1-19 ASCII digits (optionally signed), or out of bounds.
    """
    text = raw if isinstance(raw, str) else ""
    digits = text[1:] if text.startswith("-") and minimum < 0 else text
    if not _DIGITS.fullmatch(digits):
        raise InvalidParam(name, f"must be an integer from {minimum} to {maximum}")
    value = -int(digits) if digits is not text else int(digits)
    if not minimum <= value <= maximum:
        raise InvalidParam(name, f"must be an integer from {minimum} to {maximum}, got {value}")
    return value


def _query(request):
    # A DRF Request proxies ``GET`` to its Django request, so one helper serves pages and the API.
    return request.GET


def int_param(request, name: str, *, default, minimum: int = 0, maximum: int = MAX_INT32):
    """Query parameter ``name`` as a bounded int; ``default`` when it is absent or empty.

    Raises
    ------
    InvalidParam
        Present but not an integer in ``[minimum, maximum]`` (a 400).
    """
    raw = _query(request).get(name)
    if raw is None or raw == "":
        return default
    return parse_int(raw, name=name, minimum=minimum, maximum=maximum)


def id_param(request, name: str, *, default=None) -> int | None:
    """Query parameter ``name`` naming an object by id; ``default`` when absent.

    Raises
    ------
    InvalidParam
        Not made of ASCII digits (a 400).
    Http404
        Digits, but beyond any id (``> MAX_ID``, or 0): no object has it.
    """
    raw = _query(request).get(name)
    if raw is None or raw == "":
        return default
    if not (isinstance(raw, str) and raw.isascii() and raw.isdigit()):
        raise InvalidParam(name, "must be an object id (digits)")
    if len(raw) > 19 or not 1 <= int(raw) <= MAX_ID:
        raise Http404(f"no object with {name}={raw[:40]}")
    return int(raw)


# ------------------------------------------------------------------------------------ JSON
def _refuse_constant(name: str):
    raise ValueError(f"{name} is not valid JSON")


class JsonTooDeep(ValueError):
    """JSON text nested deeper than allowed (a ``ValueError``, like ``json.JSONDecodeError``)."""

    def __init__(self, limit: int):
        super().__init__(f"JSON nested deeper than {limit} levels")
        self.limit = limit


# One pass of ``sub`` removes exactly the innermost pairs present before it (not the pairs their
# removal creates), so each pass lowers the nesting by exactly one level.
_LEAF_PAIR = re.compile(rb"\[\]|\{\}")
_NOT_SKELETON = bytes(c for c in range(256) if c not in b'[]{}"')


def json_depth_exceeds(raw: bytes | str, limit: int) -> bool:
    """Whether JSON text nests arrays/objects deeper than ``limit``, found without recursion.

    Strings and everything but brackets are cut out (a ``[`` in a string is text); each pass
    then deletes every innermost ``[]``/``{}`` pair, so balanced text of depth d is empty after
    exactly d passes. Text still non-empty after ``limit`` passes is deeper than ``limit`` — or
    malformed, which stops the passes early and is walked exactly (``json.loads`` then reports
    it when it is not too deep).
    All of it runs in C (a few ``bytes`` passes), well below the cost of ``json.loads`` itself.
    """
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    skeleton = original = _bracket_skeleton(data)
    for _ in range(limit):
        if not skeleton:
            return False
        shorter = _LEAF_PAIR.sub(b"", skeleton)
        if len(shorter) == len(skeleton):  # malformed (no innermost pair): walk it exactly
            return _max_depth(original, limit) > limit
        skeleton = shorter
    return bool(skeleton)  # each pass removed at least one level: more than ``limit`` remain


def _bracket_skeleton(data: bytes) -> bytes:
    """The brackets of JSON text that lie outside strings, in order.

    Escaped backslashes go first, then escaped quotes (as a JSON reader pairs them, left to
    right), so every remaining ``"`` opens or closes a string. Then only brackets and quotes are
    kept, and adjacent quote pairs dropped: an open-close pair is a string without brackets, a
    close-open pair has no bracket between its strings, so neither changes the skeleton. What
    is left is split on the quotes (the outside of strings at even positions). Plain ``bytes``
    methods throughout: a regex pays a Python-level match per string (millions in a 40 MB document).
    """
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    kept = data.translate(None, _NOT_SKELETON).replace(b'""', b"")
    return b"".join(kept.split(b'"')[::2]) if b'"' in kept else kept


def _max_depth(skeleton: bytes, limit: int) -> int:
    depth = 0
    for byte in skeleton:
        depth += 1 if byte in b"[{" else -1
        if depth > limit:
            return depth
    return 0


def json_loads_bounded(raw: bytes | str, *, max_depth: int, strict: bool = True):
    """``json.loads(raw)``, refusing text nested deeper than ``max_depth`` before parsing it.

    ``strict`` (as DRF's ``STRICT_JSON``) also refuses ``NaN``/``Infinity``, which are not JSON.

    Raises
    ------
    JsonTooDeep
        Nested deeper than ``max_depth``.
    ValueError
        Malformed JSON or bytes that are not UTF-8 (``json.JSONDecodeError``, ``UnicodeError``).
    """
    if json_depth_exceeds(raw, max_depth):
        raise JsonTooDeep(max_depth)
    try:
        return json.loads(raw, parse_constant=_refuse_constant if strict else None)
    except RecursionError:  # cannot happen below the limit; kept so it can never be a 500
        raise JsonTooDeep(max_depth) from None


def check_printable(value, *, field: str = "name") -> None:
    """Raise ``ValidationError({field: ...})`` when ``value`` holds a control, line-separator or
    bidi-override character (the document validator's rule, :func:`designer.bridge.unprintable`): a
    U+202E in a name shows it reversed, which can disguise one topology or scenario as another."""
    from designer.bridge import unprintable

    if isinstance(value, str) and (problem := unprintable(value)):
        raise ValidationError({field: f"must be printable: {problem}"})

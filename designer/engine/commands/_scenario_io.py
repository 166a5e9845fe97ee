"""Helpers shared by the engine commands (simulate, sweep, compare, solve, nccl-tests): reading
JSON input with located errors, stderr progress, writing the JSON output.

JSON goes through orjson (a compiled codec, several times faster than the stdlib on large
documents) with the stdlib as the fallback wherever the two differ, so what is accepted,
what is rejected and every error message stay as they were:

- reading: a document orjson refuses (``NaN``/``Infinity`` literals, integers beyond 64 bits, lone
  surrogates, a UTF-8 BOM, or plain bad JSON) is re-read by :func:`json.loads`, which accepts the
  first ones exactly as before and raises the same located error for the others;
- writing: objects orjson does not encode (a non-string key, a big integer) go through
  :func:`json.dumps`; NaN and infinities become ``null`` (the web app's ``json_safe`` convention)
  instead of the stdlib's ``allow_nan=False`` crash; key order is kept (insertion order) in both.
"""
from __future__ import annotations

import json
import os
import re
import sys

import numpy as np
import orjson

from designer.engine.collector import gc_paused
from designer.engine.errors import InvalidScenario, Problem

__all__ = ["read_json", "read_topology", "load_scenario", "progress_printer", "write", "loads", "dumps",
           "read_bytes", "gc_paused", "write_stdout", "write_data", "array_chunks", "array_region",
           "OBJECT_LAYOUTS", "split_strings", "object_heads", "object_json", "numbers_json", "ObjectWriter"]


def read_bytes(path: str) -> bytes:
    """The raw bytes of ``path`` (``-``: standard input)."""
    if path == "-":
        buffer = getattr(sys.stdin, "buffer", None)  # None when replaced by a text-only stream
        return buffer.read() if buffer is not None else sys.stdin.read().encode("utf-8")
    with open(path, "rb") as fh:
        return fh.read()


def loads(data: bytes):
    """Parse JSON ``data`` (UTF-8 bytes) like :func:`json.loads`, fast.

    Raises
    ------
    json.JSONDecodeError, UnicodeDecodeError
        Exactly those :func:`json.loads` raises on the decoded text.
    """
    with gc_paused():
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            # Re-read with the stdlib: it accepts NaN/Infinity and big integers as it always did,
            # and raises its own error (line, column, message) for anything really invalid.
            return _stdlib_loads(data.decode("utf-8") if isinstance(data, bytes) else data)


def _stdlib_loads(text: str):
    """``json.loads``, its two other refusals reported as JSON errors: an integer beyond
    Python's digit limit (ValueError) and nesting too deep for its recursion (RecursionError)
    were tracebacks, not the located "not JSON" message every other bad input gets."""
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise
    except ValueError as exc:     # "Exceeds the limit (4300 digits) for integer string conversion"
        reason = str(exc).split(":")[0]   # without the hint about sys.set_int_max_str_digits
        raise json.JSONDecodeError(f"number not readable ({reason})", text, 0) from None
    except RecursionError:
        raise json.JSONDecodeError("nested too deeply", text, 0) from None


def dumps(doc, *, indent: int | None = 2) -> bytes:
    """UTF-8 JSON of ``doc`` without a trailing newline; ``indent`` 2 or None/0 (compact) is orjson,
    any other indent (and anything orjson cannot encode) the stdlib, as before."""
    if indent in (2, 0, None):
        try:
            with gc_paused():
                return orjson.dumps(doc, option=orjson.OPT_INDENT_2 if indent else 0)
        except TypeError:  # orjson.JSONEncodeError: non-str keys, ints beyond 64 bits, numpy
            pass
    return json.dumps(doc, indent=indent or None, allow_nan=False).encode("utf-8")


def read_json(path: str, where: str):
    return _parsed(read_bytes(path), where)


def _parsed(data: bytes, where: str):
    """:func:`loads` of ``data``, bad JSON an ``InvalidScenario`` located at ``where``."""
    try:
        return loads(data)
    except json.JSONDecodeError as exc:
        raise InvalidScenario("not JSON", [Problem(where, f"invalid JSON at line {exc.lineno} column "
                                                          f"{exc.colno}: {exc.msg}")]) from None


def load_scenario(path: str, *, compiled_topology: bool = False):
    """The scenario dict and a loader resolving a topology path relative to the scenario file.
    ``compiled_topology``: the loader may give the compiled ``Topology`` of the file (read
    into columns, :func:`read_topology`) instead of its document, for a caller that passes it
    on to the engine's scenario (``simulate``)."""
    scenario = read_json(path, path)
    if not isinstance(scenario, dict):
        raise InvalidScenario("a scenario must be a JSON object", [Problem(path, "not an object")])
    base = os.path.dirname(os.path.abspath(path)) if path != "-" else os.getcwd()
    read = read_topology if compiled_topology else read_json
    return scenario, (lambda ref: read(os.path.join(base, ref), f"topology ({ref})"))


def read_topology(path: str, where: str):
    """The topology file at ``path`` as a compiled ``Topology`` when the columnar reader vouches
    for it (``Topology.read_file_bytes``: no dict per node or link), else its parsed document
    as :func:`read_json` gives it (validated later, every problem located, as before)."""
    from designer.engine.model.topology import Topology

    data = read_bytes(path)
    with gc_paused():
        topology = Topology.read_file_bytes(data)
    return topology if topology is not None else _parsed(data, where)


def progress_printer(quiet: bool):
    if quiet:
        return None

    def progress(fraction: float, message: str) -> None:
        print(f"[{fraction * 100:3.0f}%] {message}", file=sys.stderr, flush=True)

    return progress


def write(doc: dict, output: str | None, *, indent: int | None = 2) -> None:
    """Write ``doc`` as JSON plus a newline to ``output`` (a path) or to standard output."""
    write_data(dumps(doc, indent=indent), output, end=b"\n")


def write_data(data: bytes, output: str | None, *, end: bytes = b"") -> None:
    """Write the bytes ``data`` then ``end`` to ``output`` (a path) or to standard output (two
    writes: ``data + end`` would copy a 74 MB result once more)."""
    if output:
        with open(output, "wb") as out:
            out.write(data)
            out.write(end)
    else:
        write_stdout(data, end=end)


def write_stdout(data: bytes, *, end: bytes = b"") -> None:
    """Write UTF-8 ``data`` then ``end`` to standard output (its byte buffer when it has one)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # replaced by a text-only stream (contextlib.redirect_stdout, io.StringIO)
        sys.stdout.write(data.decode("utf-8") + end.decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.write(end)
    buffer.flush()


# --------------------------------------------------------------------------- big documents
# Reading and writing a large ``solve`` instance (200k flows) without one Python object per
# item where it can be avoided; each helper says when it cannot be exact, and callers then take
# the plain path (:func:`loads` of the whole document, dicts through :func:`dumps`).

_WS = rb"[ \t\n\r]*"  # JSON whitespace (only these four)
_GAP = re.compile(rb"\}" + _WS + rb"," + _WS + rb"\{")  # between two objects of an array
_OBJECTS_END = re.compile(rb"\}" + _WS + rb"\]")  # the end of an array of objects
_EMPTY_END = re.compile(_WS + rb"\]")  # the end of an empty array


def array_chunks(data: bytes, key: str, chunk_bytes: int = 1 << 19):
    """The document ``data`` (an object) parsed without the items of its top-level array ``key``,
    and those items as JSON arrays of about ``chunk_bytes`` each, to parse one at a time: the
    parsed items then fill the same memory again and again (on the 200k-flow ``solve`` input,
    a fraction of the page faults and of the peak memory of the whole document). Returns ``(frame, chunks)`` (an iterable of lists, None for a chunk orjson refuses: stop
    there; ``chunks.pieces`` holds the raw bytes each list was parsed from, see :class:`Chunks`),
    or None when the document does not allow an exact cut (:func:`array_region`): then parse it
    whole.

    The cuts are at ``}, {`` gaps, dropped; each chunk parses only if it holds whole items (the
    first one starts after the ``[``, so a cut inside a string or a nested value leaves a chunk
    orjson refuses). The items are then the array's, in order, and the rest of the document is
    the frame's.
    """
    region = array_region(data, key)
    if region is None:
        return None
    frame, start, end = region
    pieces = _pieces(data, start, end, chunk_bytes)
    try:
        # The last piece first: a wrong end (a '}]' one level down) is refused before the other
        # pieces are parsed.
        last = _load_piece(data, *pieces[-1]) if pieces else []
    except orjson.JSONDecodeError:
        return None
    return frame, Chunks(data, pieces, last)


def array_region(data: bytes, key: str, *, last: bool = False):
    """``(frame, start, end)``: the document ``data`` (an object) parsed with ``[]`` for its
    top-level array ``key`` (the frame), and where that array's content may lie in ``data``
    (between its ``[`` and ``data[end]``, a ``]``); or None when it cannot be told exactly.
    ``end``: the first ``}]`` after the ``[`` (or the ``]`` of an empty array), or with ``last``
    the document's last ``]`` (what ends the array when ``key`` is the last key: found at
    once from the end, where the first ``}]`` means a scan of the whole array).

    Exact: with no backslash in ``data`` every quote delimits a string and every key is written
    as is, so the one occurrence of ``"key"`` in the frame (the document with ``[]`` for that
    array: its ``[`` and ``data[end]``) is the top-level key once the frame parses with
    ``frame[key] == []``. ``end`` may still be a ``]`` inside an item (a string, a nested value)
    or after the array: a reader of ``data[start:end]`` must accept only whole items, in valid
    JSON, for the items it reads to be the array's (the document is then the frame with them).
    """
    token = b'"' + key.encode() + b'"'
    opening = re.compile(re.escape(token) + _WS + rb":" + _WS + rb"\[").search(data)
    if b"\\" in data or opening is None:
        return None
    start = opening.end()
    end = _array_end(data, start, last)
    # "key" once in the frame (in an item it is only an item's string)
    if end < 0 or data.count(token, 0, start) != 1 or data.find(token, end) >= 0:
        return None
    try:
        frame = orjson.loads(data[:start] + data[end:])
    except orjson.JSONDecodeError:
        return None
    if not isinstance(frame, dict) or frame.get(key) != []:
        return None
    return frame, start, end


def _array_end(data: bytes, start: int, last: bool) -> int:
    """Where :func:`array_region` cuts the array opened before ``start`` (-1: nowhere)."""
    if last:
        end = data.rfind(b"]")
        return end if end >= start else -1
    closing = _EMPTY_END.match(data, start)
    end = closing.end() - 1 if closing else data.find(b"}]", start) + 1  # compact: a quick find
    if end <= 0:  # indented: this array's ']' is the first after a '}' and whitespace
        closing = _OBJECTS_END.search(data, start)
        end = closing.end() - 1 if closing else -1
    return end


def _pieces(data: bytes, start: int, end: int, chunk_bytes: int) -> list[tuple[int, int]]:
    """(start, end) of each chunk: cut at the first '}, {' gap past every ``chunk_bytes``."""
    pieces = []
    while start < end:
        gap = _GAP.search(data, start + chunk_bytes, end) if start + chunk_bytes < end else None
        cut, after = (gap.start() + 1, gap.end() - 1) if gap else (end, end)
        pieces.append((start, cut))
        start = after
    return pieces


def _load_piece(data: bytes, start: int, end: int) -> list:
    return orjson.loads(b"".join((b"[", memoryview(data)[start:end], b"]")))


class Chunks:
    """:func:`array_chunks`' chunks: iterating parses them one at a time (None for a chunk orjson
    refuses, then nothing more); ``pieces[k]`` is a memoryview of the bytes chunk k was parsed
    from (``[`` + piece + ``]``, no backslash), for a compiled scan of what orjson vouched for."""

    def __init__(self, data: bytes, cuts: list[tuple[int, int]], last: list):
        self._data, self._cuts, self._last = data, cuts, last
        self.pieces = [memoryview(data)[start:end] for start, end in cuts]

    def __iter__(self):
        for start, end in self._cuts[:-1]:
            try:
                yield _load_piece(self._data, start, end)
            except orjson.JSONDecodeError:
                yield None
                return
        yield self._last


# How orjson lays out an object nested one level deep: (opening, key/value colon, separator
# before the next key, closing), for indent 2 and compact output.
OBJECT_LAYOUTS = {2: (b'{\n    "', b'": ', b',\n    "', b'\n  }'), 0: (b'{"', b'":', b',"', b'}')}


def split_strings(strings: list, glue: bytes) -> list[bytes] | None:
    """``orjson.dumps(strings)`` cut at the separators '","', each cut replaced by ``glue``
    split in two at its NUL; None when the cut would not be exact.

    Inside an encoded string a quote is escaped (\\"), so '","' starts inside a string only where
    the string holds '",', encoded '\\",': with no '\\",' in the output (a string ending in a
    backslash also makes one: then the slow path, needlessly but safely), the leftmost-first
    replacement cuts exactly at the separators (a string "," only adds a match overlapping a
    separator found first). orjson escapes control characters, so a NUL byte is ours.
    """
    body = orjson.dumps(strings)[2:-2]
    if b'\\",' in body or b"\0" in body:
        return None
    pieces = body.replace(b'","', glue).split(b"\0")
    return pieces if len(pieces) == len(strings) else None


def object_heads(strings: list, layout) -> list[bytes] | None:
    """What precedes each value in a JSON object with these keys, as orjson writes it: the
    opening or the separator, the encoded key, the colon. None: take the slow path."""
    opening, colon, comma, _ = layout
    heads = split_strings(strings, colon + b"\0" + comma) if strings else []
    if heads:
        heads[0] = opening + heads[0]
        heads[-1] += colon
    return heads


def object_json(heads: list[bytes], values: list[bytes], layout) -> bytes:
    """The JSON object {key: value} as orjson writes it, from :func:`object_heads` and the
    encoded values."""
    if not heads:
        return b"{}"
    items = [b""] * (2 * len(heads))
    items[0::2], items[1::2] = heads, values
    return b"".join(items) + layout[3]


def numbers_json(values) -> list[bytes]:
    """orjson's encoding of each float of a float64 array (non-finite -> null, as for a Python
    float): no number contains a comma. Straight from a contiguous array, in half the time of
    ``tolist`` first (its floats are written the same)."""
    if not len(values):
        return []
    if values.dtype.char == "d" and values.flags.c_contiguous:
        return orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)[1:-1].split(b",")
    return orjson.dumps([float(v) for v in values])[1:-1].split(b",")


class ObjectWriter:
    """JSON objects with the keys ``strings`` (in this order) as orjson writes them with
    ``layout`` (one of :data:`OBJECT_LAYOUTS`), written by the compiled ``write_object`` straight
    from orjson's encoding of the keys and of the values: no Python bytes object per key or per
    value (:func:`object_heads`, :func:`numbers_json`, :func:`object_json`).

    Why: on the 200k-flow ``solve`` answer cutting and joining those ~1.2M pieces was most of
    what the answer cost; written here, what is left is mostly orjson's encoding of the numbers. Exact where :func:`split_strings` is (its docstring):
    ``ok`` is False for keys it would refuse (and TypeError is raised for keys orjson refuses),
    then the caller takes its other path."""

    def __init__(self, kernels, strings: list, layout):
        self.kernels, self.count = kernels, len(strings)
        self.keys = orjson.dumps(strings)[2:-2]
        self.ok = b'\\",' not in self.keys
        self.layout = np.frombuffer(b"".join(layout), dtype=np.uint8)
        self.layout_ptr = np.cumsum([0, *map(len, layout)], dtype=np.int64)

    def numbers(self, values) -> bytes | None:
        """The object of these float64 values (non-finite: null, as :func:`numbers_json`)."""
        if values.dtype.char == "d" and values.flags.c_contiguous:
            encoded = orjson.dumps(values, option=orjson.OPT_SERIALIZE_NUMPY)[1:-1]
        else:
            encoded = orjson.dumps([float(v) for v in values])[1:-1]
        return self._write(encoded, _NO_INDEX, _NO_INDEX, len(encoded))

    def picked(self, choices: bytes, choice_ptr: np.ndarray, pick: np.ndarray) -> bytes | None:
        """The object whose k-th value is the JSON text ``choices[choice_ptr[p]:choice_ptr[p + 1]]``,
        ``p = pick[k]`` (-1: the last choice)."""
        if len(pick) != self.count:
            return None
        longest = int(np.diff(choice_ptr).max()) if len(choice_ptr) > 1 else 0
        pick = np.ascontiguousarray(pick, dtype=np.int64)
        return self._write(choices, choice_ptr, pick, longest * len(pick))

    def _write(self, values: bytes, value_ptr, pick, value_bytes: int) -> bytes | None:
        if not self.count:
            return b"{}"
        text = np.empty(len(self.keys) + value_bytes + len(self.layout) * (self.count + 1), dtype=np.uint8)
        written = self.kernels.write_object(np.frombuffer(self.keys, dtype=np.uint8),
                                            np.frombuffer(values, dtype=np.uint8), value_ptr, pick,
                                            self.layout, self.layout_ptr, text)
        return text[:written].tobytes() if written >= 0 else None


_NO_INDEX = np.empty(0, dtype=np.int64)

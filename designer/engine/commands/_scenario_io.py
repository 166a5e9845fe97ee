"""Helpers shared by the engine commands (simulate, sweep, compare, solve, nccl-tests): reading
JSON input with located errors, stderr progress, writing the JSON output.

JSON goes through orjson (a compiled codec, ~5x faster than the stdlib on the 21 MB ``solve``
instance of issue #20) with the stdlib as the fallback wherever the two differ, so what is accepted,
what is rejected and every error message stay as they were:

- reading: a document orjson refuses (``NaN``/``Infinity`` literals, integers beyond 64 bits, lone
  surrogates, a UTF-8 BOM, or plain bad JSON) is re-read by :func:`json.loads`, which accepts the
  first ones exactly as before and raises the same located error for the others;
- writing: objects orjson does not encode (a non-string key, a big integer) go through
  :func:`json.dumps`; NaN and infinities become ``null`` (the web app's ``json_safe`` convention)
  instead of the stdlib's ``allow_nan=False`` crash; key order is kept (insertion order) in both.
"""
from __future__ import annotations

import contextlib
import gc
import json
import os
import sys

import orjson

from designer.engine.errors import InvalidScenario, Problem

__all__ = ["read_json", "load_scenario", "progress_printer", "write", "loads", "dumps",
           "read_bytes", "gc_paused", "write_stdout"]


@contextlib.contextmanager
def gc_paused():
    """Pause the cyclic garbage collector while a big document is built or encoded.

    Why: parsing the 200k-flow ``solve`` instance allocates ~1.4M dicts, lists and strings; every
    700 new containers start a collection that rescans all the survivors, which costs ~3/4 of the
    parse (1.0 s against 0.25 s with the collector paused, orjson, on this machine). JSON
    documents hold no reference cycles, so nothing is left for the collector to free.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


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
            return json.loads(data.decode("utf-8") if isinstance(data, bytes) else data)


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
    data = read_bytes(path)
    try:
        return loads(data)
    except json.JSONDecodeError as exc:
        raise InvalidScenario("not JSON", [Problem(where, f"invalid JSON at line {exc.lineno} column "
                                                          f"{exc.colno}: {exc.msg}")]) from None


def load_scenario(path: str):
    """The scenario dict and a loader resolving a topology path relative to the scenario file."""
    scenario = read_json(path, path)
    if not isinstance(scenario, dict):
        raise InvalidScenario("a scenario must be a JSON object", [Problem(path, "not an object")])
    base = os.path.dirname(os.path.abspath(path)) if path != "-" else os.getcwd()
    return scenario, (lambda ref: read_json(os.path.join(base, ref), f"topology ({ref})"))


def progress_printer(quiet: bool):
    if quiet:
        return None

    def progress(fraction: float, message: str) -> None:
        print(f"[{fraction * 100:3.0f}%] {message}", file=sys.stderr, flush=True)

    return progress


def write(doc: dict, output: str | None, *, indent: int | None = 2) -> None:
    """Write ``doc`` as JSON plus a newline to ``output`` (a path) or to standard output."""
    data = dumps(doc, indent=indent) + b"\n"
    if output:
        with open(output, "wb") as out:
            out.write(data)
    else:
        write_stdout(data)


def write_stdout(data: bytes) -> None:
    """Write UTF-8 ``data`` to standard output (its byte buffer when it has one)."""
    buffer = getattr(sys.stdout, "buffer", None)
    if buffer is None:  # replaced by a text-only stream (contextlib.redirect_stdout, io.StringIO)
        sys.stdout.write(data.decode("utf-8"))
        return
    sys.stdout.flush()
    buffer.write(data)
    buffer.flush()

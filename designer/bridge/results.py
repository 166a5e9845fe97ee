"""Stored results (docs/FORMATS.md, "Stored results"): a ``fabricscope.result/1`` is kept as a small head (``data``) and its
bulk (``flows``, ``resources``, ``diff``, ``latency``) as compressed columns (``body``), in the
engine's columnar encoding (``engine.analysis.result_columns``). A failure sweep is kept whole in
``data`` with its ranking as columns (``fabricscope.sweep-columns/1``,
``engine.analysis.sweep_columns``); :func:`rows_of` is how every reader gets its records back.

:mod:`designer.models` (``SimulationResult``), migration 0004 and the API's ``?view=summary``
read and write results through here.
"""
from __future__ import annotations

from designer.engine.analysis import result_columns as columns
from designer.engine.analysis import sweep_columns
from designer.engine.analysis.result_columns import DamagedResult

__all__ = ["ENCODING", "DamagedResult", "pack", "unpack", "parts_of", "stored_document", "head_of", "rows_of",
           "summary_of", "ranked"]

#: The body's format, stored in ``SimulationResult.encoding`` ("" when there is no body).
ENCODING = columns.ENCODING


def pack(document: dict) -> tuple[dict, bytes]:
    """``(head, body)`` of a simulation result: the keys pages read, and the compressed bulk.

    Raises ``TypeError`` when a value cannot be encoded (an integer beyond 64 bits...).
    """
    return columns.pack(document)


def unpack(head: dict, body: bytes | memoryview | None) -> dict:
    """The whole document back from :func:`pack`'s parts (raises :class:`DamagedResult`)."""
    return columns.unpack(head, body)


def parts_of(document: dict) -> dict:
    """The ``SimulationResult`` field values storing ``document``: split and packed when it is a
    simulation result, else (sweeps, comparisons) whole in ``data``."""
    if str(document.get("format") or "").startswith("fabricscope.result/"):
        try:
            head, body = pack(document)
            return {"data": head, "body": body, "encoding": ENCODING}
        except TypeError:  # orjson refuses it (an integer beyond 64 bits...): store it whole
            pass
    return {"data": document, "body": None, "encoding": ""}


def stored_document(*, data: dict, body, encoding: str, label: str) -> dict:
    """The whole document of a stored row (``label`` names it in a :class:`DamagedResult`)."""
    if not encoding:
        return rows_of(data)
    if encoding != ENCODING:
        raise DamagedResult(f"{label}: unknown encoding {encoding!r}; run the job again")
    return unpack(data, body)


def head_of(document: dict) -> dict:
    """The document without its bulk keys (what ``?view=summary`` answers)."""
    return columns.split(document)[0]


def rows_of(data: dict) -> dict:
    """A document stored whole, as readers know it: a failure sweep stored columnar
    (``fabricscope.sweep-columns/1``) expanded to its ``fabricscope.sweep/1`` records; a sweep
    stored in row form (before columns) and any other document as it is.

    Raises :class:`DamagedResult` (located) when a sweep's columns do not fit its shapes.
    """
    return sweep_columns.rows(data)


def summary_of(data: dict) -> dict:
    """What ``?view=summary`` answers for a stored row's ``data``: the document without its bulk
    keys (a sweep has none: its whole ranking, in row form)."""
    return head_of(rows_of(data))


def ranked(data: dict) -> int:
    """How many failures a stored sweep ranked, in either form, without expanding it."""
    return sweep_columns.ranked(data)

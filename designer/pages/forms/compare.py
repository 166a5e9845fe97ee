"""The compare page's query: two results (``?a=<job>&b=<job>``), two designs
(``?da=<topology>[:<revision>]&db=...``), or one side only, which opens the picker for the other.

Shapes only: ids are ASCII digits (:mod:`designer.params`: malformed is a 400, an id beyond any
object a 404); whether the requester may see them is the selectors' business.
"""
from __future__ import annotations

from dataclasses import dataclass

from designer.params import MAX_ID, MAX_INT32, InvalidParam, id_param, parse_int

__all__ = ["CompareQuery", "design_param"]


def design_param(request, name: str) -> tuple[int, int | None] | None:
    """``?<name>=12`` → ``(12, None)`` (the design's current revision), ``?<name>=12:3`` →
    ``(12, 3)`` (its revision 3), absent → None.

    Raises
    ------
    InvalidParam
        Not ``<digits>`` or ``<digits>:<digits>`` (a 400).
    """
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return None
    pk, sep, number = raw.partition(":")
    if not pk or (sep and not number):
        raise InvalidParam(name, "must be a topology id, or <topology id>:<revision number>")
    return (parse_int(pk, name=name, minimum=1, maximum=MAX_ID),
            parse_int(number, name=name, minimum=1, maximum=MAX_INT32) if sep else None)


@dataclass(frozen=True)
class CompareQuery:
    """What ``/compare/`` was asked: job ids ``a``/``b``, designs ``da``/``db`` (``(topology id,
    revision number or None)``)."""

    a: int | None
    b: int | None
    da: tuple[int, int | None] | None
    db: tuple[int, int | None] | None

    @classmethod
    def from_request(cls, request) -> CompareQuery:
        return cls(a=id_param(request, "a"), b=id_param(request, "b"),
                   da=design_param(request, "da"), db=design_param(request, "db"))

    @property
    def db_value(self) -> str:
        """``db`` as the design picker's option values write it (``12:3`` or ``14``)."""
        if self.db is None:
            return ""
        return f"{self.db[0]}:{self.db[1]}" if self.db[1] is not None else str(self.db[0])

    @property
    def mode(self) -> str:
        """``results`` (two jobs), ``pick_result`` (job A only), ``designs`` (two designs),
        ``pick_design`` (design A only); ``empty`` when nothing names side A."""
        if self.a is not None:
            return "results" if self.b is not None else "pick_result"
        if self.da is not None:
            return "designs" if self.db is not None else "pick_design"
        return "empty"

"""Goodput plans through the one door: a revision's document and a plan → ``fabricscope.goodput/1``.

The engine's :func:`designer.engine.analysis.goodput.plan_goodput` (docs/ENGINE.md, "Goodput");
its located problems (``rates.nic.afr: must be a finite number >= 0``) become an
:class:`designer.exceptions.EngineValidationError`, and its floats plain JSON (an infinite MTTF
is ``null``).
"""
from __future__ import annotations

from designer.bridge.common import engine_errors, json_safe

__all__ = ["goodput_plan", "goodput_defaults"]


def goodput_plan(*, document: dict, plan: dict) -> dict:
    """The goodput of ``plan`` (a ``fabricscope.goodput-plan/1`` without its topology) on
    ``document``.

    Raises
    ------
    EngineValidationError
        Every bad field of the plan, located; an empty design (``topology.nodes``).
    """
    from designer.engine.analysis.goodput import plan_goodput

    with engine_errors():
        return json_safe(plan_goodput({**plan, "topology": document}))


def goodput_defaults() -> list[dict]:
    """The failure classes with their cited default rates, in display order: ``class``,
    ``unit``, ``effect``, ``afr`` (failures per unit-year), ``repair_hours`` and ``source``
    (what the page's rate table is prefilled with)."""
    from designer.engine.analysis.goodput.facts import CLASSES, REPAIR_HOURS

    return [{"class": c.name, "unit": c.unit, "effect": c.effect, "afr": c.afr,
             "repair_hours": REPAIR_HOURS[c.name], "source": c.source} for c in CLASSES.values()]

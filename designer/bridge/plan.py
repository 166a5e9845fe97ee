"""Physical plans through the one door: a revision's document and a plan request → ``fabricscope.plan/1``.

The engine's :func:`designer.engine.model.physical_plan.plan` (docs/ENGINE.md, "Physical plan"):
racks, cable schedule, costed BOM. Its located problems (``prices.switch:eth-51t2: must be a
number > 0 …``) become an :class:`designer.exceptions.EngineValidationError`; nothing is saved.
"""
from __future__ import annotations

from designer.bridge.common import engine_errors, json_safe

__all__ = ["physical_plan", "plan_cables_csv"]


def physical_plan(*, document: dict, request: dict | None, saved: dict | None = None) -> dict:
    """The physical plan of ``document`` with the overrides of ``request`` and, when the request
    has no ``placements`` of its own, the placements ``saved`` with the topology (each one that no
    longer fits is left automatic and flagged).

    Raises
    ------
    EngineValidationError
        Every bad field of the request, located; a document the plan cannot read.
    """
    from designer.engine.model.physical_plan import plan

    with engine_errors():
        return json_safe(plan(document, request or {}, saved_placements=saved))


def plan_cables_csv(plan: dict) -> str:
    """The cable schedule of a ``fabricscope.plan/1`` result as CSV (docs/FORMATS.md)."""
    from designer.engine.commands.plan import schedule_csv

    return schedule_csv(plan["cables"])

"""Floor-plan placements: devices moved by hand, saved with the topology (docs/FORMATS.md,
"Physical plan", placements).

One source of truth: ``Topology.plan_placements``. A save checks the placements strictly against
the plan of the current revision with the caller's plan options (the rack size and budget the
user sees), stores them with their positions filled in, and returns that plan; a problem raises
the engine's located error and nothing is saved. The caller has checked that the requester may
edit the topology.
"""
from __future__ import annotations

from django.db import transaction

from designer import selectors
from designer.models import Topology

__all__ = ["plan_placements_save", "plan_device_move", "plan_placements_reset"]


def _save(topology: Topology, request: dict, placements: dict) -> dict:
    out = selectors.physical_plan(topology=topology, request={**request, "placements": placements})
    topology.plan_placements = out["placements"]
    topology.save(update_fields=["plan_placements", "updated_at"])
    return out


def plan_placements_save(*, topology: Topology, request: dict, placements: dict) -> dict:
    """Replace the saved placements with ``placements`` (device id -> ``{rack, position}``).

    Parameters
    ----------
    request : dict
        The plan options the placements are checked against (rack, row, media …; not saved).

    Returns
    -------
    dict
        The plan with the new placements (``fabricscope.plan/1``).

    Raises
    ------
    ValidationError
        The engine's located problems (``placements.h6.rack: rack R01-01 is full …``); nothing saved.
    """
    with transaction.atomic():
        locked = Topology.objects.select_for_update().get(pk=topology.pk)
        return _save(locked, request, placements)


def plan_device_move(*, topology: Topology, request: dict, device: str, rack: str | None,
                     position: int | None = None) -> dict:
    """Move one device over the saved placements (the page's drag or keyboard move); ``rack``
    None puts it back where the automatic plan has it. Same checks and answer as
    :func:`plan_placements_save`."""
    with transaction.atomic():
        locked = Topology.objects.select_for_update().get(pk=topology.pk)
        placements = {k: v for k, v in (locked.plan_placements or {}).items() if k != device}
        if rack is not None:
            placements[device] = {"rack": rack} if position is None else {"rack": rack, "position": position}
        return _save(locked, request, placements)


def plan_placements_reset(*, topology: Topology) -> None:
    """Drop every saved placement: the floor plan is automatic again."""
    Topology.objects.filter(pk=topology.pk).update(plan_placements={})
    topology.plan_placements = {}

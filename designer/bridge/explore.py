"""The design-space explorer through the one door: a grid request checked against a revision's
design, its points for the chunks, one chunk's run and the merge (docs/FORMATS.md,
"Design-space explorer").

The job hangs on a topology (who may run it, where it is listed); its revision's ``fabric``
block (what the builder recorded) fills in the grid's ``base`` options the request leaves out,
so "explore around this design" needs only the axes and the traffic. The points are built from
those options, not from the stored document: edits made in the editor after the build are not
part of the grid (docs/ENGINE.md, "Design-space explorer").
"""
from __future__ import annotations

from designer.bridge.common import Progress, engine_errors, json_safe

__all__ = ["BASE_FROM_FABRIC", "explore_check", "explore_points", "explore_chunk_points", "run_explore_chunk",
           "merge_explore_parts"]

# What a built design's ``fabric`` block gives the grid's base (the generator's own names).
BASE_FROM_FABRIC = {"template": "template", "hosts": "hosts", "kind": "fabric", "oversubscription": "oversubscription",
                    "switch": "switch", "nic_link_tech": "nic_link_tech", "hosts_per_rack": "hosts_per_rack",
                    "planes": "planes"}


def _base_of(document: dict | None) -> dict:
    fabric = (document or {}).get("fabric") or {}
    base = {ours: fabric[theirs] for theirs, ours in BASE_FROM_FABRIC.items() if fabric.get(theirs) is not None}
    if base.get("planes") == 1:  # the default: left out so a leaf-spine axis value stays buildable
        base.pop("planes")
    if base.get("fabric") == "fat-tree":  # a fat-tree's switch may be a generic k-port one: not a catalog id
        base.pop("switch", None)
    return base


def explore_check(request: dict, document: dict | None = None) -> dict:
    """The checked grid request, its base completed from ``document``'s fabric block (the
    request's own base options win; a request that sizes the cluster itself, in hosts or GPUs,
    drops the design's host count). Raises ``EngineValidationError`` with located problems."""
    from designer.engine.analysis.explore_grid import check_request

    if isinstance(request, dict) and isinstance(request.get("base", {}), dict):
        own = request.get("base", {})
        grid = request.get("grid") if isinstance(request.get("grid"), dict) else {}
        merged = _base_of(document)
        if {"hosts", "gpus"} & (set(own) | set(grid)):
            merged.pop("hosts", None)
        request = {**request, "base": {**merged, **own}}
    with engine_errors():
        return json_safe(check_request(request))


def explore_points(job) -> list[dict]:
    """The points of an explore job (its stored, checked request), in run order."""
    from designer.engine.analysis.explore import explore_points as points

    with engine_errors():
        return json_safe(points(job.inputs))


def explore_chunk_points(points: list, i: int, n: int) -> list:
    """The points chunk ``(i, n)`` of an explore job evaluates (every n-th from the i-th)."""
    from designer.engine.analysis.explore import chunk_points

    return chunk_points(points, i, n)


def run_explore_chunk(job, chunk: tuple[int, int] | None, progress: Progress) -> dict:
    """Evaluate chunk ``(i, n)`` of an explore job's points (None: all, merged)."""
    from designer.engine.analysis.explore import explore

    with engine_errors():
        return json_safe(explore(job.inputs, chunk=chunk, progress=progress))


def merge_explore_parts(parts: list[dict]) -> dict:
    """Merge chunk parts into the ``fabricscope.explore/1`` result (frontier marked)."""
    from designer.engine.analysis.explore import merge_explore

    with engine_errors():
        return json_safe(merge_explore(parts))

"""Shared clusters (many jobs with placements) on the web side: rank where the next job goes.

The engine's :func:`designer.engine.analysis.place.rank_placements` (docs/ENGINE.md, Shared
cluster) runs each candidate placement of the new job with the running jobs in one event loop;
this module gives it a stored scenario's document and turns its refusals into located errors.
It runs inside the request: measured at 0.3 s CPU on 64 DGX H100 hosts, 1.2 s on 256 and 2.2 s
on 512 (two running jobs, one all-reduce each; docs/PERFORMANCE.md, "Place the next job inline"), so designs
over :data:`MAX_PLACE_HOSTS` hosts are refused with the limit named instead of holding a web
worker (the CLI's ``place`` has no limit).
"""
from __future__ import annotations

from designer.bridge.common import engine_errors, json_safe

__all__ = ["MAX_PLACE_HOSTS", "place_ranking"]

#: Hosts of a design whose placements are ranked inline (a request, not a job).
MAX_PLACE_HOSTS = 512


def place_ranking(scenario: dict, new_job: dict) -> dict:
    """The ``fabricscope.place/1`` ranking of ``new_job``'s candidate placements among the
    running ``jobs`` of ``scenario`` (a scenario document, :func:`designer.bridge.scenario_document`).

    Parameters
    ----------
    scenario : dict
        The scenario document; its ``jobs`` are the running jobs (a pattern workload, or none:
        an empty cluster).
    new_job : dict
        ``{"id", "job" | "patterns", "placement": {"gpus": N, "free": [...]}}`` (docs/FORMATS.md,
        Place). The design's hosts are counted first: over :data:`MAX_PLACE_HOSTS`, no work.

    Returns
    -------
    dict
        ``{"format": "fabricscope.place/1", "kind": "ranking", "job", "gpus", "running",
        "candidates": [...], "best"}``; step times in seconds.

    Raises
    ------
    EngineValidationError
        ``limit_exceeded`` at ``job`` over :data:`MAX_PLACE_HOSTS` hosts; the engine's located
        problems (``job.placement.gpus: needs 300 GPUs, only 256 are free``).
    """
    from designer.engine.analysis.place import rank_placements
    from designer.engine.errors import LimitExceeded, Problem

    groups = (scenario.get("topology") or {}).get("groups") or []
    hosts = sum(1 for g in groups if isinstance(g, dict) and g.get("kind") == "host")
    with engine_errors():
        if hosts > MAX_PLACE_HOSTS:
            message = (f"the design has {hosts:,} hosts; placements are ranked here for up to "
                       f"{MAX_PLACE_HOSTS:,} (use `python -m designer.engine place` on bigger ones)")
            raise LimitExceeded(message, [Problem("job", message)])
        ranking = rank_placements(scenario, new_job)   # a pattern workload: an empty cluster
    return json_safe({"format": "fabricscope.place/1", "kind": "ranking", **ranking})

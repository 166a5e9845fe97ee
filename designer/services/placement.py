"""Placement what-ifs of a saved scenario: where should the next job go (nothing is written).

A ranking runs inside the request, bounded by the design's size (``bridge.MAX_PLACE_HOSTS``,
measured in :mod:`designer.bridge.shared`); it is a read, kept here with the scenario's other
actions (the other bounded in-request engine reads are in ``designer/selectors/inline.py``).
"""
from __future__ import annotations

from designer import bridge
from designer.models import Scenario

__all__ = ["scenario_place"]


def scenario_place(*, scenario: Scenario, new_job: dict) -> dict:
    """Rank the candidate placements of ``new_job`` among the scenario's running jobs
    (``fabricscope.place/1``, docs/FORMATS.md, Place); a scenario with a pattern workload is an
    empty cluster. The caller has checked that the requester may view the scenario.

    Raises
    ------
    EngineValidationError
        Over ``bridge.MAX_PLACE_HOSTS`` hosts, or the engine's located problems
        (``job.placement.gpus: needs 300 GPUs, only 256 are free``).
    """
    document = bridge.scenario_document(revision=scenario.revision, workload=scenario.workload,
                                        routing=scenario.routing, failures=scenario.failures,
                                        mode=scenario.mode)
    return bridge.place_ranking(document, new_job)

"""Scenarios: the engine's scenario document from rows, its validation with the per-job flow
limit, and what a job workload holds.

Validation runs once per request (docs/ARCHITECTURE.md): a scenario saved and run in one request
is checked when it is saved, and its job is not checked again.
"""
from __future__ import annotations

from django.conf import settings

from designer.bridge.common import engine_errors

__all__ = ["scenario_document", "job_scenario_document", "scenario_flow_count",
           "validate_scenario", "job_overview", "workload_entry", "shared_jobs"]


def shared_jobs(workload) -> list | None:
    """The ``jobs`` of a stored shared-cluster workload (``{"jobs": [...]}``), else None.

    A scenario row keeps a shared cluster's jobs in its ``workload`` column as ``{"jobs":
    [...]}`` (no schema change); the API and the engine see them as the scenario's ``jobs``
    (docs/FORMATS.md, Jobs with placements)."""
    if isinstance(workload, dict) and set(workload) == {"jobs"}:
        return workload["jobs"]
    return None


def workload_entry(workload) -> dict:
    """The scenario document's ``{"workload": ...}`` or, for a stored shared cluster,
    ``{"jobs": [...]}`` (the engine refuses both together)."""
    jobs = shared_jobs(workload)
    return {"workload": workload} if jobs is None else {"jobs": jobs}


def scenario_document(*, revision, workload: list | dict, routing: dict, failures: list,
                      mode: str, latency: dict | None = None) -> dict:
    """A ``fabricscope.scenario/1`` dict for the engine from a revision row and scenario fields;
    ``latency`` (the latency view's request) only when one is asked."""
    doc = {
        "format": "fabricscope.scenario/1",
        "topology": revision.document,
        **workload_entry(workload),
        "routing": routing,
        "failures": failures,
        "mode": mode,
    }
    if latency is not None:
        doc["latency"] = latency
    return doc


def job_scenario_document(job) -> dict:
    """The scenario a job computes: its revision's document plus the inputs snapshot."""
    inputs = job.inputs or {}
    return scenario_document(revision=job.revision, workload=inputs.get("workload", []),
                             routing=inputs.get("routing", {}),
                             failures=inputs.get("failures", []),
                             mode=inputs.get("mode", "steady"),
                             latency=inputs.get("latency"))


def scenario_flow_count(normalized) -> int:
    """Flows the engine may generate for a normalized scenario, at most (no flow is built: an
    ``auto`` collective is charged its kind's most prolific algorithm, as the server's per-job
    limit must hold whatever the planner picks on the worker)."""
    from designer.engine.traffic.workloads import pattern_flow_count

    return sum(pattern_flow_count(p) for p in normalized.patterns)


def validate_scenario(scenario: dict) -> int:
    """Engine validation plus the flow-count limit; returns the flow count.

    The limit is ``FABRICSCOPE_JOB_MAX_FLOWS`` (read per call), a cheap count checked when a
    scenario is saved and when a job is submitted, so an over-limit scenario is a 400 up front,
    not a worker running out of memory minutes later.

    Raises
    ------
    EngineValidationError
        Invalid scenario (the engine's located problems, ``workload[0].bytes: ...``), or code
        ``limit_exceeded`` at ``workload`` when it makes more than the limit's flows.
    """
    from designer.engine.errors import LimitExceeded, Problem
    from designer.engine.traffic.scenario import normalize_scenario

    limit = settings.FABRICSCOPE_JOB_MAX_FLOWS
    where = "jobs" if "jobs" in scenario else "workload"
    with engine_errors():
        flows = scenario_flow_count(normalize_scenario(scenario))
        if flows > limit:
            message = (f"the workload may make up to {flows:,} flows; this server runs at most {limit:,} "
                       "per job (FABRICSCOPE_JOB_MAX_FLOWS): use fewer participants or channels")
            raise LimitExceeded(message, [Problem(where, message)])
    return flows


def job_overview(workload: dict) -> dict:
    """What a job workload (``{"job": ...}``) holds, for the scenario page (engine
    ``jobs.spec.job_overview``)."""
    from designer.engine.traffic.jobs.spec import job_overview as overview

    return overview(workload)

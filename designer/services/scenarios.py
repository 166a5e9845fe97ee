"""Scenarios: a workload, routing and failures on one revision of a topology.

Every write is checked by the engine with the per-job flow limit (:func:`designer.bridge
.validate_scenario`) before it is saved; :func:`scenario_validate` is the same check for a job
about to be submitted.
"""
from __future__ import annotations

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError

from designer import bridge
from designer.models import Scenario, Topology, TopologyRevision
from designer.params import check_printable

__all__ = ["scenario_create", "scenario_update", "scenario_delete", "scenario_validate"]

_SCENARIO_FIELDS = ("name", "description", "workload", "routing", "failures", "mode", "latency",
                    "revision")


def scenario_create(*, topology: Topology, user: AbstractBaseUser, name: str,
                    workload: list, routing: dict | None = None, failures: list | None = None,
                    mode: str = "steady", revision: TopologyRevision | None = None,
                    description: str = "", latency: dict | None = None) -> Scenario:
    """Create a scenario on ``revision`` (default: the topology's current one), engine-validated.

    ``latency``: the latency view's request (docs/FORMATS.md, Scenario), None for none."""
    revision = revision or topology.current_revision
    if revision is None:
        raise ValidationError({"revision": "the topology has no revision yet"})
    scenario = Scenario(topology=topology, revision=revision, name=name, description=description,
                        workload=workload, routing=routing or {}, failures=failures or [],
                        mode=mode, latency=latency, created_by=user)
    _scenario_check(scenario)
    scenario.save()
    return scenario


def scenario_update(*, scenario: Scenario, user: AbstractBaseUser, **changes) -> Scenario:
    """Change any of name, description, workload, routing, failures, mode, latency, revision."""
    unknown = set(changes) - set(_SCENARIO_FIELDS)
    if unknown:
        raise ValidationError({field: "cannot be changed" for field in sorted(unknown)})
    for field, value in changes.items():
        setattr(scenario, field, value)
    _scenario_check(scenario)
    scenario.save(update_fields=[*changes, "updated_at"])
    return scenario


def scenario_delete(*, scenario: Scenario) -> None:
    """Delete a scenario; its jobs and results stay (their inputs are a snapshot)."""
    scenario.delete()


def scenario_validate(scenario: Scenario, *, failures: list[dict] | None = None) -> int:
    """Check a scenario as the engine will run it, with ``failures`` instead of its own when
    given (a what-if job); returns its flow count.

    Raises
    ------
    EngineValidationError
        The engine's located problems, or ``limit_exceeded`` over FABRICSCOPE_JOB_MAX_FLOWS.
    """
    return bridge.validate_scenario(bridge.scenario_document(
        revision=scenario.revision, workload=scenario.workload, routing=scenario.routing,
        failures=scenario.failures if failures is None else failures, mode=scenario.mode,
        latency=scenario.latency))


def _scenario_check(scenario: Scenario) -> None:
    scenario.full_clean()
    check_printable(scenario.name)  # no control or bidi-override characters
    scenario_validate(scenario)  # engine checks + flow-count limit

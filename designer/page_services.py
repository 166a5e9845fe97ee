"""Writes behind the HTML forms: each turns a validated form into calls of ``designer.services``.

Kept apart from ``designer.services`` because they speak forms (which submit button, which
fields), while services speak domain objects. Business rules stay in services; the only direct
model writes here are API tokens (DRF's ``Token``), which services do not cover yet.
"""
from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from designer import bridge, services
from designer.models import Scenario, SimulationJob, Topology

__all__ = ["topology_new", "scenario_submit", "scenario_run"]


def topology_new(*, user, form) -> Topology:
    """Create a topology from :class:`designer.forms.TopologyNewForm` (blank, host, cluster).

    Raises
    ------
    ValidationError
        Duplicate name, or the engine's located error for a bad cluster spec.
    """
    data = form.cleaned_data
    common = {"owner": user, "name": data["name"], "description": data["description"]}
    if data["source"] == "cluster":
        return services.topology_build(template=data["template"], hosts=data["hosts"],
                                       fabric=data["fabric"], options=form.cluster_options(),
                                       **common)
    if data["source"] == "host":
        document = bridge.host_document(template=data["template"], host_id="h0", name=data["name"])
        return services.topology_create(document=document,
                                        message=f"from template {data['template']}", **common)
    return services.topology_create(**common)


def scenario_submit(*, user, topology: Topology, scenario: Scenario | None, form, formset,
                    action: str) -> tuple[Scenario, SimulationJob | None]:
    """Save the scenario from the builder's forms, then run it if ``action`` asks.

    ``action``: ``save``, ``simulate``, ``sweep`` or ``compare``. The save and the job are one
    transaction: a refused job (e.g. no sweep class ticked) does not leave a half-done save.
    """
    fields = {"name": form.cleaned_data["name"], "description": form.cleaned_data["description"],
              "workload": [f.pattern() for f in formset.forms], "routing": form.routing(),
              "failures": form.failures(), "mode": form.cleaned_data["mode"]}
    with transaction.atomic():
        if scenario is None:
            scenario = services.scenario_create(topology=topology, user=user, **fields)
        else:
            scenario = services.scenario_update(scenario=scenario, user=user, **fields)
        job = _run(action, scenario, user, form.cleaned_data)
    return scenario, job


def scenario_run(*, user, scenario: Scenario, action: str, data: dict,
                 failures: list[dict] | None = None) -> SimulationJob:
    """Run a saved scenario without changing it (a viewer's run: they may not save it).

    ``failures``, when given, replace the scenario's for this job only (a what-if); the job is
    owned by ``user`` and the scenario stays as saved.
    """
    job = _run(action, scenario, user, data, failures)
    if job is None:
        raise ValidationError({"action": "choose simulate, sweep or compare"})
    return job


def _run(action: str, scenario: Scenario, user, data: dict,
         failures: list[dict] | None = None) -> SimulationJob | None:
    if action == "simulate":
        return services.job_submit_simulate(scenario=scenario, user=user, failures=failures)
    if action == "sweep":
        if not data.get("sweep_over"):
            raise ValidationError({"over": "tick at least one failure class to sweep over"})
        return services.job_submit_sweep(scenario=scenario, user=user, over=data["sweep_over"],
                                         failures=failures)
    if action == "compare":
        if len(data.get("policies") or []) < 2:
            raise ValidationError({"policies": "tick at least two policies to compare"})
        return services.job_submit_compare(scenario=scenario, user=user,
                                           policies=data["policies"], failures=failures)
    return None

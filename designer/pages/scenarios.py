"""The scenario builder: a new scenario of a topology, or a saved one; a viewer's run of it.

A POST is one service call: ``services.scenario_submit`` (save, then run as the button asks) for
those who may edit, ``services.scenario_run`` (run the saved scenario, what-if failures allowed)
for viewers. The page's forms taken together are :class:`ScenarioPageForms`.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render

from designer import selectors, services
from designer.pages import selectors as pages
from designer.pages.forms.cluster_jobs import MAX_PICKER_HOSTS, PLACEMENT_POLICIES
from designer.pages.forms.scenarios import PATTERN_KINDS, ScenarioPageForms, ScenarioRunForm
from designer.params import id_param

__all__ = ["scenario_new", "scenario_edit", "scenario_targets"]


@login_required
def scenario_new(request, pk: int):
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="edit")
    if topology.current_revision_id is None:
        messages.error(request, "Save a first revision in the editor before adding scenarios.")
        return redirect("topology_detail", pk=pk)
    return _scenario_page(request, topology, None)


@login_required
def scenario_edit(request, pk: int):
    scenario = selectors.scenario_get(user=request.user, pk=pk)
    return _scenario_page(request, scenario.topology, scenario)


def _scenario_page(request, topology, scenario):
    """Builder page: GET shows it; POST saves and, per the button pressed, runs a job."""
    revision = scenario.revision if scenario else pages.revision_head(topology.current_revision_id)
    targets = {**pages.scenario_targets(revision),
               "unknown": lambda ids: pages.unknown_targets(revision, ids)}
    readonly = not selectors.topology_can(request.user, topology, "edit")
    if readonly and request.method == "POST":
        return _scenario_run(request, scenario, targets)
    page = ScenarioPageForms(request, scenario=scenario, targets=targets, revision=revision,
                             host_count=len(pages.host_list(revision)))   # Chakra traces map onto its GPUs
    if page.is_valid():
        try:
            scenario, job = services.scenario_submit(user=request.user, topology=topology,
                                                     scenario=scenario, **page.service_args())
        except ValidationError as exc:
            page.attach(exc)
        else:
            messages.success(request, f"Saved scenario {scenario.name}.")
            return redirect("job_detail", pk=job.pk) if job else redirect(
                "scenario_edit", pk=scenario.pk)
    return render(request, "designer/scenario_form.html", {
        "topology": topology, "scenario": scenario, "revision": revision, **page.context(),
        "targets": targets, "readonly": readonly,
        "job_overview": pages.job_overview(page.job_workload()),
        "cluster_picker": {**pages.picker_hosts(revision, MAX_PICKER_HOSTS), "policies": PLACEMENT_POLICIES,
                           "kinds": PATTERN_KINDS}}, status=page.status())


@login_required
def scenario_targets(request, pk: int):
    """The failure picker's search: ``?q=<text>`` (and ``revision=<id>``, a revision of this
    topology, default its current one) -> the first ``TARGET_SEARCH_LIMIT`` groups, nodes and
    links whose id or label holds it, as JSON (the page never embeds all 300k of a big design)."""
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="view")
    revision_id = id_param(request, "revision") if "revision" in request.GET else topology.current_revision_id
    revision = pages.revision_head(revision_id) if revision_id is not None else None
    if revision is None or revision.topology_id != topology.pk:
        raise Http404("no such revision of this topology")
    return JsonResponse(pages.scenario_target_search(revision, request.GET.get("q", "")))


def _scenario_run(request, scenario, targets):
    """A viewer's POST: run the saved scenario, with this run's failures when the page's what-if
    section sent them (a job of the viewer's; the scenario is never saved)."""
    selectors.topology_require(request.user, scenario.topology, "run")
    form = ScenarioRunForm(request.POST, targets=targets)
    if not form.is_valid() and "action" in form.errors:
        raise PermissionDenied("viewers can only run this scenario, not save it")
    if form.errors:
        messages.error(request, "; ".join(f"{form.fields[f].label or f}: {e}"
                                          for f, errs in form.errors.items() for e in errs))
        return redirect("scenario_edit", pk=scenario.pk)
    try:
        job = services.scenario_run(user=request.user, scenario=scenario,
                                    **form.service_args(scenario))
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
        return redirect("scenario_edit", pk=scenario.pk)
    return redirect("job_detail", pk=job.pk)

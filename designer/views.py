"""HTML pages. Thin: read through selectors with the requesting user (another user's object is
a 404), write through services, render. Every page but sign-in requires a session.
"""
from __future__ import annotations


from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_POST

from designer import bridge, editor_document, page_selectors, page_services, selectors, services
from designer.exceptions import IllegalTransition
from designer.params import id_param, int_param
from designer.forms import (
    JobWorkloadForm, PatternForm, PatternFormSet, ScenarioForm, ScenarioRunForm, TopologyNewForm,
    attach_errors)

__all__ = ["home", "topology_list", "topology_new", "topology_detail", "revision_diff", "editor",
           "host_matrix", "scenario_new", "scenario_edit", "job_detail", "job_status",
           "job_cancel", "result_view", "compare_view", "profile", "token_create",
           "token_revoke"]


@login_required
def home(request):
    return redirect("topology_list")


@login_required
def topology_list(request):
    q, sort = request.GET.get("q", "").strip(), request.GET.get("sort", "updated")
    tab = "shared" if request.GET.get("tab") == "shared" else "mine"
    role = request.GET.get("role") if request.GET.get("role") in ("viewer", "editor") else ""
    owner = request.GET.get("owner", "").strip()
    rows = page_selectors.topology_search(user=request.user, q=q, sort=sort, tab=tab,
                                          role=role, owner=owner)
    return render(request, "designer/topology_list.html", {
        "topologies": rows, "q": q, "sort": sort, "tab": tab, "role": role, "owner": owner,
        "owners": page_selectors.shared_owners(user=request.user) if tab == "shared" else [],
        "sorts": page_selectors.TOPOLOGY_SORTS})


@login_required
def topology_new(request):
    form = TopologyNewForm(request.POST or None, templates=page_selectors.template_choices())
    if form.is_valid():
        try:
            topology = page_services.topology_new(user=request.user, form=form)
        except ValidationError as exc:
            attach_errors(exc, form)
        else:
            messages.success(request, f"Created {topology.name} "
                                      f"({topology.host_count} hosts, {topology.gpu_count} GPUs).")
            return redirect("topology_detail", pk=topology.pk)
    return render(request, "designer/topology_new.html", {"form": form}, status=_status(form))


@login_required
def topology_detail(request, pk: int):
    topology = selectors.topology_get(user=request.user, pk=pk)
    return render(request, "designer/topology_detail.html", {
        "topology": topology,
        **page_selectors.topology_access(user=request.user, topology=topology),
        "revisions": selectors.revision_list(user=request.user, topology_pk=pk)[:50],
        "scenarios": selectors.scenario_list(user=request.user, topology_pk=pk),
        "jobs": page_selectors.recent_jobs(user=request.user, topology_pk=pk),
        "hosts": page_selectors.host_list(topology.current_revision)[:1],
        "bom": bridge.revision_bom(topology.current_revision)})


@login_required
def revision_diff(request, pk: int):
    topology = selectors.topology_get(user=request.user, pk=pk)
    b = int_param(request, "b", default=topology.revision_number)
    a = int_param(request, "a", default=max(1, b - 1))
    context = page_selectors.revision_diff(user=request.user, topology_pk=pk, a=a, b=b)
    revisions = selectors.revision_list(user=request.user, topology_pk=pk)
    return render(request, "designer/revision_diff.html",
                  {**context, "topology": topology, "revisions": revisions, "a": a, "b": b})


@login_required
def editor(request, pk: int):
    topology = selectors.topology_get(user=request.user, pk=pk)
    if "document" in request.GET:  # the page's document, fetched beside it (editor_document.py)
        revision_id = id_param(request, "document")
        if revision_id is None:
            raise Http404("no such revision")
        return editor_document.document_response(request, topology.pk, revision_id)
    document_url = (f"{request.path}?document={topology.current_revision_id}"
                    if topology.current_revision_id is not None else None)
    config = page_selectors.editor_config(topology=topology, user=request.user,
                                          csrf_token=get_token(request),  # readonly by role
                                          document_url=document_url)
    # The Generate dialog is the New page's cluster form (one form, _build_form.html).
    build_form = TopologyNewForm(templates=page_selectors.template_choices())
    return render(request, "designer/editor.html",
                  {"topology": topology, "editor_config": config, "full_bleed": True,
                   "build_form": build_form,
                   "editor_config_script": page_selectors.editor_config_script(config)})


@login_required
def host_matrix(request, pk: int):
    topology = selectors.topology_get(user=request.user, pk=pk)
    hosts = page_selectors.host_list(topology.current_revision)
    if not hosts:
        raise Http404("this topology has no host yet")
    host = request.GET.get("host") or hosts[0]["id"]
    matrix = page_selectors.host_matrix(topology.current_revision, host)
    return render(request, "designer/host_matrix.html",
                  {"topology": topology, "hosts": hosts, "host": host, "matrix": matrix})


@login_required
def scenario_new(request, pk: int):
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="edit")
    if topology.current_revision is None:
        messages.error(request, "Save a first revision in the editor before adding scenarios.")
        return redirect("topology_detail", pk=pk)
    return _scenario_page(request, topology, None)


@login_required
def scenario_edit(request, pk: int):
    scenario = selectors.scenario_get(user=request.user, pk=pk)
    return _scenario_page(request, scenario.topology, scenario)


def _scenario_page(request, topology, scenario):
    """Builder page: GET shows it; POST saves and, per the button pressed, runs a job."""
    revision = scenario.revision if scenario else topology.current_revision
    targets = page_selectors.scenario_targets(revision)
    readonly = not selectors.topology_can(request.user, topology, "edit")
    if readonly and request.method == "POST":
        return _scenario_run(request, topology, scenario, targets)
    form, formset = _scenario_forms(request, scenario, targets)
    job_form = (JobWorkloadForm(request.POST, request.FILES) if request.method == "POST"
                else JobWorkloadForm(initial=JobWorkloadForm.initial_from(scenario)))
    is_job = request.method == "POST" and job_form.is_valid() and job_form.is_job()
    action = request.POST.get("action", "save")
    if request.method == "POST" and action == "import" and "workload_file" not in request.FILES:
        job_form.is_valid()                     # cleaned first: add_error needs cleaned_data
        job_form.add_error("workload_file", "choose a workload file to import")
    # "import" only converts the uploaded file and shows it; nothing is saved.
    if (request.method == "POST" and action != "import" and form.is_valid() and job_form.is_valid()
            and (is_job or formset.is_valid())):
        try:
            scenario, job = (_job_scenario_submit(request.user, topology, scenario, form,
                                                  job_form.workload(), action) if is_job else
                             page_services.scenario_submit(
                                 user=request.user, topology=topology, scenario=scenario,
                                 form=form, formset=formset, action=action))
        except ValidationError as exc:
            rest = job_form.attach(exc) if is_job else exc
            if rest is not None:
                attach_errors(rest, form, formset)
        else:
            messages.success(request, f"Saved scenario {scenario.name}.")
            return redirect("job_detail", pk=job.pk) if job else redirect(
                "scenario_edit", pk=scenario.pk)
    return render(request, "designer/scenario_form.html", {
        "topology": topology, "scenario": scenario, "revision": revision, "form": form,
        "formset": formset, "targets": targets, "readonly": readonly, "job_form": job_form,
        "job_overview": _job_overview(job_form, scenario)},
        status=_status(form, job_form, *(() if is_job else (formset,))))


def _job_scenario_submit(user, topology, scenario, form, workload: dict, action: str):
    """``page_services.scenario_submit`` for a job workload (the pattern formset is unused):
    save, then run per ``action``, in one transaction."""
    from django.db import transaction

    fields = {"name": form.cleaned_data["name"], "description": form.cleaned_data["description"],
              "workload": workload, "routing": form.routing(), "failures": form.failures(),
              "mode": form.cleaned_data["mode"]}
    with transaction.atomic():
        if scenario is None:
            scenario = services.scenario_create(topology=topology, user=user, **fields)
        else:
            scenario = services.scenario_update(scenario=scenario, user=user, **fields)
        job = (None if action == "save" else page_services.scenario_run(
            user=user, scenario=scenario, action=action, data=form.cleaned_data))
    return scenario, job


def _job_overview(job_form, scenario) -> dict | None:
    """What the page's job holds (imported or saved): ``engine.jobs.spec.job_overview``."""
    from designer.engine.traffic.jobs.spec import job_overview

    if job_form.is_bound:
        workload = job_form.cleaned_data.get("workload") if hasattr(job_form, "cleaned_data") else None
    else:
        workload = scenario.workload if scenario and isinstance(scenario.workload, dict) else None
    return job_overview(workload) if workload else None


def _scenario_run(request, topology, scenario, targets):
    """A viewer's POST: run the saved scenario, with this run's failures when the page's what-if
    section sent them (a job of the viewer's; the scenario is never saved)."""
    selectors.topology_require(request.user, topology, "run")
    form = ScenarioRunForm(request.POST, targets=targets)
    if not form.is_valid() and "action" in form.errors:
        raise PermissionDenied("viewers can only run this scenario, not save it")
    if form.errors:
        messages.error(request, "; ".join(f"{form.fields[f].label or f}: {e}"
                                          for f, errs in form.errors.items() for e in errs))
        return redirect("scenario_edit", pk=scenario.pk)
    try:
        job = page_services.scenario_run(user=request.user, scenario=scenario,
                                         action=form.cleaned_data["action"], data=form.cleaned_data,
                                         failures=form.what_if_failures(scenario.failures))
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
        return redirect("scenario_edit", pk=scenario.pk)
    return redirect("job_detail", pk=job.pk)


def _scenario_forms(request, scenario, targets):
    if request.method == "POST":
        return (ScenarioForm(request.POST, targets=targets),
                PatternFormSet(request.POST, prefix="pattern"))
    initial = ScenarioForm.initial_from(scenario) if scenario else {"name": "all-reduce"}
    # A job's patterns live in its phases: the pattern list starts from the default one.
    patterns = ([PatternForm.initial_from(p) for p in scenario.workload]
                if scenario and isinstance(scenario.workload, list)
                else [{"pid": "ar", "kind": "allreduce"}])
    return (ScenarioForm(initial=initial, targets=targets),
            PatternFormSet(initial=patterns, prefix="pattern"))


@login_required
def job_detail(request, pk: int):
    job = selectors.job_get(user=request.user, pk=pk)
    can_cancel = selectors.topology_can(request.user, job.topology,
                                        selectors.job_cancel_action(request.user, job))
    return render(request, "designer/job_detail.html", {
        "job": job, "status": page_selectors.job_status(job), "can_cancel": can_cancel,
        "can_edit": selectors.topology_can(request.user, job.topology, "edit")})


@login_required
def job_status(request, pk: int):
    job = selectors.job_get(user=request.user, pk=pk)
    return JsonResponse(page_selectors.job_status(job))


@login_required
@require_POST
def job_cancel(request, pk: int):
    job = selectors.job_get(user=request.user, pk=pk)
    selectors.topology_require(request.user, job.topology,
                               selectors.job_cancel_action(request.user, job))
    try:
        services.job_cancel(job=job, user=request.user)
        messages.info(request, f"Cancellation of job {job.pk} requested.")
    except IllegalTransition:
        messages.warning(request, f"Job {job.pk} had already finished ({job.state}).")
    return redirect("job_detail", pk=pk)


# Gzipped: a 1,024-GPU result page is ~1 MB of figure JSON (~6x smaller compressed). BREACH: the
# page reflects no request input and holds no secret but Django's per-response masked CSRF token.
@gzip_page
@login_required
def result_view(request, job_id: int):
    job = selectors.job_get(user=request.user, pk=job_id)
    result = selectors.result_get(user=request.user, job_pk=job_id)
    context = page_selectors.result_context(job=job, result=result.data,
                                            selected=int_param(request, "failure", default=None))
    return render(request, "designer/result.html", {
        "job": job, "result": result.data, **context,
        "can_share": selectors.topology_can(request.user, job.topology, "manage")})


@login_required
def compare_view(request):
    a = selectors.result_get(user=request.user, job_pk=id_param(request, "a", default=0))
    b = selectors.result_get(user=request.user, job_pk=id_param(request, "b", default=0))
    context = page_selectors.compare_context(a=a.data, b=b.data)
    context.update(page_selectors.compare_bom_context(
        revision_a=getattr(a.job, "revision", None), revision_b=getattr(b.job, "revision", None)))
    return render(request, "designer/compare.html", {
        "job_a": a.job, "job_b": b.job, "a": a.data, "b": b.data,
        "a_label": f"job {a.job_id}", "b_label": f"job {b.job_id}", **context})


@login_required
def profile(request):
    return render(request, "designer/profile.html", {
        "token": selectors.api_token_get(user=request.user),
        "new_key": request.session.pop("new_api_token", None)})


@login_required
@require_POST
def token_create(request):
    # Shown once: kept in the session only until the next profile page render pops it.
    request.session["new_api_token"] = services.api_token_rotate(user=request.user).key
    messages.success(request, "New API token created. Copy it now: it will not be shown again.")
    return redirect("profile")


@login_required
@require_POST
def token_revoke(request):
    revoked = services.api_token_revoke(user=request.user)
    messages.info(request, "API token revoked." if revoked else "You had no API token.")
    return redirect("profile")


def _status(*forms) -> int:
    """400 when a bound form or formset shows errors (so tests and scripts can tell)."""
    def failed(f):
        return f.total_error_count() if hasattr(f, "total_error_count") else f.errors
    return 400 if any(f.is_bound and failed(f) for f in forms) else 200

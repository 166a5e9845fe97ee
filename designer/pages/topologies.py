"""Topology pages: the list, New, the topology's page, revision diffs, the editor, host matrices.

Thin: reads through selectors with the requesting user (another user's object is a 404), each
form action is one service call, then render. Every page requires a session.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.middleware.csrf import get_token
from django.shortcuts import redirect, render

from designer import editor_document, selectors, services
from designer.pages import selectors as pages
from designer.pages.digest_cache import page_digest
from designer.pages.exports import export_menu
from designer.pages.forms.errors import attach_errors, form_status
from designer.pages.forms.topologies import TopologyNewForm
from designer.params import id_param, int_param

__all__ = ["home", "topology_list", "topology_new", "topology_detail", "revision_diff", "editor",
           "host_matrix"]


@login_required
def home(request):
    return redirect("topology_list")


@login_required
def topology_list(request):
    q, sort = request.GET.get("q", "").strip(), request.GET.get("sort", "updated")
    tab = "shared" if request.GET.get("tab") == "shared" else "mine"
    role = request.GET.get("role") if request.GET.get("role") in ("viewer", "editor") else ""
    owner = request.GET.get("owner", "").strip()
    rows = selectors.topology_search(user=request.user, q=q, sort=sort, tab=tab, role=role,
                                     owner=owner)
    return render(request, "designer/topology_list.html", {
        "topologies": rows, "q": q, "sort": sort, "tab": tab, "role": role, "owner": owner,
        "owners": selectors.shared_owners(user=request.user) if tab == "shared" else [],
        "sorts": selectors.TOPOLOGY_SORTS})


@login_required
def topology_new(request):
    form = TopologyNewForm(request.POST or None, templates=pages.template_choices())
    if form.is_valid():
        try:
            topology, job = services.topology_start(owner=request.user, **form.service_args())
        except ValidationError as exc:
            attach_errors(exc, form)
        else:
            if job is not None:  # a large build: the job page follows it and opens the topology
                messages.info(request, f"Building {topology.name} on a worker "
                                       f"({form.cleaned_data['hosts']:,} hosts).")
                return redirect("job_detail", pk=job.pk)
            messages.success(request, f"Created {topology.name} "
                                      f"({topology.host_count} hosts, {topology.gpu_count} GPUs).")
            return redirect("topology_detail", pk=topology.pk)
    return render(request, "designer/topology_new.html", {"form": form},
                  status=400 if form_status(form) else 200)


@login_required
def topology_detail(request, pk: int):
    # Fetched and checked once; the selectors below take the checked topology, not its pk.
    topology = selectors.topology_get(user=request.user, pk=pk)
    return render(request, "designer/topology_detail.html", {
        "topology": topology,
        **selectors.topology_access(user=request.user, topology=topology),
        "revisions": selectors.revision_list(user=request.user, topology=topology)[:50],
        "scenarios": selectors.scenario_list(user=request.user, topology=topology),
        "jobs": selectors.recent_jobs(user=request.user, topology=topology),
        "export_formats": export_menu(pk) if topology.current_revision_id else [],
        # From the revision's digest: this page never reads the (up to 40 MB) document.
        **_revision_digest_context(pages.revision_head(topology.current_revision_id))})


def _revision_digest_context(revision) -> dict:
    # Kept per process by document checksum (designer/pages/digest_cache.py), looked up only
    # after topology_get above has checked that this user may see the topology.
    return page_digest(revision)


@login_required
def revision_diff(request, pk: int):
    topology = selectors.topology_get(user=request.user, pk=pk)
    b = int_param(request, "b", default=topology.revision_number)
    a = int_param(request, "a", default=max(1, b - 1))
    context = pages.revision_diff(user=request.user, topology_pk=pk, a=a, b=b)
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
    config = pages.editor_config(topology=topology, user=request.user,
                                 csrf_token=get_token(request),  # readonly by role
                                 document_url=document_url)
    # The Generate dialog is the New page's cluster form (one form, _build_form.html).
    build_form = TopologyNewForm(templates=pages.template_choices())
    return render(request, "designer/editor.html",
                  {"topology": topology, "editor_config": config, "full_bleed": True,
                   "build_form": build_form,
                   "editor_config_script": pages.editor_config_script(config)})


@login_required
def host_matrix(request, pk: int):
    topology = selectors.topology_get(user=request.user, pk=pk)
    hosts = pages.host_list(pages.revision_head(topology.current_revision_id))
    if not hosts:
        raise Http404("this topology has no host yet")
    host = request.GET.get("host") or hosts[0]["id"]
    matrix = pages.host_matrix(topology.current_revision_id, host)
    return render(request, "designer/host_matrix.html",
                  {"topology": topology, "hosts": hosts, "host": host, "matrix": matrix})

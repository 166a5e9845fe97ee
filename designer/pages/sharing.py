"""Sharing pages: the owner's sharing page and its actions, fork, and the read-only
pages a share link opens without an account (``/s/<token>/...``).

Thin like every page: every check is ``selectors.topology_get_for`` / ``topology_require`` (404
unseen, 403 not allowed), every write one service call.
"""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_POST

from designer import editor_document, selectors, services
from designer.figures.result import page_view
from designer.pages import selectors as pages
from designer.pages.explore import explore_page_context
from designer.pages.forms.sharing import ForkForm, ShareGrantForm, ShareLinkForm, TransferForm
from designer.params import id_param, int_param
from designer.selectors import ShareLinkVisitor

__all__ = ["sharing", "share_grant", "share_role", "share_revoke", "link_create", "link_revoke",
           "transfer", "delete", "fork", "link_home", "link_editor", "link_hosts",
           "link_result"]


# --- The owner's sharing page (owner manages; editors may look) ----------------------------------

@login_required
def sharing(request, pk: int):
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="audit")
    is_owner = selectors.topology_can(request.user, topology, "manage")
    return render(request, "designer/sharing.html", {  # the checked topology passed on
        "topology": topology, "is_owner": is_owner,
        "shares": selectors.share_list(user=request.user, topology=topology),
        "links": (selectors.share_link_list(user=request.user, topology=topology)
                  if is_owner else []),
        "jobs": selectors.job_list(user=request.user, topology=topology, state="succeeded")[:50],
        "audit": selectors.audit_list(user=request.user, topology=topology)[:100],
        "grant_form": ShareGrantForm(), "link_form": ShareLinkForm(),
        "transfer_form": TransferForm(),
        "new_link": request.session.pop("new_share_link", None) if is_owner else None})


def _managed(request, pk: int):
    return selectors.topology_get_for(user=request.user, pk=pk, action="manage")


def _done(request, pk: int, call, ok: str):
    """Run a service call; flash its outcome and go back to the sharing page."""
    try:
        call()
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
    else:
        messages.success(request, ok)
    return redirect("sharing", pk=pk)


@login_required
@require_POST
def share_grant(request, pk: int):
    topology = _managed(request, pk)
    form = ShareGrantForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Give a username (or team name) and a role.")
        return redirect("sharing", pk=pk)
    role = form.cleaned_data["role"]
    return _done(request, pk, lambda: services.share_grant(
        topology=topology, actor=request.user, role=role, **form.grantee()),
        f"Shared with {form.cleaned_data['name']} as {role}.")


@login_required
@require_POST
def share_role(request, pk: int, share_id: int):
    share = selectors.share_get(user=request.user, topology_pk=pk, pk=share_id, action="manage")
    role = request.POST.get("role", "")
    return _done(request, pk, lambda: services.share_update(share=share, actor=request.user,
                                                            role=role),
                 f"{share.grantee} is now {role}.")


@login_required
@require_POST
def share_revoke(request, pk: int, share_id: int):
    share = selectors.share_get(user=request.user, topology_pk=pk, pk=share_id, action="manage")
    return _done(request, pk, lambda: services.share_revoke(share=share, actor=request.user),
                 f"Revoked {share.grantee}'s access.")


@login_required
@require_POST
def link_create(request, pk: int):
    topology = _managed(request, pk)
    form = ShareLinkForm(request.POST)
    if not form.is_valid():
        messages.error(request, "Expiry must be between 1 and 365 days.")
        return redirect("sharing", pk=pk)
    job = None
    if form.cleaned_data.get("job"):
        job = selectors.job_get(user=request.user, pk=form.cleaned_data["job"])

    def create():
        link, token = services.share_link_create(
            topology=topology, actor=request.user, job=job, expires_at=form.expires_at(),
            label=form.cleaned_data.get("label") or "")
        # Shown once, on the next render of the sharing page (only its hash is stored).
        request.session["new_share_link"] = {
            "url": request.build_absolute_uri(reverse("link_home", args=[token])),
            "what": f"result of job {job.pk}" if job else "topology"}
    return _done(request, pk, create, "Read-only link created: copy it now, it is shown once.")


@login_required
@require_POST
def link_revoke(request, pk: int, link_id: int):
    link = selectors.share_link_get(user=request.user, topology_pk=pk, pk=link_id)
    return _done(request, pk, lambda: services.share_link_revoke(link=link, actor=request.user),
                 "Link revoked: it no longer opens anything.")


@login_required
@require_POST
def transfer(request, pk: int):
    topology = _managed(request, pk)
    form = TransferForm(request.POST)
    username = form.cleaned_data["username"] if form.is_valid() else ""
    new_owner = selectors.user_by_username(username=username)
    if new_owner is None:
        messages.error(request, f"No active user named {username!r}.")
        return redirect("sharing", pk=pk)
    try:
        services.topology_transfer(topology=topology, actor=request.user, new_owner=new_owner)
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
        return redirect("sharing", pk=pk)
    messages.success(request, f"{username} now owns {topology.name}; you keep editor access.")
    return redirect("topology_detail", pk=pk)


@login_required
@require_POST
def delete(request, pk: int):
    topology = _managed(request, pk)
    if request.POST.get("confirm") != topology.name:
        messages.error(request, "Type the topology's name to confirm the deletion.")
        return redirect("sharing", pk=pk)
    services.topology_delete(topology=topology, actor=request.user)
    messages.success(request, f"Deleted {topology.name}.")
    return redirect("topology_list")


@login_required
@require_POST
def fork(request, pk: int):
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="fork")
    form = ForkForm(request.POST)
    name = form.cleaned_data.get("name") if form.is_valid() else None
    try:
        copy = services.topology_fork(topology=topology, user=request.user, name=name)
    except ValidationError as exc:
        messages.error(request, "; ".join(exc.messages))
        return redirect("topology_detail", pk=pk)
    messages.success(request, f"Forked into your space as {copy.name}.")
    return redirect("topology_detail", pk=copy.pk)


# --- Share-link pages: no account, read-only ------------------------------------------------------
# The token is in the URL; the visitor passes through the same selectors as everyone else.

def _visitor(token: str) -> ShareLinkVisitor:
    return ShareLinkVisitor(selectors.share_link_resolve(token))


def _link_render(request, template: str, context: dict):
    response = render(request, template, {**context, "share_mode": True})
    # Tokens are in the URL: never send it on as a Referer, never let a shared cache keep it.
    response["Referrer-Policy"] = "no-referrer"
    response["X-Robots-Tag"] = "noindex, nofollow"
    return response


@never_cache
def link_home(request, token: str):
    visitor = _visitor(token)
    if visitor.link.job_id is not None:
        return redirect("link_result", token=token, job_id=visitor.link.job_id)
    topology = selectors.topology_get(user=visitor, pk=visitor.link.topology_id)
    return _link_render(request, "designer/link_topology.html", {
        "topology": topology, "token": token, "link": visitor.link,
        "revisions": selectors.revision_list(user=visitor, topology_pk=topology.pk)[:50],
        "scenarios": selectors.scenario_list(user=visitor, topology_pk=topology.pk),
        "jobs": selectors.recent_jobs(user=visitor, topology_pk=topology.pk, limit=20),
        # From the revision's digest, as the topology page: the document is not read here.
        "hosts": pages.host_list(pages.revision_head(topology.current_revision_id))[:1]})


@never_cache
def link_editor(request, token: str):
    visitor = _visitor(token)
    topology = selectors.topology_get(user=visitor, pk=visitor.link.topology_id)
    current = topology.current_revision_id
    if "document" in request.GET:  # the document fetched beside the page, as the editor's own
        if current is None or id_param(request, "document") != current:
            raise Http404("a share link shows the current revision only")
        response = editor_document.document_response(request, topology.pk, current)
        response["Referrer-Policy"] = "no-referrer"
        return response
    config = pages.link_editor_config(
        topology=topology, link_url=reverse("link_home", args=[token]),
        document_url=f"{request.path}?document={current}" if current is not None else None)
    return _link_render(request, "designer/editor.html",
                        {"topology": topology, "editor_config": config, "full_bleed": True})


@never_cache
def link_hosts(request, token: str):
    visitor = _visitor(token)
    topology = selectors.topology_get(user=visitor, pk=visitor.link.topology_id)
    hosts = pages.host_list(pages.revision_head(topology.current_revision_id))
    if not hosts:
        raise Http404("this topology has no host yet")
    host = request.GET.get("host") or hosts[0]["id"]
    matrix = pages.host_matrix(topology.current_revision_id, host)
    return _link_render(request, "designer/link_host_matrix.html", {
        "topology": topology, "hosts": hosts, "host": host, "matrix": matrix, "token": token,
        "link": visitor.link})


@never_cache
def link_result(request, token: str, job_id: int):
    visitor = _visitor(token)
    job = selectors.job_get(user=visitor, pk=job_id)
    result = selectors.result_get(user=visitor, job_pk=job_id)
    selected = int_param(request, "failure", default=None)
    figures = services.result_page_figures(job=job, result=result.data, selected=selected)
    if page_view(result.data) == "explore":  # an exploration has its own page, read-only here
        return _link_render(request, "designer/explore_result.html", {
            **explore_page_context(job=job, result=result.data, figures=figures), "token": token,
            "link": visitor.link})
    context = pages.result_context(job=job, result=result.data, selected=selected,
                                   figures=figures)
    return _link_render(request, "designer/result.html", {
        "job": job, "result": result.data, **context, "token": token, "link": visitor.link,
        "topology": job.topology if visitor.link.job_id is None else None})

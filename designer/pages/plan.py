"""The physical-plan page: racks as an elevation (over-budget racks in red), the costed BOM, the
flags, and the cable schedule (first rows on the page, all of them as CSV). Editors move devices
by hand (drag and drop on the elevation, or the keyboard's lists: ``static/js/plan.js``); a move is
saved with the topology and the plan recomputed, a move that does not fit is a located error and
nothing is saved; "Reset to automatic" drops every move."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from designer import selectors, services
from designer.pages.forms.plan import MoveForm, PlanForm, attach

__all__ = ["plan_page", "plan_cables_csv", "plan_move", "plan_reset"]

#: Pixels per rack unit in the elevation.
_PX_PER_U = 6


def _elevation(racks: list[dict]) -> list[dict]:
    """Rows of racks for the template: each device with its height and offset in pixels."""
    rows: dict[int, list] = {}
    for r in racks:
        devices = [{**d, "top_px": (r["units"] - (d["position"] + d["units"] - 1)) * _PX_PER_U,
                    "height_px": max(d["units"] * _PX_PER_U - 1, 3)} for d in r["devices"]]
        rows.setdefault(r["row"], []).append({**r, "devices": devices, "height_px": r["units"] * _PX_PER_U,
                                               "load": round(100 * r["power_kw"] / r["power_kw_budget"])})
    return [{"number": n + 1, "racks": rows[n]} for n in sorted(rows)]


def _render(request, topology, form: PlanForm, move: MoveForm | None = None, status: int = 200):
    out = None
    if form.is_valid():
        try:
            out = selectors.physical_plan(topology=topology, request=form.plan_request())
        except ValidationError as exc:
            attach(exc, form)
    shown = form.cleaned_data.get("rows") or 100 if out else 0
    return render(request, "designer/plan.html", {
        "topology": topology, "form": form, "out": out, "rows": _elevation(out["racks"]) if out else [],
        "cables": out["cables"][:shown] if out else [], "query": request.GET.urlencode(),
        "max_hosts": selectors.MAX_PLAN_HOSTS, "can_edit": selectors.topology_can(request.user, topology, "edit"),
        "move": move or MoveForm(), "devices": [{**d, "rack": r["id"]} for r in out["racks"] for d in r["devices"]] if out else []},
        status=400 if form.errors or (move is not None and move.errors) else status)


@login_required
def plan_page(request, pk: int):
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="view")
    return _render(request, topology, PlanForm.for_request(request))


def _back(request, pk: int):
    query = request.GET.urlencode()
    return redirect(reverse("plan", args=[pk]) + (f"?{query}" if query else "") + "#sec-racks")


@login_required
@require_POST
def plan_move(request, pk: int):
    """One device to another rack and unit (the page's query string holds the plan options the
    move is checked against); saved, then back to the page."""
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="edit")
    form, move = PlanForm.for_request(request), MoveForm(request.POST)
    if form.is_valid() and move.is_valid():
        d = move.cleaned_data
        try:
            services.plan_device_move(topology=topology, request=form.plan_request(), device=d["device"],
                                      rack=d["rack"] or None, position=d["position"])
            return _back(request, pk)
        except ValidationError as exc:
            attach(exc, move)
            topology.refresh_from_db()
    return _render(request, topology, form, move)


@login_required
@require_POST
def plan_reset(request, pk: int):
    """Every hand placement dropped: the automatic plan again."""
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="edit")
    services.plan_placements_reset(topology=topology)
    return _back(request, pk)


@login_required
def plan_cables_csv(request, pk: int):
    """The whole cable schedule of the page's plan as a CSV download."""
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="view")
    form = PlanForm.for_request(request)
    if not form.is_valid():
        return HttpResponse("bad plan request: " + form.errors.as_text(), status=400, content_type="text/plain")
    try:
        text = selectors.physical_plan(topology=topology, request=form.plan_request(), csv=True)
    except ValidationError as exc:
        return HttpResponse("bad plan request: " + "; ".join(exc.messages), status=400, content_type="text/plain")
    response = HttpResponse(text, content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="cables-{topology.pk}.csv"'
    return response

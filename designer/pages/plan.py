"""The physical-plan page: racks as an elevation (over-budget racks in red), the costed BOM, the
flags, and the cable schedule (first rows on the page, all of them as CSV)."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse
from django.shortcuts import render

from designer import selectors
from designer.pages.forms.plan import PlanForm, attach

__all__ = ["plan_page", "plan_cables_csv"]

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


@login_required
def plan_page(request, pk: int):
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="view")
    form = PlanForm.for_request(request)
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
        "max_hosts": selectors.MAX_PLAN_HOSTS}, status=400 if form.errors else 200)


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

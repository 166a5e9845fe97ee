"""The goodput page: goodput against the checkpoint interval (optimum marked), interruptions per
day and blast radius by class, one simulated run; a second design side by side."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import render

from designer import selectors
from designer.figures.goodput import page_context
from designer.figures.style import style_json
from designer.pages.forms.goodput import GoodputForm, attach

__all__ = ["goodput"]


def _plans(request, topology, form) -> tuple[dict | None, dict | None, str | None]:
    """This design's plan, the compared design's (or None) and its name; errors go on the form."""
    plan = form.plan()
    try:
        out = selectors.goodput_prediction(topology=topology, plan=plan)
        pk = form.cleaned_data.get("against")
        if pk is None:
            return out, None, None
        other = selectors.topology_get_for(user=request.user, pk=pk, action="view")
        return out, selectors.goodput_prediction(topology=other, plan=plan), other.name
    except ValidationError as exc:
        attach(exc, form)
        return None, None, None


@login_required
def goodput(request, pk: int):
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="view")
    designs = [(t.pk, t.name) for t in selectors.topology_list(user=request.user).exclude(pk=topology.pk)[:200]]
    form = GoodputForm.for_request(request, designs)
    out = other = other_name = None
    if form.is_valid():
        out, other, other_name = _plans(request, topology, form)
    names = (topology.name, other_name or "B")
    return render(request, "designer/goodput.html", {
        "topology": topology, "form": form, "out": out, "other": other,
        **page_context(out, other, names=names), "figure_style": style_json(),
        "max_hosts": selectors.MAX_GOODPUT_HOSTS},
        status=400 if form.errors else 200)

"""The Explore page: a grid of fabric options (a checkbox per value) × a job mix → an explore job;
and the page of its result (the Pareto chart of cost against step score with power as colour, the
table of points, two points side by side)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe

from designer import selectors, services
from designer.figures.base import figures_html
from designer.figures.explore import explore_context
from designer.figures.style import style_json
from designer.pages.forms.explore import ExploreForm, attach, default_traffic

__all__ = ["explore_form", "explore_page", "explore_page_context"]


@login_required
def explore_form(request, pk: int):
    """GET: the form (the traffic defaults to a MoE step over the design's GPUs); POST: one
    service call, then the job page. Anyone who may run jobs on the topology; a bad grid is a 400
    with the located problems above the form."""
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="run")
    if request.method == "POST":
        form = ExploreForm(request.POST)
        if form.is_valid():
            try:
                job = services.job_submit_explore(topology=topology, user=request.user, request=form.request(),
                                                  chunks=form.cleaned_data["chunks"])
            except ValidationError as exc:
                attach(exc, form)
            else:
                messages.success(request, f"Exploration job {job.pk} queued.")
                return redirect("job_detail", pk=job.pk)
    else:
        form = ExploreForm(initial={"traffic": default_traffic(topology.gpu_count), "chunks": 4,
                                    "fabrics": ["rail-optimized", "rail-only"]})
    return render(request, "designer/explore_form.html", {"topology": topology, "form": form},
                  status=400 if form.errors else 200)


def explore_page_context(*, job, result, figures) -> dict:
    """Context of ``designer/explore_result.html`` (the signed-in page and the share-link page)."""
    return {"job": job, "result": result, **explore_context(result), "figure_style": style_json(),
            "figures_script": mark_safe(figures_html(figures, getattr(figures, "texts", None)))}


def explore_page(request, *, job, result, figures):
    """The result page of an ``explore`` job (``results.result_view`` hands it over); ``figures``
    are the stored figure set (``services.result_page_figures``)."""
    return render(request, "designer/explore_result.html",
                  explore_page_context(job=job, result=result, figures=figures))

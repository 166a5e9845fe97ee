"""The Diagnose page: measured nccl-tests runs of a topology in, a diagnosis job out; and the page
of its result (the verdict, measured curves against the predicted band and the explaining
faults' curves, the ranked explanations, each run's fit)."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.utils.safestring import mark_safe

from designer import selectors, services
from designer.figures.base import figures_html
from designer.figures.diagnose import diagnosis_context
from designer.figures.style import style_json
from designer.pages.forms.diagnose import RUN_SLOTS, DiagnoseForm, attach
from designer.services.diagnose import MAX_DIAGNOSE_LOG_BYTES

__all__ = ["diagnose_form", "diagnosis_page"]


@login_required
def diagnose_form(request, pk: int):
    """GET: the form (``?op=`` picks the collective); POST: one service call, then the job page.
    Anyone who may run jobs on the topology; a bad log is a 400 with the error at its run."""
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="run")
    form = DiagnoseForm.for_request(request)
    if request.method == "POST" and form.is_valid():
        try:
            job = services.job_submit_diagnose(topology=topology, user=request.user, **form.params())
        except ValidationError as exc:
            attach(exc, form)
        else:
            messages.success(request, f"Diagnosis job {job.pk} queued.")
            return redirect("job_detail", pk=job.pk)
    return render(request, "designer/diagnose_form.html", {
        "topology": topology, "form": form, "slots": form.slots(), "run_slots": RUN_SLOTS,
        "max_mib": MAX_DIAGNOSE_LOG_BYTES // 2 ** 20},
        status=400 if form.errors else 200)


def diagnosis_page(request, *, job, result, figures):
    """The result page of a ``diagnose`` job (``results.result_view`` hands it over); ``figures``
    are the stored figure set (``services.result_page_figures``)."""
    return render(request, "designer/diagnose_result.html", {
        "job": job, "result": result, **diagnosis_context(result), "figure_style": style_json(),
        "figures_script": mark_safe(figures_html(figures, getattr(figures, "texts", None)))})

"""Job pages: a job's progress page, the status JSON it polls, and cancelling it."""
from __future__ import annotations

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from designer import selectors, services
from designer.exceptions import IllegalTransition
from designer.pages import selectors as pages

__all__ = ["job_detail", "job_status", "job_cancel"]


@login_required
def job_detail(request, pk: int):
    job = selectors.job_get(user=request.user, pk=pk)
    can_cancel = selectors.topology_can(request.user, job.topology,
                                        selectors.job_cancel_action(request.user, job))
    return render(request, "designer/job_detail.html", {
        "job": job, "status": pages.job_status(job), "can_cancel": can_cancel,
        "can_edit": selectors.topology_can(request.user, job.topology, "edit")})


@login_required
def job_status(request, pk: int):
    job = selectors.job_get(user=request.user, pk=pk)
    return JsonResponse(pages.job_status(job))


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

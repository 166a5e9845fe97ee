"""The nccl-tests page: predicted busbw and time against message size, and real runs overlaid on them."""
from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import render

from designer import selectors
from designer.figures.nccl_tests import page_context
from designer.figures.style import style_json
from designer.pages.forms.nccl import NcclTestsForm, attach

__all__ = ["nccl_tests"]


@login_required
def nccl_tests(request, pk: int):
    topology = selectors.topology_get_for(user=request.user, pk=pk, action="view")
    form, out = NcclTestsForm.for_request(request), None
    if form.is_valid():
        try:
            out = selectors.nccl_tests_prediction(topology=topology, **form.params())
        except ValidationError as exc:
            attach(exc, form)
    return render(request, "designer/nccl_tests.html", {
        "topology": topology, "form": form, "out": out, **page_context(out, **form.axes()),
        "figure_style": style_json(), "max_hosts": selectors.MAX_INLINE_HOSTS,
        "max_logs": selectors.MAX_NCCL_LOGS},
        # A GET is the page, whatever the prediction says (a design too big to predict inline,
        # for one); only a submitted form with errors is a bad request.
        status=400 if form.errors and request.method == "POST" else 200)

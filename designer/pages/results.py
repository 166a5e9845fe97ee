"""Result pages: a job's result, two results (or two designs' bills of materials) compared, and
the figure a click on the result page asks for (a picked flow's path, a clicked host).

Result and compare pages are gzipped: a 1,024-GPU result page is ~1 MB of figure JSON (~6x
smaller compressed). BREACH: the pages reflect no request input and hold no secret but Django's
per-response masked CSRF token.

``POST /figures/<kind>/``: the page posts the slice of its own embedded data that the figure needs
and draws what comes back (see :mod:`designer.figures.interactive`), so figures are only ever
built in Python. The endpoint reads nothing from the database and writes nothing: it is open to
share-link visitors like the page itself, and a request can only get a figure of the data it
sent. Because anyone may call it and each call costs Python time, it is rate-limited per visitor
(``figures`` rate, :mod:`designer.ops.throttling`, shared by every web process) and takes
slices of at most ``FABRICSCOPE_FIGURE_SLICE_MAX_KB``, within the caps of
:mod:`designer.figures.slice_limits` (checked before any figure is built).
"""
from __future__ import annotations

import json

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.serializers.json import DjangoJSONEncoder
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.gzip import gzip_page
from django.views.decorators.http import require_POST

from designer import selectors, services
from designer.figures import SliceLimits, SliceTooLarge, check_response, figure_from_slice
from designer.ops.throttling import FigureThrottle, retry_seconds
from designer.figures.result import page_view
from designer.pages import selectors as pages
from designer.pages.diagnose import diagnosis_page
from designer.pages.explore import explore_page
from designer.pages.forms.compare import CompareQuery
from designer.params import int_param, json_loads_bounded

__all__ = ["result_view", "compare_view", "figure_render", "FIGURE_SLICE_MAX_BYTES"]


@gzip_page
@login_required
def result_view(request, job_id: int):
    job = selectors.job_get(user=request.user, pk=job_id)
    result = selectors.result_get(user=request.user, job_pk=job_id)
    selected = int_param(request, "failure", default=None)
    figures = services.result_page_figures(job=job, result=result.data, selected=selected)
    if page_view(result.data) == "diagnosis":
        return diagnosis_page(request, job=job, result=result.data, figures=figures)
    if page_view(result.data) == "explore":
        return explore_page(request, job=job, result=result.data, figures=figures)
    context = pages.result_context(job=job, result=result.data, selected=selected,
                                   figures=figures)
    return render(request, "designer/result.html", {
        "job": job, "result": result.data, **context,
        "can_share": selectors.topology_can(request.user, job.topology, "manage")})


@login_required
def compare_view(request):
    """``?a=&b=`` two results; ``?da=&db=`` two designs' BOMs (no job needed); one side only
    (``?a=`` or ``?da=``, the links from a result and a topology page) opens the picker of the
    other side."""
    query = CompareQuery.from_request(request)
    if query.mode == "results":
        return _compare_results(request, query.a, query.b)
    if query.mode == "pick_result":
        job = selectors.job_get(user=request.user, pk=query.a)
        return render(request, "designer/compare_pick.html", {
            "job_a": job, "choices": pages.compare_result_choices(user=request.user, job=job)})
    if query.mode == "empty":
        raise Http404("name a result (?a=<job id>) or a design (?da=<topology id>) to compare")
    revision_a = pages.design_revision(user=request.user, topology_pk=query.da[0], number=query.da[1])
    groups = pages.compare_design_choices(user=request.user, revision=revision_a)
    if query.mode == "pick_design":
        return render(request, "designer/compare_pick.html", {"revision_a": revision_a, "groups": groups})
    revision_b = pages.design_revision(user=request.user, topology_pk=query.db[0], number=query.db[1])
    return render(request, "designer/compare_designs.html", {
        **pages.compare_designs_context(revision_a=revision_a, revision_b=revision_b), "groups": groups,
        "db_value": query.db_value})


def _compare_results(request, a_pk: int, b_pk: int):
    a = selectors.result_get(user=request.user, job_pk=a_pk)
    b = selectors.result_get(user=request.user, job_pk=b_pk)
    context = pages.compare_context(a=a.data, b=b.data)
    context.update(pages.compare_bom_context(
        revision_a=getattr(a.job, "revision", None), revision_b=getattr(b.job, "revision", None)))
    return render(request, "designer/compare.html", {
        "job_a": a.job, "job_b": b.job, "a": a.data, "b": b.data,
        "a_label": f"job {a.job_id}", "b_label": f"job {b.job_id}", **context,
        "choices": pages.compare_result_choices(user=request.user, job=a.job)})


# A host drill-down of the largest template is ~8 kB and a picked flow's path far less: the body cap
# (FABRICSCOPE_FIGURE_SLICE_MAX_KB, 1 MiB) keeps an anonymous caller from making the server parse
# 128 MiB; the caps of designer.figures.slice_limits bound what a slice multiplies. The value at
# start-up (settings are read per request).
FIGURE_SLICE_MAX_BYTES = settings.FABRICSCOPE_FIGURE_SLICE_MAX_BYTES


@gzip_page  # a host drill-down of a big server is ~8 kB of JSON; nothing secret in it
@require_POST
def figure_render(request, kind: str):
    """``POST /figures/<kind>/`` with a JSON slice → the figure dict: 429 past the visitor's rate,
    413 over a cap (naming it; nothing built), 400 when malformed."""
    throttle = FigureThrottle()
    if not throttle.allow_request(request, None):
        return _throttled(throttle)
    limit = settings.FABRICSCOPE_FIGURE_SLICE_MAX_BYTES
    size = _declared_length(request)
    if size is None or size <= limit:
        size = len(request.body)
    if size > limit:
        return JsonResponse({"error": f"figure slice of {size:,} bytes is larger than the {limit:,} "
                                      "allowed (FABRICSCOPE_FIGURE_SLICE_MAX_KB)",
                             "limit": {"setting": "FABRICSCOPE_FIGURE_SLICE_MAX_KB",
                                       "value": limit, "size": size}}, status=413)
    limits = SliceLimits.from_settings(settings.FABRICSCOPE_FIGURE_LIMITS)
    try:
        data = json_loads_bounded(request.body, max_depth=settings.FABRICSCOPE_JSON_MAX_DEPTH)
        body = json.dumps(figure_from_slice(kind, data, limits), cls=DjangoJSONEncoder)
        check_response(kind, len(body), limits)
    except SliceTooLarge as exc:
        return JsonResponse({"error": str(exc), "limit": {
            "setting": exc.setting, "value": exc.limit, "size": exc.size}}, status=413)
    except ValueError as exc:  # SliceError, JsonTooDeep, json.JSONDecodeError: all ValueErrors
        return JsonResponse({"error": str(exc)}, status=400)
    return HttpResponse(body, content_type="application/json")


def _throttled(throttle) -> JsonResponse:
    retry = retry_seconds(throttle.wait())
    response = JsonResponse({"error": f"too many figure requests: retry in {retry} s",
                             "retry_after": retry}, status=429)
    response["Retry-After"] = str(retry)
    return response


def _declared_length(request) -> int | None:
    """``Content-Length`` when it is a plain number: a 60 MiB slice is refused before it is read
    into memory (the body limit alone would let it be read, up to 128 MiB, then refused)."""
    declared = request.META.get("CONTENT_LENGTH") or ""
    return int(declared) if declared.isascii() and declared.isdigit() and len(declared) <= 18 else None

"""Docs of ``/jobs/`` (``api.views.jobs.JobViewSet``)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view

from api import serializers as s
from api.schema.examples import EXAMPLE_JOB
from api.schema.helpers import errors, example

__all__ = ["viewset", "create", "cancel", "result", "figures"]

viewset = extend_schema_view(
    list=extend_schema(summary="List your jobs (filter by state, kind, topology, scenario)",
                       responses={200: s.JobListSerializer(many=True), **errors(400)}),
    retrieve=extend_schema(summary="Get a job: state, progress, message, timings",
                           responses={200: s.JobSerializer, **errors(404)},
                           examples=[example("running sweep", EXAMPLE_JOB)]),
)

create = extend_schema(
    summary="Submit a simulation, failure sweep or policy comparison of a scenario",
    request=s.JobCreateSerializer,
    responses={201: s.JobSerializer, **errors(400, 403, 413, 415)},
    examples=[
        example("simulate", {"scenario": 3, "kind": "simulate"}, request=True),
        example("NIC failure sweep", {"scenario": 3, "kind": "sweep", "over": ["nic"]},
                request=True),
        example("compare policies", {"scenario": 3, "kind": "compare",
                                     "policies": ["affinity", "pxn", "any"]},
                request=True),
        example("queued", {**EXAMPLE_JOB, "state": "queued", "progress": 0,
                           "message": "queued", "started_at": None}, status=201)])

cancel = extend_schema(summary="Cancel a queued or running job", request=None,
                       responses={200: s.JobSerializer, **errors(403, 404, 409)})

result = extend_schema(
    summary="The result JSON of a finished job (409 until it succeeded)",
    responses={200: OpenApiTypes.OBJECT, **errors(404, 409)},
    examples=[example("result", {"format": "fabricscope.result/1", "summary": {
        "patterns": {"ar": {"completion_s": 0.01}}, "max_utilization": 1.0,
        "bottlenecks": []}, "flows": [], "resources": [], "diff": None})])

figures = extend_schema(
    summary="Plotly figures (JSON) of a finished job's result",
    description="Figure name -> `{data, layout, config, fabricscope}`; pass data, layout "
                "and config to `Plotly.newPlot`. Simulations: topology, path, patterns, "
                "rates, tiers, bottlenecks (+ timeline, latency, whatif_*); sweeps: "
                "ranking (+ whatif_* of `?failure=i`); comparisons: policies.",
    parameters=[OpenApiParameter("failure", int, description="sweeps: index of the "
                                 "ranking entry whose what-if figures to add")],
    responses={200: OpenApiTypes.OBJECT, **errors(400, 404, 409, 501)},
    examples=[example("figures", {"bottlenecks": {
        "data": [{"type": "bar", "x": [1.0], "y": ["h0/nic0-leaf0:a>b"]}],
        "layout": {"title": {"text": "Bottlenecks"}}, "config": {},
        "fabricscope": {"kind": "bottlenecks"}}})])

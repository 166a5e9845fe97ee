"""Docs of ``/jobs/`` (``api.views.jobs.JobViewSet``)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view

from api import serializers as s
from api.schema.examples import EXAMPLE_JOB
from api.schema.helpers import LIST_ERRORS, errors, example, id_query, retry_after

__all__ = ["viewset", "create", "cancel", "result", "figures"]

viewset = extend_schema_view(
    list=extend_schema(summary="List your jobs (filter by state, kind, topology, scenario)",
                       parameters=[id_query("topology", "only jobs of this topology"),
                                   id_query("scenario", "only jobs of this scenario")],
                       responses={200: s.JobListSerializer(many=True), **errors(*LIST_ERRORS)}),
    retrieve=extend_schema(summary="Get a job: state, progress, message, timings",
                           responses={200: s.JobSerializer, **errors(404)},
                           examples=[example("running sweep", EXAMPLE_JOB)]),
)

create = extend_schema(
    summary="Submit a simulation, failure sweep or policy comparison of a scenario",
    description="Accepted only when the job queue answers: with Redis down the answer is a 503 "
                "`broker_unavailable` and nothing is written. More than "
                "FABRICSCOPE_JOB_MAX_ACTIVE_PER_USER queued + running jobs is a 429 "
                "`too_many_jobs`. Both carry `Retry-After`.",
    request=s.JobCreateSerializer,
    parameters=[retry_after(429, 503)],
    responses={201: s.JobSerializer, **errors(400, 403, 413, 415, 503, extra="job_submit")},
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
    summary="The result JSON of a finished job (409 until it succeeded, or `result_damaged`)",
    description="Simulations: `fabricscope.result/1`. A pattern with a disconnected flow does not "
                "complete (`complete: false`, `completion_s: null`, a `reason`); the job completes "
                "only if every pattern does (`summary.complete`, `summary.job_completion_s`, "
                "`summary.headline`). `summary.critical_bottleneck` is the resource limiting the "
                "slowest pattern's slowest flow; `bottleneck_relief` ranks resources by the job "
                "time gained at 2x capacity. Sweeps: `fabricscope.sweep/1`, ranked broken jobs "
                "first (`impact.broken`, then `disconnected_flows`, `slowdown` — null when "
                "something broke — and `throughput_lost_gbps`); `skipped` lists candidates "
                "already failed or unwired. Build jobs (`POST /topologies/build-job/`): the topology they "
                "made (`topology`, its `url`, `revision`, counts). See docs/ENGINE.md, 'Completion, "
                "impact and bottlenecks'.",
    parameters=[OpenApiParameter(
        "view", str, enum=["full", "summary"], default="full",
        description="`summary`: the document without its bulk parts (`flows`, `resources`, "
                    "`diff`, `latency`), read without loading them from the database.")],
    responses={200: OpenApiTypes.OBJECT, **errors(400, 404, 409, extra="job_result")},
    examples=[
        example("result", {"format": "fabricscope.result/1", "summary": {
            "patterns": {"ar": {"complete": True, "completion_s": 0.00488, "throughput_gbps": 49152.0,
                                "slowest_flow": "ar#7", "bottleneck": "h0/gpu7-pcie7:a>b", "unroutable": 0,
                                "reason": None}},
            "complete": True, "job_completion_s": 0.00488, "broken": [], "slowest_pattern": "ar",
            "headline": "completes in 4.88 ms — limited by h0/gpu7-pcie7:a>b (and 15 like it)",
            "critical_bottleneck": {"id": "h0/gpu7-pcie7:a>b", "tier": "pcie", "pattern": "ar",
                                    "flow": "ar#7", "utilization": 1.0, "gain_if_doubled_s": 0.0,
                                    "equally_limiting": 16},
            "max_utilization": 1.0, "bottlenecks": ["h0/gpu7-pcie7:a>b"]},
            "flows": [], "resources": [], "diff": None}),
        example("build job", {"topology": 8, "url": "/api/v1/topologies/8/", "revision": 1,
                              "host_count": 12500, "gpu_count": 100000, "node_count": 628968,
                              "link_count": 1262180}),
        example("result that does not complete", {"format": "fabricscope.result/1", "summary": {
            "patterns": {"ar": {"complete": False, "completion_s": None, "surviving_completion_s": 0.00977,
                                "unroutable": 2, "reason": "2 of 128 flows disconnected (ar#15, ar#23): GPU "
                                "h0/gpu1's only NIC under policy affinity is down"}},
            "complete": False, "job_completion_s": None, "broken": ["ar"],
            "headline": "does not complete — 2 flows of ar lost when h0/nic1 is down"},
            "flows": [], "resources": [], "diff": {"impact": {
                "broken": ["ar"], "broken_patterns": 1, "disconnected_flows": 2, "complete": False,
                "slowdown": None, "slowdown_of_completing": 1.0, "completion_unbounded": True,
                "completion_increase_s": None, "throughput_lost_gbps": 49152.0, "worst_pattern": "ar"}}}),
    ])

figures = extend_schema(
    summary="Plotly figures (JSON) of a finished job's result",
    description="Figure name -> `{data, layout, config, fabricscope}`; pass data, layout "
                "and config to `Plotly.newPlot`, except table figures (`fabricscope.view == "
                "\"table\"`, `data: []`): their rows are `fabricscope.table` (`columns`, `rows`), "
                "drawn as an HTML table. Simulations: topology, path, patterns, "
                "rates, tiers, bottlenecks (+ timeline, latency, whatif_*); sweeps: "
                "ranking (+ whatif_* of `?failure=i`); comparisons: policies.",
    parameters=[id_query("failure", "sweeps: index of the ranking entry whose what-if "
                                    "figures to add", maximum=2 ** 31 - 1)],
    responses={200: OpenApiTypes.OBJECT, **errors(400, 404, 409)},
    examples=[example("figures", {"bottlenecks": {
        "data": [{"type": "bar", "x": [1.0], "y": ["h0/nic0-leaf0:a>b"]}],
        "layout": {"title": {"text": "Bottlenecks"}}, "config": {},
        "fabricscope": {"kind": "bottlenecks"}}})])

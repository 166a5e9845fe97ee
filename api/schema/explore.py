"""Docs of ``POST /topologies/<id>/explore/`` (decorates ``api.views.explore.ExploreView.post``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema

from api import serializers as s
from api.schema.examples import EXAMPLE_JOB
from api.schema.helpers import errors, example, retry_after
from api.serializers.explore import ExploreRequestSerializer

__all__ = ["post"]

_MOE = {"job": {"layout": {"tp": 1, "ep": 16, "dp": 128},
                "template": {"model": "deepseek-v3", "microbatches": 1, "seq_len": 4096}}}

post = extend_schema(
    summary="Explore the design space: a grid of fabrics × a job mix, the cheapest that meets the goal (a job)",
    description="Every point of the grid (fabric kind, tiers, oversubscription, switch model, NIC link "
                "tech, planes, size, host template) is built, priced (US$ and W per GPU from the physical "
                "plan) and simulated with the job mix; the result marks the Pareto frontier over "
                "(US$/GPU, step score) (docs/FORMATS.md, \"Design-space explorer\"). `base` options left "
                "out come from the topology's current design. The request is checked before anything "
                "is saved: an unknown switch is a 400 at `grid.switch[i]`, 0 hosts at `grid.hosts[i]`, "
                "more than 256 points at `grid`. Accepted (202) as a job of kind `explore`, run in "
                "chunks like a failure sweep: poll `/jobs/{id}/`, then read `/jobs/{id}/result/` "
                "(`fabricscope.explore/1`). Rate-limited and capped like every job submission.",
    request=ExploreRequestSerializer,
    parameters=[retry_after(429, 503)],
    responses={202: s.JobSerializer, **errors(400, 403, 404, 413, 415, 503, extra="job_submit")},
    examples=[example("rail-only vs rail-optimized for a MoE step",
                      {"base": {"gpus": 128}, "grid": {"fabric": ["rail-optimized", "rail-only"],
                                                       "oversubscription": [1, 2]}, "workload": _MOE},
                      request=True),
              example("queued", {**EXAMPLE_JOB, "kind": "explore", "state": "queued", "progress": 0,
                                 "message": "queued", "scenario": None, "scenario_name": None,
                                 "started_at": None, "parameters": {"chunks": 4}}, status=202)])

"""Docs of ``POST /topologies/<id>/goodput/`` (decorates ``api.views.goodput.GoodputView.post``)."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema

from api.schema.helpers import errors, example
from api.serializers.goodput import GoodputRequestSerializer, GoodputResultSerializer

__all__ = ["post"]

post = extend_schema(
    summary="Goodput plan of a topology: interruptions, blast radius, checkpoint interval, ETTR",
    description="Failure rates (defaults fitted to the Llama 3 paper's Table 5, editable per class and "
                "per catalog model) × the units of the topology's current revision → interruptions per "
                "day by class for the cluster and the job, the job's MTTF, each class's blast radius "
                "and spares, the checkpoint's write and read-back times simulated on the design's "
                "storage fabric, Young's and Daly's intervals, the ETTR curve and a seeded Monte Carlo "
                "(docs/ENGINE.md, \"Goodput\"). Runs inline for topologies of up to 256 hosts; "
                "every bad value is a 400 located in the plan (`rates.nic.afr`). The blast radius of each "
                "class is measured by the N-1 sweep on the job's gradient all-reduce when the plan has a "
                "model size or `traffic` (`blast.source`: simulated, rule or given). With `against` (a "
                "topology id) the answer is `fabricscope.goodput-compare/1` `{a, b}`.",
    request=GoodputRequestSerializer,
    responses={200: GoodputResultSerializer, **errors(400, 403, 404)},
    examples=[example("405B checkpoint, defaults", {"checkpoint": {"parameters": 405e9}}, request=True),
              example("a worse NIC", {"rates": {"nic": {"afr": 0.05, "repair_hours": 24}},
                                      "checkpoint": {"write_s": 60, "read_s": 90},
                                      "monte_carlo": {"runs": 100, "days_per_run": 54}}, request=True)])

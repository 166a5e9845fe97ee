"""Docs of ``/scenarios/`` (``api.views.scenarios.ScenarioViewSet``)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_view

from api import serializers as s
from api.schema.examples import EXAMPLE_WORKLOAD
from api.schema.helpers import LIST_ERRORS, errors, example, id_query

__all__ = ["viewset", "create", "partial_update", "place"]

viewset = extend_schema_view(
    list=extend_schema(summary="List scenarios on your topologies",
                       parameters=[id_query("topology", "only scenarios of this topology")],
                       responses={200: s.ScenarioSerializer(many=True), **errors(*LIST_ERRORS)}),
    retrieve=extend_schema(summary="Get a scenario",
                           responses={200: s.ScenarioSerializer, **errors(404)}),
    destroy=extend_schema(summary="Delete a scenario (its jobs are kept)",
                          responses={204: None, **errors(403, 404)}),
)

create = extend_schema(
    summary="Create a scenario (checked by the engine: problems are located)",
    request=s.ScenarioSerializer,
    responses={201: s.ScenarioSerializer, **errors(400, 403, 413, 415)},
    examples=[example("ring all-reduce", {
        "topology": 7, "name": "ring", "workload": EXAMPLE_WORKLOAD,
        "routing": {"nic_policy": "affinity", "multipath": "hash", "seed": 1},
        "failures": [], "mode": "steady"}, request=True)])

partial_update = extend_schema(
    summary="Change a scenario (re-checked by the engine)",
    request=s.ScenarioSerializer(partial=True),
    responses={200: s.ScenarioSerializer, **errors(400, 403, 404)},
    examples=[example("switch policy", {"routing": {"nic_policy": "pxn"}}, request=True)])

place = extend_schema(
    summary="Rank where a new job should go among the scenario's jobs (nothing is saved)",
    description=("The new job's candidate placements on the free GPUs (each placement policy, seeded "
                 "randoms, a packing per leaf block), each run with the scenario's jobs in one event loop, "
                 "ranked by its step time, then by the harm to the running jobs (fabricscope.place/1, "
                 "docs/FORMATS.md \"Place\"). A scenario with a pattern workload is an empty cluster. Runs "
                 "inline for designs of up to 512 hosts (a located 400 above); bad placements are 400s "
                 "located under `job.placement`."),
    request=s.PlaceRequestSerializer, responses={200: OpenApiTypes.OBJECT, **errors(400, 403, 404)},
    examples=[example("16 GPUs anywhere free", {"job": {
        "id": "next", "patterns": [{"id": "ar", "kind": "allreduce", "bytes": 1e9}],
        "placement": {"gpus": 16}}}, request=True)])

"""Docs of ``/topologies/``: the viewset's reads, create, update, fork, transfer, audit, preview.

Each name is the drf-spectacular decorator of the ``api.views.topologies.TopologyViewSet``
method of the same name (``viewset`` decorates the class).
"""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, extend_schema_view

from api import serializers as s
from api.schema.examples import EXAMPLE_BUILD, EXAMPLE_DOCUMENT, EXAMPLE_JOB, EXAMPLE_TOPOLOGY
from api.schema.helpers import LIST_ERRORS, errors, example, id_query, retry_after
from api.serializers.topologies import TopologyBuildJobSerializer

__all__ = ["viewset", "create", "partial_update", "fork", "transfer", "audit", "build_preview",
           "build_job"]

viewset = extend_schema_view(
    list=extend_schema(summary="List your topologies", parameters=[
        id_query("min_gpus", "at least this many GPUs", maximum=2 ** 31 - 1),
        id_query("max_gpus", "at most this many GPUs", maximum=2 ** 31 - 1)], responses={
        200: s.TopologySerializer(many=True), **errors(*LIST_ERRORS)}),
    retrieve=extend_schema(summary="Get a topology", responses={
        200: s.TopologySerializer, **errors(404)},
        examples=[example("topology", EXAMPLE_TOPOLOGY)]),
    destroy=extend_schema(summary="Delete a topology with its revisions, scenarios and jobs",
                          responses={204: None, **errors(403, 404)}),
)

create = extend_schema(
    summary="Create a topology from a document, or build a cluster from a template",
    description="A `build` is made in the request, up to MAX_BUILD_HOSTS = 2,048 hosts and "
                "FABRICSCOPE_BUILD_MAX_ELEMENTS nodes + links; more hosts is a 400 at `build.hosts` "
                "naming `POST /api/v1/topologies/build-job/`, which builds up to 100,000 GPUs as a job.",
    request=s.TopologyCreateSerializer,
    responses={201: s.TopologySerializer, **errors(400, 403, 413, 415)},
    examples=[
        example("build a cluster", {"name": "pod-a", "build": EXAMPLE_BUILD}, request=True,
                description="32 DGX H100 on a rail-optimized fabric in one call"),
        example("from a document", {"name": "two-gpus", "description": "lab box",
                                    "document": EXAMPLE_DOCUMENT}, request=True),
        example("created", EXAMPLE_TOPOLOGY, status=201)])

partial_update = extend_schema(
    summary="Rename or re-describe a topology",
    request=s.TopologyUpdateSerializer,
    responses={200: s.TopologySerializer, **errors(400, 403, 404)},
    examples=[example("rename", {"name": "pod-b"}, request=True)])

fork = extend_schema(
    summary="Fork: copy the current revision and its scenarios into your space",
    request=s.ForkSerializer,
    responses={201: s.TopologySerializer, **errors(400, 403, 404)},
    examples=[example("fork", {"name": "pod-a (mine)"}, request=True)],
    filters=False)

transfer = extend_schema(
    summary="Transfer ownership (owner only); the previous owner stays editor",
    request=s.TransferSerializer,
    responses={200: s.TopologySerializer, **errors(400, 403, 404)},
    examples=[example("transfer", {"username": "bob"}, request=True)],
    filters=False)

audit = extend_schema(
    summary="Audit trail: who changed what (owner and editors)",
    responses={200: s.AuditEventSerializer(many=True), **errors(*LIST_ERRORS, 403)},
    filters=False)

build_preview = extend_schema(
    summary="Build a cluster document without saving it (editor preview)",
    description=('"document": false answers only the summary and the bill of materials, counted from '
                 'the spec without building a device (up to MAX_PLAN_HOSTS = 32,768 hosts; a 100,000-GPU '
                 'design in about 0.1 s); by default the document too (up to 2,048 hosts).'),
    request=s.BuildPreviewSerializer,
    responses={200: OpenApiTypes.OBJECT, **errors(400, 403, 413, 415)},
    examples=[example("spec", {**EXAMPLE_BUILD, "hosts": 2}, request=True),
              example("preview", {"document": {"format": "fabricscope.topology/1",
                                               "name": "preview", "groups": [],
                                               "nodes": [], "links": []},
                                  "summary": {"hosts": 2, "gpus": 16}})],
    filters=False)

_BUILT = {**EXAMPLE_JOB, "id": 31, "kind": "build", "topology": 8, "topology_name": "pod-100k",
          "scenario": None, "scenario_name": None, "parameters": {}}

build_job = extend_schema(
    summary="Build a large cluster (up to 100,000 GPUs) as a background job",
    description="The body of `POST /topologies/` with `build`, for clusters the request cannot build "
                "(over MAX_BUILD_HOSTS = 2,048 hosts) or any size a script would rather not wait on: "
                "up to FABRICSCOPE_BUILD_JOB_MAX_HOSTS hosts (12,500 = 100,000 DGX-H100 GPUs) and "
                "FABRICSCOPE_BUILD_JOB_MAX_ELEMENTS nodes + links. The spec is checked whole before "
                "anything is written (an unknown template at `build.template`, a spec the engine "
                "refuses located at its option, a limit named): a 400 saves nothing and queues nothing. "
                "Accepted (202): the topology exists with no revision (`revision_number` 0) and a job of "
                "kind `build` is queued; poll `url` (`/jobs/{id}/`, also in `Location`) for `progress` "
                "and `message`; when it succeeded, `result_url` is the topology and `/jobs/{id}/result/` "
                "says what it built. A failed or cancelled build saves no revision: the job ends "
                "`failed` with the reason in `error`, and the empty topology stays as its marker "
                "(delete it to reuse the name). Rate-limited and capped like every job submission "
                "(429 `too_many_jobs`, 503 `broker_unavailable`); the topology counts in your quota.",
    request=TopologyBuildJobSerializer,
    parameters=[retry_after(429, 503)],
    responses={202: s.JobSerializer, **errors(400, 403, 413, 415, 503, extra="job_submit")},
    examples=[
        example("100,000 GPUs", {"name": "pod-100k", "build": {
            "template": "dgx-h100", "hosts": 12500, "fabric": "rail-optimized"}},
            request=True, description="12,500 DGX H100 on a rail-optimized fabric"),
        example("queued", {**_BUILT, "state": "queued", "progress": 0, "message": "queued",
                           "revision": None, "started_at": None, "url": "/api/v1/jobs/31/",
                           "result_url": None}, status=202)],
    filters=False)

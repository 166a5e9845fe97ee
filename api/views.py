"""API views: parse input with a serializer, call one service or selector, render.

Visibility is the selectors' job (another user's object is a 404); edit rights are
``api.permissions``; business rules are the services'. Engine errors, conflicts and everything
else become the one error shape in ``api.exception_handlers``.
"""
from __future__ import annotations

import re

from django.conf import settings
from django.http import Http404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.filters import OrderingFilter
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from api import engine_calls
from api import serializers as s
from api.exception_handlers import ApiError, PayloadTooLarge
from api.filters import JobFilter, ScenarioFilter, TopologyFilter
from api.pagination import ApiPagination
from api.authentication import ShareLinkAuthentication
from api.permissions import IsAuthenticatedUser, IsUserOrShareLinkReader, TopologyRole
from api.schema import errors, example
from api.throttling import JobSubmitThrottle
from designer import selectors, services
from designer.choices import JobKind, JobState
from designer.models import Scenario, SimulationJob, TopologyRevision

__all__ = ["TopologyViewSet", "TopologyExportView", "RevisionViewSet", "ScenarioViewSet",
           "JobViewSet", "TemplateViewSet", "CatalogView", "ValidateView", "AuthTokenView"]

MAX_ID = 2 ** 63 - 1  # ids beyond a bigint name nothing; the database would reject the query
ID = r"[0-9]+"

EXAMPLE_DOCUMENT = {
    "format": "fabricscope.topology/1", "name": "two-gpus",
    "nodes": [{"id": "gpu0", "kind": "gpu"}, {"id": "gpu1", "kind": "gpu"},
              {"id": "sw0", "kind": "pcie_switch"}],
    "links": [{"a": "gpu0", "b": "sw0", "tech": "pcie5x16"},
              {"a": "gpu1", "b": "sw0", "tech": "pcie5x16"}]}
EXAMPLE_BUILD = {"template": "dgx-h100", "hosts": 32, "fabric": "rail-optimized", "spines": 8}
EXAMPLE_TOPOLOGY = {
    "id": 7, "name": "pod-a", "description": "", "owner": "alice", "revision_number": 1,
    "host_count": 32, "gpu_count": 256, "node_count": 1640, "link_count": 2976,
    "created_at": "2026-01-05T10:00:00Z", "updated_at": "2026-01-05T10:00:00Z"}
EXAMPLE_WORKLOAD = [{"id": "ar", "kind": "allreduce", "algorithm": "ring",
                     "participants": {"kind": "gpu"}, "bytes": 1e9}]
EXAMPLE_JOB = {
    "id": 12, "kind": "sweep", "state": "running", "progress": 40,
    "message": "3 of 8 chunks done", "topology": 7, "topology_name": "pod-a", "revision": 1,
    "scenario": 3, "scenario_name": "ring", "attempts": 1, "cancel_requested": False,
    "created_at": "2026-01-05T10:00:00Z", "started_at": "2026-01-05T10:00:01Z",
    "finished_at": None, "timings": {"queued_s": 1.0, "run_s": None, "total_s": None},
    "parameters": {"over": ["nic"], "chunks": 8}, "error": ""}


class ApiMixin:
    """Shared by every view: body size limit and sane ids, checked before anything else.

    Share-link tokens are read first (``api.authentication.ShareLinkAuthentication``); views
    that serve shared objects accept such visitors for reads (``IsUserOrShareLinkReader``),
    every other view refuses them (``IsAuthenticatedUser``).
    """

    authentication_classes = [ShareLinkAuthentication,
                              *api_settings.DEFAULT_AUTHENTICATION_CLASSES]

    def initial(self, request, *args, **kwargs):
        """DRF's ``APIView.initial`` with two checks first and throttles before permissions,
        so anonymous floods are limited too (DRF answers them 401 before throttling)."""
        _check_body_size(request)
        for value in kwargs.values():
            if isinstance(value, int) or (isinstance(value, str) and value.isdigit()):
                if int(value) > MAX_ID:
                    raise Http404("no such object")
        self.format_kwarg = self.get_format_suffix(**kwargs)
        request.accepted_renderer, request.accepted_media_type = (
            self.perform_content_negotiation(request))
        request.version, request.versioning_scheme = self.determine_version(
            request, *args, **kwargs)
        self.perform_authentication(request)
        self.check_throttles(request)
        self.check_permissions(request)


def _check_body_size(request) -> None:
    limit = settings.FABRICSCOPE_API_MAX_BODY_BYTES
    try:
        size = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        size = 0
    if size > limit:
        raise PayloadTooLarge(size=size, limit=limit)


def _body_ref(getter, user, pk: int, field: str):
    """An object named in a request body: a missing or invisible one is a located 400."""
    try:
        return getter(user=user, pk=pk)
    except Http404:
        raise ValidationError({field: [f"no {field} with id {pk}"]}) from None


# --- Topologies ------------------------------------------------------------------------------------

@extend_schema_view(
    list=extend_schema(summary="List your topologies", responses={
        200: s.TopologySerializer(many=True), **errors(400)}),
    retrieve=extend_schema(summary="Get a topology", responses={
        200: s.TopologySerializer, **errors(404)},
        examples=[example("topology", EXAMPLE_TOPOLOGY)]),
    destroy=extend_schema(summary="Delete a topology with its revisions, scenarios and jobs",
                          responses={204: None, **errors(403, 404)}),
)
class TopologyViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.TopologySerializer
    filterset_class = TopologyFilter
    search_fields = ["name", "description"]
    ordering_fields = ["name", "created_at", "updated_at", "gpu_count", "host_count",
                       "revision_number"]
    ordering = ["-updated_at", "-pk"]
    lookup_value_regex = ID
    permission_classes = [IsUserOrShareLinkReader, TopologyRole]
    # Endpoint -> action of designer.selectors.ROLE_ACTIONS (reads "view", writes "edit").
    role_actions = {"destroy": "manage", "transfer": "manage", "fork": "fork", "audit": "audit"}

    def get_queryset(self):
        return selectors.topology_list(user=self.request.user)

    def _topology(self, pk):
        topology = selectors.topology_get(user=self.request.user, pk=pk)
        self.check_object_permissions(self.request, topology)
        return topology

    def list(self, request):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.TopologySerializer(page, many=True).data)

    def retrieve(self, request, pk):
        return Response(s.TopologySerializer(self._topology(pk)).data)

    @extend_schema(
        summary="Create a topology from a document, or build a cluster from a template",
        request=s.TopologyCreateSerializer,
        responses={201: s.TopologySerializer, **errors(400, 413, 415)},
        examples=[
            example("build a cluster", {"name": "pod-a", "build": EXAMPLE_BUILD}, request=True,
                    description="32 DGX H100 on a rail-optimized fabric in one call"),
            example("from a document", {"name": "two-gpus", "description": "lab box",
                                        "document": EXAMPLE_DOCUMENT}, request=True),
            example("created", EXAMPLE_TOPOLOGY, status=201)])
    def create(self, request):
        data = _valid(s.TopologyCreateSerializer, request.data)
        if "build" in data:
            build = s.BuildSpecSerializer(data=request.data["build"])
            build.is_valid(raise_exception=True)
            topology = services.topology_build(
                owner=request.user, name=data["name"], description=data["description"],
                template=build.validated_data["template"], hosts=build.validated_data["hosts"],
                fabric=build.validated_data["fabric"], options=build.options())
        else:
            topology = services.topology_create(
                owner=request.user, name=data["name"], description=data["description"],
                document=data["document"], message=data["message"])
        return Response(s.TopologySerializer(topology).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Rename or re-describe a topology",
                   request=s.TopologyUpdateSerializer,
                   responses={200: s.TopologySerializer, **errors(400, 403, 404)},
                   examples=[example("rename", {"name": "pod-b"}, request=True)])
    def partial_update(self, request, pk):
        topology = self._topology(pk)
        data = _valid(s.TopologyUpdateSerializer, request.data)
        topology = services.topology_update(topology=topology, **data)
        return Response(s.TopologySerializer(topology).data)

    def destroy(self, request, pk):
        services.topology_delete(topology=self._topology(pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @extend_schema(summary="Fork: copy the current revision and its scenarios into your space",
                   request=s.ForkSerializer,
                   responses={201: s.TopologySerializer, **errors(400, 403, 404)},
                   examples=[example("fork", {"name": "pod-a (mine)"}, request=True)],
                   filters=False)
    @action(detail=True, methods=["post"], filter_backends=[])
    def fork(self, request, pk):
        topology = self._topology(pk)
        data = _valid(s.ForkSerializer, request.data)
        fork = services.topology_fork(topology=topology, user=request.user,
                                      name=data.get("name"))
        return Response(s.TopologySerializer(fork).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Transfer ownership (owner only); the previous owner stays editor",
                   request=s.TransferSerializer,
                   responses={200: s.TopologySerializer, **errors(400, 403, 404)},
                   examples=[example("transfer", {"username": "bob"}, request=True)],
                   filters=False)
    @action(detail=True, methods=["post"], filter_backends=[])
    def transfer(self, request, pk):
        topology = self._topology(pk)
        data = _valid(s.TransferSerializer, request.data)
        topology = services.topology_transfer(topology=topology, actor=request.user,
                                              new_owner=data["user"])
        return Response(s.TopologySerializer(topology).data)

    @extend_schema(summary="Audit trail: who changed what (owner and editors)",
                   responses={200: s.AuditEventSerializer(many=True), **errors(403, 404)},
                   filters=False)
    @action(detail=True, methods=["get"], filter_backends=[])
    def audit(self, request, pk):
        rows = selectors.audit_list(user=request.user, topology_pk=self._topology(pk).pk)
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(s.AuditEventSerializer(page, many=True).data)

    @extend_schema(
        summary="Import a server (NCCL topology XML, nvidia-smi topo -m, hwloc XML)",
        request={"multipart/form-data": s.ImportSerializer,
                 "application/json": s.ImportSerializer},
        responses={201: s.ImportResultSerializer, **errors(400, 413, 415)},
        examples=[
            example("nvidia-smi text", {"name": "node17", "format": "nvidia-smi",
                                        "text": "\tGPU0\tGPU1\tNIC0 ...", "host_id": "h0"},
                    request=True),
            example("imported", {"topology": EXAMPLE_TOPOLOGY, "format": "nvidia-smi",
                                 "warnings": ["PCIe generation and width not shown by "
                                              "nvidia-smi: Gen4 x16 assumed"]}, status=201)],
        filters=False)
    @action(detail=False, methods=["post"], url_path="import",
            parser_classes=[MultiPartParser, FormParser, JSONParser], filter_backends=[])
    def import_(self, request):
        serializer = s.ImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = engine_calls.import_host(
            content=serializer.content(), format=data.get("format"), host_id=data["host_id"],
            name=data["name"], field="file" if "file" in data else "text")
        topology = services.topology_create(
            owner=request.user, name=data["name"], description=data["description"],
            document=result.document, message=f"imported from {result.format}")
        body = {"topology": s.TopologySerializer(topology).data, "format": result.format,
                "warnings": result.warnings}
        return Response(body, status=status.HTTP_201_CREATED)

    @extend_schema(
        summary="Parse a server description into a one-host document without saving it",
        description="The editor's Import button: NCCL XML, `nvidia-smi topo -m` or hwloc XML in, "
                    "a normalized document holding host `host_id` out, with the defaults taken.",
        request={"multipart/form-data": s.ImportPreviewSerializer,
                 "application/json": s.ImportPreviewSerializer},
        responses={200: s.ImportPreviewResultSerializer, **errors(400, 413, 415)},
        examples=[example("nvidia-smi text", {"format": "nvidia-smi", "host_id": "h4",
                                              "text": "\tGPU0\tGPU1\tNIC0 ..."}, request=True)],
        filters=False)
    @action(detail=False, methods=["post"], url_path="import-preview",
            parser_classes=[MultiPartParser, FormParser, JSONParser], filter_backends=[])
    def import_preview(self, request):
        serializer = s.ImportPreviewSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = engine_calls.import_host(
            content=serializer.content(), format=data.get("format"), host_id=data["host_id"],
            name=data["name"], field="file" if "file" in data else "text")
        return Response({"document": result.document, "format": result.format,
                         "warnings": result.warnings})

    @extend_schema(
        summary="Build a cluster document without saving it (editor preview)",
        request=s.BuildPreviewSerializer,
        responses={200: OpenApiTypes.OBJECT, **errors(400, 413)},
        examples=[example("spec", {**EXAMPLE_BUILD, "hosts": 2}, request=True),
                  example("preview", {"document": {"format": "fabricscope.topology/1",
                                                   "name": "preview", "groups": [],
                                                   "nodes": [], "links": []},
                                      "summary": {"hosts": 2, "gpus": 16}})],
        filters=False)
    @action(detail=False, methods=["post"], url_path="build-preview", filter_backends=[])
    def build_preview(self, request):
        data = _valid(s.BuildPreviewSerializer, request.data)
        spec = s.BuildSpecSerializer(data=request.data)
        spec.is_valid(raise_exception=True)
        return Response(engine_calls.build_preview(
            name=data["name"], template=data["template"], hosts=data["hosts"],
            fabric=data["fabric"], options=spec.options()))


def _valid(serializer_class, data, **kwargs) -> dict:
    serializer = serializer_class(data=data, **kwargs)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


class GraphMLRenderer(BaseRenderer):
    media_type = "application/graphml+xml"
    format = "graphml"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


@extend_schema(
    summary="Export a topology revision as JSON or GraphML",
    parameters=[
        OpenApiParameter("format", str, enum=["json", "graphml"], default="json",
                         description="json: the fabricscope.topology/1 document; graphml: "
                                     "nodes and links with kind/tech/capacity attributes "
                                     "(networkx.read_graphml, yEd)"),
        OpenApiParameter("revision", int, description="revision number (default: current)")],
    responses={(200, "application/json"): OpenApiTypes.OBJECT,
               (200, "application/graphml+xml"): OpenApiTypes.STR, **errors(400, 404)})
class TopologyExportView(ApiMixin, APIView):
    renderer_classes = [JSONRenderer, GraphMLRenderer]
    permission_classes = [IsUserOrShareLinkReader]  # visibility: the selectors below

    def get(self, request, topology_pk):
        topology = selectors.topology_get(user=request.user, pk=topology_pk)
        number = _query_int(request, "revision", default=topology.revision_number)
        revision = selectors.revision_get(user=request.user, topology_pk=topology.pk,
                                          number=number)
        fmt = request.accepted_renderer.format
        body = (engine_calls.graphml(revision.document) if fmt == "graphml"
                else revision.document)
        filename = f"{topology.name}-r{revision.number}.{fmt}".replace('"', "")
        return Response(body, headers={
            "Content-Disposition": f'attachment; filename="{filename}"'})

    def perform_content_negotiation(self, request, force=False):
        try:
            return super().perform_content_negotiation(request, force)
        except Http404:
            raise ValidationError({"format": ["choose json or graphml"]}) from None

    def finalize_response(self, request, response, *args, **kwargs):
        if response.status_code >= 400:  # errors are JSON whatever format was asked for
            request.accepted_renderer, request.accepted_media_type = (
                JSONRenderer(), "application/json")
        return super().finalize_response(request, response, *args, **kwargs)


def _query_int(request, name: str, *, default: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isdigit() or int(raw) > 2 ** 31:
        raise ValidationError({name: ["must be a non-negative integer"]})
    return int(raw)


# --- Revisions -------------------------------------------------------------------------------------

@extend_schema_view(
    list=extend_schema(summary="List a topology's revisions (newest first, no documents)",
                       responses={200: s.RevisionSerializer(many=True), **errors(404)}),
    retrieve=extend_schema(summary="Get one revision with its document",
                           responses={200: s.RevisionDetailSerializer, **errors(404)}),
)
class RevisionViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.RevisionSerializer
    filter_backends = [OrderingFilter]
    ordering_fields = ["number", "created_at"]
    ordering = ["-number"]
    permission_classes = [IsUserOrShareLinkReader, TopologyRole]

    def get_queryset(self):
        if getattr(self, "swagger_fake_view", False):
            return TopologyRevision.objects.none()
        return selectors.revision_list(user=self.request.user,
                                       topology_pk=self.kwargs["topology_pk"])

    def list(self, request, topology_pk):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.RevisionSerializer(page, many=True).data)

    def retrieve(self, request, topology_pk, number):
        revision = selectors.revision_get(user=request.user, topology_pk=topology_pk,
                                          number=number)
        return Response(s.RevisionDetailSerializer(revision).data)

    @extend_schema(
        summary="Save a new revision edited from base_revision",
        request=s.RevisionCreateSerializer,
        responses={201: s.RevisionDetailSerializer, **errors(400, 403, 404, 409, 413, 415)},
        examples=[example("save", {"document": EXAMPLE_DOCUMENT, "base_revision": 3,
                                   "message": "moved nic2 to socket 1"}, request=True)])
    def create(self, request, topology_pk):
        topology = selectors.topology_get(user=request.user, pk=topology_pk)
        self.check_object_permissions(request, topology)
        data = _valid(s.RevisionCreateSerializer, request.data)
        revision = services.revision_save(topology=topology, user=request.user,
                                          document=data["document"],
                                          base_revision=data["base_revision"],
                                          message=data["message"])
        return Response(s.RevisionDetailSerializer(revision).data,
                        status=status.HTTP_201_CREATED)


# --- Scenarios -------------------------------------------------------------------------------------

@extend_schema_view(
    list=extend_schema(summary="List scenarios on your topologies",
                       responses={200: s.ScenarioSerializer(many=True), **errors(400)}),
    retrieve=extend_schema(summary="Get a scenario",
                           responses={200: s.ScenarioSerializer, **errors(404)}),
    destroy=extend_schema(summary="Delete a scenario (its jobs are kept)",
                          responses={204: None, **errors(403, 404)}),
)
class ScenarioViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.ScenarioSerializer
    filterset_class = ScenarioFilter
    search_fields = ["name", "description"]
    ordering_fields = ["name", "created_at", "updated_at"]
    ordering = ["-updated_at", "-pk"]
    lookup_value_regex = ID
    permission_classes = [IsUserOrShareLinkReader, TopologyRole]

    def get_queryset(self):
        return selectors.scenario_list(user=self.request.user)

    def _scenario(self, pk) -> Scenario:
        scenario = selectors.scenario_get(user=self.request.user, pk=pk)
        self.check_object_permissions(self.request, scenario)
        return scenario

    def list(self, request):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.ScenarioSerializer(page, many=True).data)

    def retrieve(self, request, pk):
        return Response(s.ScenarioSerializer(self._scenario(pk)).data)

    @extend_schema(
        summary="Create a scenario (checked by the engine: problems are located)",
        request=s.ScenarioSerializer,
        responses={201: s.ScenarioSerializer, **errors(400, 403, 413, 415)},
        examples=[example("ring all-reduce", {
            "topology": 7, "name": "ring", "workload": EXAMPLE_WORKLOAD,
            "routing": {"nic_policy": "affinity", "multipath": "hash", "seed": 1},
            "failures": [], "mode": "steady"}, request=True)])
    def create(self, request):
        data = _valid(s.ScenarioSerializer, request.data)
        topology = _body_ref(selectors.topology_get, request.user, data["topology_id"],
                             "topology")
        self.check_object_permissions(request, topology)
        scenario = services.scenario_create(
            topology=topology, user=request.user, name=data["name"],
            description=data["description"], workload=data["workload"],
            routing=data["routing"], failures=data["failures"], mode=data["mode"],
            revision=self._revision(topology, data))
        return Response(s.ScenarioSerializer(scenario).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Change a scenario (re-checked by the engine)",
                   request=s.ScenarioSerializer(partial=True),
                   responses={200: s.ScenarioSerializer, **errors(400, 403, 404)},
                   examples=[example("switch policy", {"routing": {"nic_policy": "pxn"}},
                                     request=True)])
    def partial_update(self, request, pk):
        scenario = self._scenario(pk)
        changes = dict(_valid(s.ScenarioSerializer, request.data, partial=True))
        if changes.pop("topology_id", scenario.topology_id) != scenario.topology_id:
            raise ValidationError({"topology": ["a scenario cannot move to another topology"]})
        if "revision" in changes:
            changes["revision"] = self._revision(scenario.topology, changes)
        scenario = services.scenario_update(scenario=scenario, user=request.user, **changes)
        return Response(s.ScenarioSerializer(scenario).data)

    def destroy(self, request, pk):
        services.scenario_delete(scenario=self._scenario(pk))
        return Response(status=status.HTTP_204_NO_CONTENT)

    def _revision(self, topology, data) -> TopologyRevision | None:
        if "revision" not in data:
            return None
        number = data["revision"]["number"]
        try:
            return selectors.revision_get(user=self.request.user, topology_pk=topology.pk,
                                          number=number)
        except Http404:
            raise ValidationError({"revision": [f"the topology has no revision {number}"]})


# --- Jobs ------------------------------------------------------------------------------------------

@extend_schema_view(
    list=extend_schema(summary="List your jobs (filter by state, kind, topology, scenario)",
                       responses={200: s.JobListSerializer(many=True), **errors(400)}),
    retrieve=extend_schema(summary="Get a job: state, progress, message, timings",
                           responses={200: s.JobSerializer, **errors(404)},
                           examples=[example("running sweep", EXAMPLE_JOB)]),
)
class JobViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.JobSerializer
    filterset_class = JobFilter
    search_fields = ["message", "scenario__name", "topology__name"]
    ordering_fields = ["created_at", "started_at", "finished_at", "state", "kind", "progress"]
    ordering = ["-created_at", "-pk"]
    lookup_value_regex = ID
    permission_classes = [IsUserOrShareLinkReader, TopologyRole]

    role_actions = {"create": "run"}

    def get_queryset(self):
        return selectors.job_list(user=self.request.user)

    def role_action(self, request, obj) -> str | None:
        """Cancelling: one's own job needs "run" (viewers may), anyone's needs "edit"."""
        if self.action == "cancel" and isinstance(obj, SimulationJob):
            return selectors.job_cancel_action(request.user, obj)
        return None

    def get_throttles(self):
        throttles = super().get_throttles()
        if self.action == "create":
            throttles.append(JobSubmitThrottle())
        return throttles

    def _job(self, pk) -> SimulationJob:
        job = selectors.job_get(user=self.request.user, pk=pk)
        self.check_object_permissions(self.request, job)
        return job

    def list(self, request):
        page = self.paginate_queryset(self.filter_queryset(self.get_queryset()))
        return self.get_paginated_response(s.JobListSerializer(page, many=True).data)

    def retrieve(self, request, pk):
        return Response(s.JobSerializer(self._job(pk)).data)

    @extend_schema(
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
    def create(self, request):
        data = _valid(s.JobCreateSerializer, request.data)
        scenario = _body_ref(selectors.scenario_get, request.user, data["scenario"], "scenario")
        self.check_object_permissions(request, scenario)
        job = _submit(scenario, request.user, data)
        return Response(s.JobSerializer(job).data, status=status.HTTP_201_CREATED)

    @extend_schema(summary="Cancel a queued or running job", request=None,
                   responses={200: s.JobSerializer, **errors(403, 404, 409)})
    @action(detail=True, methods=["post"], filter_backends=[])
    def cancel(self, request, pk):
        job = services.job_cancel(job=self._job(pk), user=request.user)
        return Response(s.JobSerializer(job).data)

    @extend_schema(
        summary="The result JSON of a finished job (409 until it succeeded)",
        responses={200: OpenApiTypes.OBJECT, **errors(404, 409)},
        examples=[example("result", {"format": "fabricscope.result/1", "summary": {
            "patterns": {"ar": {"completion_s": 0.01}}, "max_utilization": 1.0,
            "bottlenecks": []}, "flows": [], "resources": [], "diff": None})])
    @action(detail=True, methods=["get"], filter_backends=[])
    def result(self, request, pk):
        job = _finished_job(self._job(pk))
        return Response(selectors.result_get(user=request.user, job_pk=job.pk).data)

    @extend_schema(
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
    @action(detail=True, methods=["get"], filter_backends=[])
    def figures(self, request, pk):
        job = _finished_job(self._job(pk))
        if not engine_calls.figures_available(job.kind):
            raise ApiError(status_code=501, code="not_implemented",
                           message=f"figures of {job.kind} results are not available yet")
        selected = _query_int(request, "failure", default=-1)
        result = selectors.result_get(user=request.user, job_pk=job.pk)
        document = selectors.revision_get(user=request.user, topology_pk=job.topology_id,
                                          number=job.revision.number).document
        return Response(engine_calls.figures(result.data, job.kind, topology_doc=document,
                                             selected=None if selected < 0 else selected))


def _submit(scenario: Scenario, user, data: dict) -> SimulationJob:
    kind = data["kind"]
    if kind == JobKind.SWEEP:
        return services.job_submit_sweep(scenario=scenario, user=user, over=data["over"],
                                         chunks=data.get("chunks"), degrade=data.get("degrade"))
    if kind == JobKind.COMPARE:
        policies = data.get("policies") or ("affinity", "pxn", "any")
        return services.job_submit_compare(scenario=scenario, user=user, policies=policies)
    return services.job_submit_simulate(scenario=scenario, user=user)


def _finished_job(job: SimulationJob) -> SimulationJob:
    """The job if it succeeded; a 409 saying where it stands otherwise."""
    if job.state == JobState.SUCCEEDED:
        return job
    details = {"state": job.state, "progress": job.progress}
    if job.state in (JobState.QUEUED, JobState.RUNNING):
        raise ApiError(status_code=409, code="job_not_finished", details=details,
                       message=f"job {job.pk} is {job.state} ({job.progress}%): "
                               "no result yet; poll the job until it succeeds")
    details["error"] = job.error
    raise ApiError(status_code=409, code="no_result", details=details,
                   message=f"job {job.pk} {job.state} and has no result: {job.message}")


# --- Templates, catalog, validation ----------------------------------------------------------------

class TemplateViewSet(ApiMixin, viewsets.ViewSet):
    lookup_value_regex = r"[A-Za-z0-9_.-]+"
    lookup_field = "name"

    @extend_schema(summary="List host templates",
                   responses={200: s.TemplateSerializer(many=True), **errors(404)},
                   parameters=[OpenApiParameter("page", int), OpenApiParameter("page_size", int)])
    def list(self, request):
        paginator = ApiPagination()
        rows = list(engine_calls.templates().values())
        page = paginator.paginate_queryset(rows, request, view=self)
        return paginator.get_paginated_response(page)

    @extend_schema(summary="Get a host template", parameters=[
        OpenApiParameter("name", str, OpenApiParameter.PATH)],
        responses={200: s.TemplateSerializer, **errors(404)})
    def retrieve(self, request, name):
        return Response(_template(name))

    @extend_schema(
        summary="One host of a template as a document (for the editor's 'add host')",
        parameters=[OpenApiParameter("name", str, OpenApiParameter.PATH),
                    OpenApiParameter("host_id", str, default="h0",
                                     description="id of the host group (node ids become "
                                                 "<host_id>/gpu0 …)")],
        responses={200: s.HostDocumentSerializer, **errors(400, 404)})
    @action(detail=True, methods=["get"])
    def host(self, request, name):
        _template(name)
        host_id = _host_id(request.query_params.get("host_id", "h0"))
        document = engine_calls.host_document(template=name, host_id=host_id)
        return Response({"template": name, "host_id": host_id, "document": document})


def _template(name: str) -> dict:
    templates = engine_calls.templates()
    if name not in templates:
        raise Http404(f"no template {name!r} (choose from {', '.join(sorted(templates))})")
    return templates[name]


def _host_id(value: str) -> str:
    if not re.fullmatch(r"[A-Za-z0-9_.:-]{1,64}", value):
        raise ValidationError({"host_id": ["1-64 letters, digits, _ . : -"]})
    return value


class CatalogView(ApiMixin, APIView):
    @extend_schema(summary="The link technology catalog, node kinds and group kinds",
                   responses={200: OpenApiTypes.OBJECT, **errors()},
                   examples=[example("catalog", {"basis_default": "effective", "techs": {
                       "pcie5x16": {"raw_gbps": 512.0, "effective_gbps": 504.0}}})])
    def get(self, request):
        return Response(engine_calls.catalog())


class ValidateView(ApiMixin, APIView):
    @extend_schema(
        summary="Validate a topology document without saving it (editor)",
        request=s.ValidateSerializer,
        responses={200: s.ValidationReportSerializer, **errors(400, 413, 415)},
        examples=[
            example("document", {"document": EXAMPLE_DOCUMENT}, request=True),
            example("invalid", {"valid": False, "problems": [
                {"path": "links[1].b", "message": 'unknown node "sw9"'}]})])
    def post(self, request):
        data = _valid(s.ValidateSerializer, request.data)
        problems = engine_calls.validate_document(data["document"])
        return Response({"valid": not problems, "problems": problems})


class AuthTokenView(ApiMixin, APIView):
    """Your own API token: see it, create/rotate it, revoke it."""

    @extend_schema(summary="Your API token (null when you have none)",
                   responses={200: s.TokenSerializer, **errors()},
                   examples=[example("token", {"token": "9944b09199c62bcf9418ad846dd0e4bb"
                                               "dfc6ee4b", "created": "2026-01-05T10:00:00Z"})])
    def get(self, request):
        return Response(_token_body(selectors.api_token_get(user=request.user)))

    @extend_schema(summary="Create a token, replacing any previous one", request=None,
                   responses={201: s.TokenSerializer, **errors()},
                   examples=[example("created", {"token": "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b", "created": "2026-01-05T10:00:00Z"}, status=201)])
    def post(self, request):
        token = services.api_token_rotate(user=request.user)
        return Response(_token_body(token), status=status.HTTP_201_CREATED)

    @extend_schema(summary="Revoke your token", request=None,
                   responses={204: None, **errors()})
    def delete(self, request):
        services.api_token_revoke(user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


def _token_body(token) -> dict:
    return {"token": token.key if token else None, "created": token.created if token else None}


# --- Sharing: grants and read-only links (issue 9) -------------------------------------------------
# Grants are listed to the owner and editors, changed by the owner only; links (bearer secrets)
# are the owner's only. The selectors raise 404 for an unseen topology, 403 for a missing role.

@extend_schema_view(
    list=extend_schema(summary="Who a topology is shared with (owner and editors)",
                       responses={200: s.ShareSerializer(many=True), **errors(403, 404)}),
    create=extend_schema(summary="Share with a user or a team (owner only)",
                         request=s.ShareCreateSerializer,
                         responses={201: s.ShareSerializer, **errors(400, 403, 404)},
                         examples=[example("viewer", {"username": "bob", "role": "viewer"},
                                           request=True),
                                   example("team editor", {"group": "infra", "role": "editor"},
                                           request=True)]),
    partial_update=extend_schema(summary="Change a grant's role (owner only)",
                                 request=s.ShareUpdateSerializer,
                                 examples=[example("make editor", {"role": "editor"},
                                                   request=True)],
                                 responses={200: s.ShareSerializer, **errors(400, 403, 404)}),
    destroy=extend_schema(summary="Revoke a grant (owner only)",
                          responses={204: None, **errors(403, 404)}),
)
class ShareViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.ShareSerializer
    permission_classes = [IsAuthenticatedUser]
    filter_backends: list = []
    pagination_class = None

    def list(self, request, topology_pk):
        rows = selectors.share_list(user=request.user, topology_pk=topology_pk)
        return Response(s.ShareSerializer(rows, many=True).data)

    def create(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="manage")
        data = _valid(s.ShareCreateSerializer, request.data)
        share = services.share_grant(topology=topology, actor=request.user, role=data["role"],
                                     user=data.get("user"), group=data.get("group"))
        return Response(s.ShareSerializer(share).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request, topology_pk, pk):
        share = selectors.share_get(user=request.user, topology_pk=topology_pk, pk=pk,
                                    action="manage")
        data = _valid(s.ShareUpdateSerializer, request.data)
        share = services.share_update(share=share, actor=request.user, role=data["role"])
        return Response(s.ShareSerializer(share).data)

    def destroy(self, request, topology_pk, pk):
        share = selectors.share_get(user=request.user, topology_pk=topology_pk, pk=pk,
                                    action="manage")
        services.share_revoke(share=share, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    list=extend_schema(summary="Read-only share links of a topology (owner only)",
                       responses={200: s.ShareLinkSerializer(many=True), **errors(403, 404)}),
    create=extend_schema(
        summary="Create a read-only link to the topology or to one job's result (owner only)",
        description="The token is returned once (`token`, `url`); only its hash is stored. "
                    "Pages: `/s/<token>/`; API reads: `X-Share-Token: <token>` or `?share=`.",
        request=s.ShareLinkCreateSerializer,
        responses={201: s.ShareLinkSerializer, **errors(400, 403, 404)},
        examples=[example("result link for a week", {"job": 12,
                                                     "expires_at": "2026-01-12T10:00:00Z"},
                          request=True)]),
    destroy=extend_schema(summary="Revoke a link (owner only)",
                          responses={204: None, **errors(403, 404)}),
)
class ShareLinkViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.ShareLinkSerializer
    permission_classes = [IsAuthenticatedUser]
    filter_backends: list = []
    pagination_class = None

    def list(self, request, topology_pk):
        rows = selectors.share_link_list(user=request.user, topology_pk=topology_pk)
        return Response(s.ShareLinkSerializer(rows, many=True).data)

    def create(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="manage")
        data = _valid(s.ShareLinkCreateSerializer, request.data)
        job = None
        if data.get("job") is not None:
            job = _body_ref(selectors.job_get, request.user, data["job"], "job")
        link, token = services.share_link_create(
            topology=topology, actor=request.user, job=job, expires_at=data.get("expires_at"),
            label=data.get("label", ""))
        body = s.ShareLinkSerializer(link).data
        body.update({"token": token, "url": request.build_absolute_uri(f"/s/{token}/")})
        return Response(body, status=status.HTTP_201_CREATED)

    def destroy(self, request, topology_pk, pk):
        link = selectors.share_link_get(user=request.user, topology_pk=topology_pk, pk=pk)
        services.share_link_revoke(link=link, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


__all__ += ["ShareViewSet", "ShareLinkViewSet"]

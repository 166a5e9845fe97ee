"""``/topologies/``: list, get, create or build, rename, delete, fork, transfer, audit, preview.

Imports (``/topologies/import/``, ``import-preview``) are mixed in from :mod:`api.views.imports`.
"""
from __future__ import annotations

from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.response import Response

from api import serializers as s
from api.filters import TopologyFilter
from api.permissions import IsUserOrShareLinkReader, TopologyRole
from api.schema import topologies as doc
from api.views.base import ID, ApiMixin, valid_data
from api.views.imports import TopologyImportActions
from designer import selectors, services

__all__ = ["TopologyViewSet"]


@doc.viewset
class TopologyViewSet(ApiMixin, TopologyImportActions, viewsets.GenericViewSet):
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

    @doc.create
    def create(self, request):
        data = valid_data(s.TopologyCreateSerializer, request.data)
        if "build" in data:
            build = s.BuildSpecSerializer(data=request.data["build"])
            build.is_valid(raise_exception=True)
            topology = services.topology_build(
                owner=request.user, name=data["name"], description=data["description"],
                template=build.validated_data["template"], hosts=build.validated_data["hosts"],
                fabric=build.validated_data["fabric"], options=build.options(),
                larger=f"build fewer hosts, or build it as a job: {s.BUILD_JOB_PATH} with the same body")
        else:
            topology = services.topology_create(
                owner=request.user, name=data["name"], description=data["description"],
                document=data["document"], message=data["message"])
        return Response(s.TopologySerializer(topology).data, status=status.HTTP_201_CREATED)

    @doc.partial_update
    def partial_update(self, request, pk):
        topology = self._topology(pk)
        data = valid_data(s.TopologyUpdateSerializer, request.data)
        topology = services.topology_update(topology=topology, **data)
        return Response(s.TopologySerializer(topology).data)

    def destroy(self, request, pk):
        services.topology_delete(topology=self._topology(pk), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @doc.fork
    @action(detail=True, methods=["post"], filter_backends=[])
    def fork(self, request, pk):
        topology = self._topology(pk)
        data = valid_data(s.ForkSerializer, request.data)
        fork = services.topology_fork(topology=topology, user=request.user,
                                      name=data.get("name"))
        return Response(s.TopologySerializer(fork).data, status=status.HTTP_201_CREATED)

    @doc.transfer
    @action(detail=True, methods=["post"], filter_backends=[])
    def transfer(self, request, pk):
        topology = self._topology(pk)
        data = valid_data(s.TransferSerializer, request.data)
        topology = services.topology_transfer(topology=topology, actor=request.user,
                                              new_owner=data["user"])
        return Response(s.TopologySerializer(topology).data)

    @doc.audit
    @action(detail=True, methods=["get"], filter_backends=[])
    def audit(self, request, pk):
        rows = selectors.audit_list(user=request.user, topology_pk=self._topology(pk).pk)
        page = self.paginate_queryset(rows)
        return self.get_paginated_response(s.AuditEventSerializer(page, many=True).data)

    @doc.build_preview
    @action(detail=False, methods=["post"], url_path="build-preview", filter_backends=[])
    def build_preview(self, request):
        spec = s.BuildPreviewSerializer(data=request.data)
        spec.is_valid(raise_exception=True)
        data = spec.validated_data
        return Response(services.topology_build_preview(
            user=request.user, name=data["name"], template=data["template"],
            hosts=data["hosts"], fabric=data["fabric"], options=spec.options(),
            document=data["document"]))

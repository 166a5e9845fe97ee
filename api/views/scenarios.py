"""``/scenarios/``: list, get, create, change, delete (the engine checks the content); ``place``:
where the next job should go among a scenario's jobs (a ranking, nothing saved)."""
from __future__ import annotations

from django.http import Http404
from rest_framework import status, viewsets
from rest_framework.decorators import action
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response

from api import serializers as s
from api.filters import ScenarioFilter
from api.permissions import IsUserOrShareLinkReader, TopologyRole
from api.schema import scenarios as doc
from api.views.base import ID, ApiMixin, body_ref, valid_data
from designer import selectors, services
from designer.models import Scenario, TopologyRevision

__all__ = ["ScenarioViewSet"]


@doc.viewset
class ScenarioViewSet(ApiMixin, viewsets.GenericViewSet):
    serializer_class = s.ScenarioSerializer
    filterset_class = ScenarioFilter
    search_fields = ["name", "description"]
    ordering_fields = ["name", "created_at", "updated_at"]
    ordering = ["-updated_at", "-pk"]
    lookup_value_regex = ID
    permission_classes = [IsUserOrShareLinkReader, TopologyRole]
    role_actions = {"place": "run"}   # a ranking computes as a run does; it saves nothing

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

    @doc.create
    def create(self, request):
        data = valid_data(s.ScenarioSerializer, request.data)
        topology = body_ref(selectors.topology_get, request.user, data["topology_id"],
                            "topology")
        self.check_object_permissions(request, topology)
        scenario = services.scenario_create(
            topology=topology, user=request.user, name=data["name"],
            description=data["description"], workload=data["workload"],
            routing=data["routing"], failures=data["failures"], mode=data["mode"],
            latency=data["latency"], revision=self._revision(topology, data))
        return Response(s.ScenarioSerializer(scenario).data, status=status.HTTP_201_CREATED)

    @doc.partial_update
    def partial_update(self, request, pk):
        scenario = self._scenario(pk)
        changes = dict(valid_data(s.ScenarioSerializer, request.data, partial=True))
        if changes.pop("topology_id", scenario.topology_id) != scenario.topology_id:
            raise ValidationError({"topology": ["a scenario cannot move to another topology"]})
        if "revision" in changes:
            changes["revision"] = self._revision(scenario.topology, changes)
        scenario = services.scenario_update(scenario=scenario, user=request.user, **changes)
        return Response(s.ScenarioSerializer(scenario).data)

    @doc.place
    @action(detail=True, methods=["post"], filter_backends=[])
    def place(self, request, pk):
        scenario = self._scenario(pk)
        data = valid_data(s.PlaceRequestSerializer, request.data)
        return Response(services.scenario_place(scenario=scenario, new_job=data["job"]))

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

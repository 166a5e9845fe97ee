"""``/topologies/<id>/plan/``: the physical plan of the current revision. GET and POST read (with the
placements saved with the topology, or the POST's own); PUT saves placements and DELETE drops them
(editors and the owner only)."""
from __future__ import annotations

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsUserOrShareLinkReader
from api.schema import plan as doc
from api.serializers.plan import PlanPlacementsSerializer, PlanRequestSerializer
from api.views.base import ApiMixin, valid_data
from designer import selectors, services

__all__ = ["PlanView"]


class PlanView(ApiMixin, APIView):
    """GET and POST read (POST carries the overrides): anyone who may view the topology, a
    share-link visitor too for GET (a link is read-only: its POST, PUT and DELETE are 403). PUT and
    DELETE write the saved placements: the ``edit`` action (owner, editors; a viewer gets 403)."""

    permission_classes = (IsUserOrShareLinkReader,)  # visibility: the selector below

    @doc.get
    def get(self, request, topology_pk):
        topology = selectors.topology_get(user=request.user, pk=topology_pk)
        return Response(selectors.physical_plan(topology=topology, request={}))

    @doc.post
    def post(self, request, topology_pk):
        topology = selectors.topology_get(user=request.user, pk=topology_pk)
        overrides = dict(valid_data(PlanRequestSerializer, request.data))
        return Response(selectors.physical_plan(topology=topology, request=overrides))

    @doc.put
    def put(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="edit")
        data = dict(valid_data(PlanPlacementsSerializer, request.data))
        placements = data.pop("placements")
        return Response(services.plan_placements_save(topology=topology, request=data, placements=placements))

    @doc.delete
    def delete(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="edit")
        services.plan_placements_reset(topology=topology)
        return Response(status=status.HTTP_204_NO_CONTENT)

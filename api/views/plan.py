"""``GET/POST /topologies/<id>/plan/``: the physical plan of the current revision (nothing saved)."""
from __future__ import annotations

from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsUserOrShareLinkReader
from api.schema import plan as doc
from api.serializers.plan import PlanRequestSerializer
from api.views.base import ApiMixin, valid_data
from designer import selectors

__all__ = ["PlanView"]


class PlanView(ApiMixin, APIView):
    """A read (POST carries the overrides); anyone who may view the topology, a share-link
    visitor too for GET (a link is read-only: its POST is a 403)."""

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

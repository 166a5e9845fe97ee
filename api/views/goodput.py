"""``POST /topologies/<id>/goodput/``: the goodput plan of the current revision (nothing saved)."""
from __future__ import annotations

from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsAuthenticatedUser
from api.schema import goodput as doc
from api.serializers.goodput import GoodputRequestSerializer
from api.views.base import ApiMixin, valid_data
from designer import selectors

__all__ = ["GoodputView"]


class GoodputView(ApiMixin, APIView):
    """A read that takes a body, hence POST; anyone who may view the topology."""

    permission_classes = (IsAuthenticatedUser,)

    @doc.post
    def post(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="view")
        plan = valid_data(GoodputRequestSerializer, request.data)
        return Response(selectors.goodput_prediction(topology=topology, plan=plan))

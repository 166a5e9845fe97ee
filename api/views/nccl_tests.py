"""``POST /topologies/<id>/nccl-tests/``: predicted nccl-tests rows (and a real run compared)."""
from __future__ import annotations

from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsAuthenticatedUser
from api.schema import nccl_tests as doc
from api.serializers.nccl_tests import NcclTestsRequestSerializer
from api.views.base import ApiMixin, valid_data
from designer import selectors

__all__ = ["NcclTestsView"]


class NcclTestsView(ApiMixin, APIView):
    """A read (nothing is saved) that takes a body, hence POST; anyone who may view the topology."""

    permission_classes = (IsAuthenticatedUser,)

    @doc.post
    def post(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="view")
        data = valid_data(NcclTestsRequestSerializer, request.data)
        return Response(selectors.nccl_tests_prediction(topology=topology, **data))

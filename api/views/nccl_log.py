"""``POST /topologies/<id>/nccl-log/``: NCCL_DEBUG=INFO logs checked against the design (nothing saved)."""
from __future__ import annotations

from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsAuthenticatedUser
from api.schema import nccl_log as doc
from api.serializers.nccl_log import NcclLogRequestSerializer
from api.views.base import ApiMixin, valid_data
from designer import selectors

__all__ = ["NcclLogView"]


class NcclLogView(ApiMixin, APIView):
    """A read that takes a body, hence POST; anyone who may view the topology (404 otherwise)."""

    permission_classes = (IsAuthenticatedUser,)

    @doc.post
    def post(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="view")
        data = valid_data(NcclLogRequestSerializer, request.data)
        return Response(selectors.nccl_log_report(topology=topology, **data))

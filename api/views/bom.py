"""``GET /topologies/<id>/bom/``: bill of materials and fabric facts of a revision."""
from __future__ import annotations

from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsUserOrShareLinkReader
from api.schema import bom as doc
from api.views.base import ApiMixin, query_int
from designer import bridge, selectors

__all__ = ["TopologyBomView"]


class TopologyBomView(ApiMixin, APIView):
    """Anyone who may read the topology (a share-link visitor too); nothing is saved."""

    permission_classes = [IsUserOrShareLinkReader]  # visibility: the selectors below

    @doc.get
    def get(self, request, topology_pk):
        topology = selectors.topology_get(user=request.user, pk=topology_pk)
        number = query_int(request, "revision", default=topology.revision_number)
        revision = selectors.revision_get(user=request.user, topology_pk=topology.pk, number=number)
        return Response(bridge.fabric_bom(revision.document))

"""``GET /topologies/<id>/bom/``: bill of materials and fabric facts of a revision.

Read from the revision's digest (``designer.bridge.digest``, written with the revision), so a
2,048-host design is not parsed nor loaded into the engine (2.75 s of CPU). The digest keeps
None where this endpoint still answers from the document: a design without switches (the API
answers its BOM with no switch row) or one the BOM cannot read (the API answers the located 400).
"""
from __future__ import annotations

from django.http import Http404
from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsUserOrShareLinkReader
from api.schema import bom as doc
from api.views.base import ApiMixin, query_int
from designer import bridge, selectors
from designer.pages.selectors import revision_digest

__all__ = ["TopologyBomView"]


class TopologyBomView(ApiMixin, APIView):
    """Anyone who may read the topology (a share-link visitor too); nothing is saved."""

    permission_classes = [IsUserOrShareLinkReader]  # visibility: the selectors below

    @doc.get
    def get(self, request, topology_pk):
        topology = selectors.topology_get(user=request.user, pk=topology_pk)
        number = query_int(request, "revision", default=topology.revision_number)
        # Without its document (revision_list defers it): read only when the digest has no BOM.
        revision = selectors.revision_list(user=request.user, topology_pk=topology.pk).filter(
            number=number).first()
        if revision is None:
            raise Http404("no such revision")
        bom = revision_digest(revision)[0]["bom"]
        if bom is None:   # no switch, or a document the BOM cannot read: as before, from it
            bom = bridge.fabric_bom(revision.document)
        return Response(bom)

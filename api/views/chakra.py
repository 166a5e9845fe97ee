"""``POST /topologies/<id>/chakra-import/``: uploaded Chakra traces as a job (nothing saved)."""
from __future__ import annotations

from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsAuthenticatedUser
from api.schema import chakra as doc
from api.serializers.chakra import ChakraImportRequestSerializer
from api.views.base import ApiMixin, valid_data
from designer import bridge, selectors
from designer.bridge.imports import CHAKRA_MAX_HOSTS

__all__ = ["ChakraImportView", "MAX_CHAKRA_HOSTS"]

#: Hosts of a design a request maps ranks onto (the design is compiled for its GPU order), the
#: scenario page's too (``designer.bridge.imports``); larger designs: ``python -m designer.engine
#: import-workload --format chakra``.
MAX_CHAKRA_HOSTS = CHAKRA_MAX_HOSTS


class ChakraImportView(ApiMixin, APIView):
    """A conversion that takes uploads, hence POST; anyone who may view the topology (404 otherwise)."""

    permission_classes = (IsAuthenticatedUser,)
    parser_classes = (MultiPartParser,)

    @doc.post
    def post(self, request, topology_pk):
        topology = selectors.topology_get_for(user=request.user, pk=topology_pk, action="view")
        data = valid_data(ChakraImportRequestSerializer, request.data)
        if topology.current_revision_id is None:
            raise ValidationError("this topology has no revision yet: save one in the editor first")
        if topology.host_count > MAX_CHAKRA_HOSTS:
            raise ValidationError(f"traces are mapped inline onto designs of up to {MAX_CHAKRA_HOSTS} hosts; this "
                                  f"one has {topology.host_count}: use `python -m designer.engine import-workload "
                                  "--format chakra`")
        return Response(bridge.import_chakra_job(document=topology.current_revision.document, **data))

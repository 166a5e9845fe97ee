"""``/topologies/<id>/export/``: a revision as its JSON document or as GraphML."""
from __future__ import annotations

from django.http import Http404
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from api.permissions import IsUserOrShareLinkReader
from api.schema import export as doc
from api.views.base import ApiMixin, query_int
from designer import bridge, selectors

__all__ = ["GraphMLRenderer", "TopologyExportView"]


class GraphMLRenderer(BaseRenderer):
    media_type = "application/graphml+xml"
    format = "graphml"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


@doc.export
class TopologyExportView(ApiMixin, APIView):
    renderer_classes = [JSONRenderer, GraphMLRenderer]
    permission_classes = [IsUserOrShareLinkReader]  # visibility: the selectors below

    def get(self, request, topology_pk):
        topology = selectors.topology_get(user=request.user, pk=topology_pk)
        number = query_int(request, "revision", default=topology.revision_number)
        revision = selectors.revision_get(user=request.user, topology_pk=topology.pk,
                                          number=number)
        fmt = request.accepted_renderer.format
        body = (bridge.graphml(revision.document) if fmt == "graphml"
                else revision.document)
        filename = f"{topology.name}-r{revision.number}.{fmt}".replace('"', "")
        return Response(body, headers={
            "Content-Disposition": f'attachment; filename="{filename}"'})

    def perform_content_negotiation(self, request, force=False):
        try:
            return super().perform_content_negotiation(request, force)
        except Http404:
            raise ValidationError({"format": ["choose json or graphml"]}) from None

    def finalize_response(self, request, response, *args, **kwargs):
        if response.status_code >= 400:  # errors are JSON whatever format was asked for
            request.accepted_renderer, request.accepted_media_type = (
                JSONRenderer(), "application/json")
        return super().finalize_response(request, response, *args, **kwargs)

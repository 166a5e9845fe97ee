"""``/topologies/<id>/export/``: a revision as its JSON document or as GraphML.

JSON is the revision's stored text, sent as the database holds it (``designer.editor_document``):
never parsed and encoded again (a 2,048-host design is ~40 MB: 1.65 s of CPU that way, ~0.1 s
this way). GraphML is built by networkx (~60 µs of CPU per node or link): a revision over
:data:`GRAPHML_MAX_ELEMENTS` is refused with a 413 that names the limit and the CLI command that
does the same export offline (docs/RELIABILITY.md, "Big designs: cost per page").
"""
from __future__ import annotations

from django.http import Http404, HttpResponse
from rest_framework.exceptions import ValidationError
from rest_framework.renderers import BaseRenderer, JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from api.exception_handlers import ApiError
from api.permissions import IsUserOrShareLinkReader
from api.schema import export as doc
from api.views.base import ApiMixin, query_int
from designer import bridge, editor_document, selectors
from designer.pages.selectors import revision_digest

__all__ = ["GraphMLRenderer", "TopologyExportView", "GRAPHML_MAX_ELEMENTS"]

#: Nodes + links of a revision the API exports as GraphML: ~0.75 s of CPU at this size (networkx
#: builds and writes every element). Larger: ``python -m designer.engine export`` offline.
GRAPHML_MAX_ELEMENTS = 12_000
GRAPHML_COMMAND = "python -m designer.engine export <document.json> --format graphml -o <file>"


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
        # Without its document (revision_list defers it): the JSON answer is the stored text.
        revision = selectors.revision_list(user=request.user, topology_pk=topology.pk).filter(
            number=number).first()
        if revision is None:
            raise Http404("no such revision")
        fmt = request.accepted_renderer.format
        filename = f"{topology.name}-r{revision.number}.{fmt}".replace('"', "")
        headers = {"Content-Disposition": f'attachment; filename="{filename}"'}
        if fmt != "graphml":
            return HttpResponse(editor_document.document_text(topology.pk, revision.pk),
                                content_type="application/json", headers=headers)
        _check_graphml_size(revision)
        return Response(bridge.graphml(revision.document), headers=headers)

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


def _check_graphml_size(revision) -> None:
    """413 ``export_too_large`` when the revision has more than :data:`GRAPHML_MAX_ELEMENTS`
    nodes + links (counted by its digest: the document is not read)."""
    counts = revision_digest(revision)[0]["counts"]
    elements = counts["nodes"] + counts["links"]
    if elements > GRAPHML_MAX_ELEMENTS:
        raise ApiError(
            status_code=413, code="export_too_large",
            message=(f"format=graphml: revision {revision.number} has {elements} nodes and links; "
                     f"the API exports at most {GRAPHML_MAX_ELEMENTS} as GraphML "
                     f"(GRAPHML_MAX_ELEMENTS): export it as JSON (format=json) and run "
                     f"`{GRAPHML_COMMAND}`, which does the same export offline"),
            details={"path": "format", "elements": elements,
                     "limit_elements": GRAPHML_MAX_ELEMENTS, "command": GRAPHML_COMMAND})

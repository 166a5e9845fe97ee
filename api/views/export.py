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

__all__ = ["GraphMLRenderer", "TopologyExportView", "GRAPHML_MAX_ELEMENTS", "OPS_MAX_ELEMENTS", "OPS_EXPORTS"]

#: Nodes + links of a revision the API exports as GraphML: ~0.75 s of CPU at this size (networkx
#: builds and writes every element). Larger: ``python -m designer.engine export`` offline.
GRAPHML_MAX_ELEMENTS = 12_000
GRAPHML_COMMAND = "python -m designer.engine export <document.json> --format graphml -o <file>"


#: Exports for simulators and operations (``bridge.ops_export``): format -> (media type, file
#: extension). astra-sim and netbox write several files: answered as one JSON bundle
#: (``fabricscope.export-bundle/1``, docs/FORMATS.md "Exports for simulators and operations").
OPS_EXPORTS = {"astra-sim": ("application/json", "astra-sim.json"), "htsim": ("text/plain", "topo"),
               "slurm-tree": ("text/plain", "conf"), "slurm-block": ("application/yaml", "yaml"),
               "dot-air": ("text/vnd.graphviz", "dot"), "netbox": ("application/json", "netbox.json"),
               "simai-topo": ("text/plain", "simai.txt")}   # SimAI's topology text (engine.io.simai_topo)
#: Nodes + links of a revision the API exports in those formats: ~6 µs of CPU per element (the
#: design validated and compiled, then written): ~0.1-0.2 s at 17,432 (128 DGX-H100 hosts),
#: ~0.7-0.9 s at 146,624 (1,024 hosts), the same budget as GraphML's limit. Larger: the CLI offline.
OPS_MAX_ELEMENTS = 120_000


def _ops_renderer(fmt: str) -> type:
    """A pass-through renderer that lets ``?format=<fmt>`` select an ops export."""
    return type(f"OpsRenderer_{fmt.replace('-', '_')}", (GraphMLRenderer,),
                {"media_type": OPS_EXPORTS[fmt][0], "format": fmt})


class GraphMLRenderer(BaseRenderer):
    media_type = "application/graphml+xml"
    format = "graphml"
    charset = None

    def render(self, data, accepted_media_type=None, renderer_context=None):
        return data


@doc.export
class TopologyExportView(ApiMixin, APIView):
    renderer_classes = [JSONRenderer, GraphMLRenderer]   # + one per ops export, below the class
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
        if fmt in OPS_EXPORTS:
            return _ops_response(topology, revision, fmt)
        if fmt != "graphml":
            return HttpResponse(editor_document.document_text(topology.pk, revision.pk),
                                content_type="application/json", headers=headers)
        _check_graphml_size(revision)
        return Response(bridge.graphml(revision.document), headers=headers)

    def perform_content_negotiation(self, request, force=False):
        try:
            return super().perform_content_negotiation(request, force)
        except Http404:
            raise ValidationError({"format": [f"choose json, graphml or {', '.join(OPS_EXPORTS)}"]}) from None

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


TopologyExportView.renderer_classes = [JSONRenderer, GraphMLRenderer] + [_ops_renderer(f) for f in OPS_EXPORTS]


def _ops_response(topology, revision, fmt: str) -> HttpResponse:
    """One ops export of ``revision`` (a bundle for the several-file formats), bounded like GraphML."""
    _check_export_size(revision, fmt, OPS_MAX_ELEMENTS, "OPS_MAX_ELEMENTS")
    text, _ = bridge.ops_export(revision.document, fmt)
    media_type, extension = OPS_EXPORTS[fmt]
    filename = f"{topology.name}-r{revision.number}.{extension}".replace('"', "")
    return HttpResponse(text, content_type=f"{media_type}; charset=utf-8",
                        headers={"Content-Disposition": f'attachment; filename="{filename}"'})


def _check_export_size(revision, fmt: str, limit: int, name: str) -> None:
    """413 ``export_too_large`` when the revision has more than ``limit`` nodes + links (counted
    by its digest: the document is not read), naming the CLI command that exports offline."""
    counts = revision_digest(revision)[0]["counts"]
    elements = counts["nodes"] + counts["links"]
    if elements > limit:
        command = f"python -m designer.engine export <document.json> --format {fmt} -o <file>"
        raise ApiError(
            status_code=413, code="export_too_large",
            message=(f"format={fmt}: revision {revision.number} has {elements} nodes and links; the API "
                     f"exports at most {limit} in this format ({name}): export it as JSON (format=json) "
                     f"and run `{command}`, which does the same export offline"),
            details={"path": "format", "elements": elements, "limit_elements": limit, "command": command})

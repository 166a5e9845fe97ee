"""Docs of ``/topologies/<id>/export/`` (decorates ``api.views.export.TopologyExportView``)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema

from api.schema.helpers import errors, id_query

__all__ = ["export"]

export = extend_schema(
    summary="Export a topology revision as JSON or GraphML",
    parameters=[
        OpenApiParameter("format", str, enum=["json", "graphml"], default="json",
                         description="json: the fabricscope.topology/1 document; graphml: "
                                     "nodes and links with kind/tech/capacity attributes "
                                     "(networkx.read_graphml, yEd)"),
        id_query("revision", "revision number (default: current; a missing one is a 404)",
                 maximum=2 ** 31 - 1)],
    responses={(200, "application/json"): OpenApiTypes.OBJECT,
               (200, "application/graphml+xml"): OpenApiTypes.STR, **errors(400, 404, 413, extra="export")})

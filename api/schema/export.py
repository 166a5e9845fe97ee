"""Docs of ``/topologies/<id>/export/`` (decorates ``api.views.export.TopologyExportView``)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema

from api.schema.helpers import errors, id_query

__all__ = ["export"]

export = extend_schema(
    summary="Export a topology revision as JSON or GraphML",
    parameters=[
        OpenApiParameter("format", str, enum=["json", "graphml", "astra-sim", "htsim", "slurm-tree",
                                              "slurm-block", "dot-air", "netbox", "simai-topo"], default="json",
                         description="json: the fabricscope.topology/1 document; graphml: "
                                     "nodes and links with kind/tech/capacity attributes "
                                     "(networkx.read_graphml, yEd); astra-sim (network.yml + "
                                     "system.json) and "
                                     "netbox (devices/interfaces/cables CSV): a JSON bundle "
                                     "{format: fabricscope.export-bundle/1, export, files: {name: text}}; "
                                     "htsim (.topo), slurm-tree (topology.conf), slurm-block "
                                     "(topology.yaml), dot-air (NVIDIA Air DOT), simai-topo (SimAI's "
                                     "topology text): the file's text "
                                     "(docs/FORMATS.md, Exports for simulators and operations)"),
        id_query("revision", "revision number (default: current; a missing one is a 404)",
                 maximum=2 ** 31 - 1)],
    responses={(200, "application/json"): OpenApiTypes.OBJECT,
               (200, "application/graphml+xml"): OpenApiTypes.STR, (200, "text/plain"): OpenApiTypes.STR,
               (200, "application/yaml"): OpenApiTypes.STR, (200, "text/vnd.graphviz"): OpenApiTypes.STR,
               **errors(400, 404, 413, extra="export")})

"""Docs of ``/topologies/<id>/bom/`` (decorates ``api.views.bom.TopologyBomView``)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema

from api.schema.helpers import errors, id_query

__all__ = ["get"]

get = extend_schema(
    summary="Bill of materials of a topology revision",
    description="Switches by model and tier with ports used/free, links, cables and transceivers "
                "by reach class (in-rack copper, in-row, optics), per-tier oversubscription, "
                "bisection bandwidth and switch power (fabricscope.bom/1; engine.bom.fabric_bom).",
    parameters=[id_query("revision", "revision number (default: current; a missing one is a 404)",
                         maximum=2 ** 31 - 1)],
    responses={200: OpenApiTypes.OBJECT, **errors(400, 404)})

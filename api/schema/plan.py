"""Docs of ``/topologies/<id>/plan/`` (decorates ``api.views.plan.PlanView``)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema

from api.schema.helpers import errors, example
from api.serializers.plan import PlanRequestSerializer

__all__ = ["get", "post"]

_DESCRIPTION = ("Floor plan, cable schedule and costed bill of materials of the topology's current "
                "revision (fabricscope.plan/1, docs/FORMATS.md \"Physical plan\"): servers and switches "
                "placed into racks and rows, racks over their power budget flagged, one schedule row per "
                "cable with its medium chosen by reach, and US$ and W per tier and per GPU (prices are "
                "editable estimates). Runs inline for topologies of up to 2,048 hosts; nothing is saved.")

get = extend_schema(summary="Physical plan of a topology with the catalog defaults", description=_DESCRIPTION,
                    responses={200: OpenApiTypes.OBJECT, **errors(400, 404)})
post = extend_schema(
    summary="Physical plan of a topology with overrides", description=_DESCRIPTION + " Every bad override is a "
    "400 located in the request (`prices.switch:eth-51t2`).",
    request=PlanRequestSerializer, responses={200: OpenApiTypes.OBJECT, **errors(400, 403, 404)},
    examples=[example("a 48U, 40 kW rack and a switch price", {"rack": {"units": 48, "power_kw": 40},
                                                               "prices": {"switch:eth-51t2": 52000}}, request=True)])

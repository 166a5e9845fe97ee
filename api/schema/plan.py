"""Docs of ``/topologies/<id>/plan/`` (decorates ``api.views.plan.PlanView``)."""
from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema

from api.schema.helpers import errors, example
from api.serializers.plan import PlanPlacementsSerializer, PlanRequestSerializer

__all__ = ["get", "post", "put", "delete"]

_DESCRIPTION = ("Floor plan, cable schedule and costed bill of materials of the topology's current "
                "revision (fabricscope.plan/1, docs/FORMATS.md \"Physical plan\"): servers and switches "
                "placed into racks and rows, racks over their power budget flagged, one schedule row per "
                "cable with its medium chosen by reach, and US$ and W per tier and per GPU (prices are "
                "editable estimates). Devices moved by hand (placements) saved with the topology are applied; "
                "one that no longer fits is left automatic and flagged. Runs inline for topologies of up to "
                "2,048 hosts; GET and POST save nothing.")

get = extend_schema(summary="Physical plan of a topology with the catalog defaults", description=_DESCRIPTION,
                    responses={200: OpenApiTypes.OBJECT, **errors(400, 404)})
post = extend_schema(
    summary="Physical plan of a topology with overrides", description=_DESCRIPTION + " Every bad override is a "
    "400 located in the request (`prices.switch:eth-51t2`).",
    request=PlanRequestSerializer, responses={200: OpenApiTypes.OBJECT, **errors(400, 403, 404)},
    examples=[example("a 48U, 40 kW rack and a switch price", {"rack": {"units": 48, "power_kw": 40},
                                                               "prices": {"switch:eth-51t2": 52000}}, request=True),
              example("a host moved by hand (not saved)", {"placements": {"h6": {"rack": "R01-01"}}}, request=True)])
put = extend_schema(
    summary="Save the floor plan's hand placements", description="Checks `placements` (device id -> `{rack, "
    "position}`: position is the lowest unit, 1-based, optional) against the plan of the current revision with the "
    "other keys of the body as plan options (not saved), saves them with positions filled in and answers the plan. "
    "A device into a full rack, an unknown rack or device, units taken by another device: a 400 located at "
    "`placements.<device>…`, nothing saved. A rack over its power budget and a run no medium reaches are allowed "
    "and flagged in the plan. Editors and the owner only (a viewer: 403).",
    request=PlanPlacementsSerializer, responses={200: OpenApiTypes.OBJECT, **errors(400, 403, 404)},
    examples=[example("move h6 to rack R01-01 at U25", {"placements": {"h6": {"rack": "R01-01", "position": 25}}},
                      request=True)])
delete = extend_schema(summary="Reset the floor plan to automatic", description="Drops every saved placement. "
                       "Editors and the owner only (a viewer: 403).", responses={204: None, **errors(403, 404)})

"""Physical plan: ``GET/POST /topologies/<id>/plan/`` request shape (docs/FORMATS.md, "Physical plan").

The serializer checks the shape (objects where the request has objects, a list of medium kinds,
no unknown key); the engine checks every value and locates its problem
(``prices.switch:eth-51t2: must be a number > 0 …``), answered as a 400 with those paths.
"""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import BoundedObjectField

__all__ = ["PlanRequestSerializer", "PlanPlacementsSerializer"]

_SECTIONS = ("prices", "power", "units", "rack", "row", "spacing_m")


class PlanRequestSerializer(serializers.Serializer):
    """Overrides of the physical catalog for one plan; every key optional."""

    prices = BoundedObjectField(required=False, help_text="item key -> US$ (switch:eth-51t2, medium:dr:800, …)")
    power = BoundedObjectField(required=False, help_text="item key -> W (a medium: per end)")
    units = BoundedObjectField(required=False, help_text="item key -> rack units")
    rack = BoundedObjectField(required=False, help_text="{units, power_kw}")
    row = BoundedObjectField(required=False, help_text="{racks, network: end|middle}")
    spacing_m = BoundedObjectField(required=False, help_text="{same_rack, rack_width, row_pitch, slack} (m)")
    media = serializers.ListField(child=serializers.CharField(max_length=16), required=False, max_length=16,
                                  help_text="allowed medium kinds (dac, acc, aec, aoc, sr, dr, fr, lpo, cpo)")
    placements = BoundedObjectField(required=False, help_text="devices moved by hand: device id -> {rack, position "
                                    "(lowest U, optional)}; replaces the saved ones for this plan")

    def validate(self, attrs):
        unknown = sorted(set(self.initial_data) - set(self.fields)) if isinstance(self.initial_data, dict) else []
        if unknown:
            raise serializers.ValidationError({k: ["unknown key"] for k in unknown})
        return attrs


class PlanPlacementsSerializer(PlanRequestSerializer):
    """``PUT``: the placements to save (required) and the plan options they are checked against."""

    placements = BoundedObjectField(help_text="device id -> {rack, position (lowest U, optional)}; {} = automatic")

"""Design-space explorer: ``POST /topologies/<id>/explore/`` request shape (docs/FORMATS.md,
"Design-space explorer").

The serializer checks the shape (objects where the request has objects, a list of jobs, a chunk
count); the engine checks every value and locates its problem (``grid.switch[1]: unknown switch
model 'sw-9000'``), answered as a 400 with those paths, before anything is saved.
"""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import BoundedObjectField

from designer.services import MAX_SWEEP_CHUNKS

__all__ = ["ExploreRequestSerializer"]


class ExploreRequestSerializer(serializers.Serializer):
    """A grid of fabric options × a job mix; ``base`` options left out come from the design."""

    base = BoundedObjectField(required=False, help_text="build options fixed for every point (template, hosts or gpus, "
                                                   "fabric, …); default: the design's own")
    grid = BoundedObjectField(help_text="axis -> list of values; axes: template, gpus, hosts, fabric, tiers, "
                                  "oversubscription, switch, nic_link_tech, planes")
    jobs = serializers.ListField(child=serializers.JSONField(), required=False, max_length=1024,
                                 help_text="the job mix (docs/FORMATS.md, Jobs with placements)")
    workload = serializers.JSONField(required=False, help_text="one workload instead of jobs")
    routing = BoundedObjectField(required=False, help_text="{nic_policy, multipath}; default nic_policy pxn")
    plan = BoundedObjectField(required=False, help_text="physical-plan overrides (prices, power, rack …)")
    mode = serializers.ChoiceField(choices=["steady", "timeline"], required=False)
    chunks = serializers.IntegerField(required=False, min_value=1, max_value=MAX_SWEEP_CHUNKS,
                                      help_text="tasks the points are split into (default: the server's)")

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields) - {"format", "options"})
            if unknown:
                raise serializers.ValidationError({k: ["unknown key"] for k in unknown})
        return super().to_internal_value(data)

"""Scenarios: workload, routing, failures and mode on one topology revision."""
from __future__ import annotations

from rest_framework import serializers

from api.serializers.fields import JsonListField, JsonObjectField, StrictCharField
from designer.choices import ScenarioMode

__all__ = ["ScenarioSerializer"]


class ScenarioSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    topology = serializers.IntegerField(source="topology_id", help_text="topology id; fixed "
                                        "once created")
    revision = serializers.IntegerField(
        source="revision.number", required=False, min_value=1,
        help_text="revision number the scenario runs on (default: the current one)")
    name = StrictCharField(max_length=200)
    description = StrictCharField(required=False, allow_blank=True, default="")
    workload = JsonListField(help_text="traffic patterns (DESIGN.md §2.3a)")
    routing = JsonObjectField(required=False, default=dict,
                              help_text='{"nic_policy", "multipath", "seed"}')
    failures = JsonListField(required=False, default=list,
                             help_text='[{"target", "mode": "down"|"degrade", "factor"}]')
    mode = serializers.ChoiceField(choices=ScenarioMode.choices, default=ScenarioMode.STEADY)
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

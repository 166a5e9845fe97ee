"""Scenarios: workload, routing, failures and mode on one topology revision."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.fields import JsonListField, JsonObjectField, StrictCharField
from designer.choices import ScenarioMode

__all__ = ["ScenarioSerializer", "WorkloadField"]

_JOB_SCHEMA = {
    "type": "object", "required": ["job"], "additionalProperties": False,
    "properties": {"job": {
        "type": "object", "additionalProperties": True,
        "description": "A training step as a DAG of phases (docs/FORMATS.md, Jobs): layout "
                       '{"tp", "pp", "dp", "ep", "cp", "order"}, phases [{"id", "compute_s", '
                       '"patterns", "after"}] or a model "template"; what import-workload writes'}}}


@extend_schema_field({"oneOf": [{"type": "array", "items": {"type": "object", "additionalProperties": True},
                                 "description": "traffic patterns (docs/FORMATS.md, Scenario)"}, _JOB_SCHEMA]})
class WorkloadField(serializers.JSONField):
    """A list of patterns, or ``{"job": {...}}`` (a step as a DAG of phases).

    Only the shape is checked here; the engine checks the content and locates each problem
    (``workload.job.phases[3].after[0]: unknown phase 'bwd'``).
    """

    def to_internal_value(self, data):
        if isinstance(data, dict):
            if set(data) != {"job"}:
                extra = sorted(set(data) - {"job"})
                raise serializers.ValidationError(
                    'must be a list of patterns or {"job": {...}}'
                    + (f" (unknown field(s) {extra})" if extra else ' (no "job")'))
            if not isinstance(data["job"], dict):
                raise serializers.ValidationError({"job": ['must be an object with "phases" or "template"']})
        elif not isinstance(data, list):
            raise serializers.ValidationError('must be a list of patterns or {"job": {...}}')
        return super().to_internal_value(data)


class ScenarioSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    topology = serializers.IntegerField(source="topology_id", help_text="topology id; fixed "
                                        "once created")
    revision = serializers.IntegerField(
        source="revision.number", required=False, min_value=1,
        help_text="revision number the scenario runs on (default: the current one)")
    name = StrictCharField(max_length=200)
    description = StrictCharField(required=False, allow_blank=True, default="")
    workload = WorkloadField(help_text='traffic patterns (docs/FORMATS.md, Scenario), or {"job": {...}}: '
                                       "a training step as a DAG of phases (docs/FORMATS.md, Jobs)")
    routing = JsonObjectField(required=False, default=dict,
                              help_text='{"nic_policy", "multipath", "seed"}')
    failures = JsonListField(required=False, default=list,
                             help_text='[{"target", "mode": "down"|"degrade", "factor"}]')
    mode = serializers.ChoiceField(choices=ScenarioMode.choices, default=ScenarioMode.STEADY)
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

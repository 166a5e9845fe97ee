"""Scenarios: workload, routing, failures and mode on one topology revision."""
from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.fields import JsonListField, JsonObjectField, StrictCharField
from designer.bridge.facts import LATENCY_CONSTANTS, LATENCY_INITIATORS
from designer.choices import ScenarioMode

__all__ = ["ScenarioSerializer", "WorkloadField", "JobsField", "LatencyField", "PlaceRequestSerializer"]

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


_PLACEMENT_SCHEMA = {
    "type": "object", "additionalProperties": False,
    "description": 'explicit {"hosts": [...]} or {"gpus": [ids]}, or a policy {"policy", "gpus": N, '
                   '"seed", "free": [ids] | "after"} (docs/FORMATS.md, Jobs with placements)',
    "properties": {"hosts": {"type": "array", "items": {"type": "string"}},
                   "gpus": {"oneOf": [{"type": "integer", "minimum": 1},
                                      {"type": "array", "items": {"type": "string"}}]},
                   "policy": {"type": "string", "enum": ["packed", "rail-aligned", "spread", "random"]},
                   "seed": {"type": "integer"},
                   "free": {"oneOf": [{"type": "string", "enum": ["after"]},
                                      {"type": "array", "items": {"type": "string"}}]}}}
_PLACED_JOB_SCHEMA = {
    "type": "object", "required": ["id", "placement"], "additionalProperties": False,
    "properties": {
        "id": {"type": "string", "description": "unique; no # or /"},
        "job": {"type": "object", "additionalProperties": True,
                "description": "a step as a DAG of phases over the job's own GPUs (docs/FORMATS.md, Jobs)"},
        "patterns": {"type": "array", "items": {"type": "object", "additionalProperties": True},
                     "description": "traffic patterns over the job's own GPUs (one of job or patterns)"},
        "placement": _PLACEMENT_SCHEMA,
        "start_s": {"type": "number", "minimum": 0, "description": "when its step starts (s), default 0"},
        "period_s": {"type": "number", "minimum": 0, "exclusiveMinimum": True,
                     "description": "a periodic job (checkpoint, data read): its period (s)"}}}


@extend_schema_field({"type": "array", "nullable": True, "items": _PLACED_JOB_SCHEMA,
                      "description": "a shared cluster: many jobs with placements solved together "
                                     "(docs/FORMATS.md, Jobs with placements); instead of workload"})
class JobsField(serializers.JSONField):
    """A shared cluster's jobs: a list of objects, or null. Only the shape is checked here; the
    engine checks placements and workloads and locates each problem
    (``jobs[1].placement.gpus[1]: h2/gpu0 is already claimed by job 'A'``)."""

    def to_internal_value(self, data):
        if data is None:
            return None
        if not isinstance(data, list) or not all(isinstance(j, dict) for j in data):
            raise serializers.ValidationError('must be a list of jobs [{"id", "patterns" | "job", "placement"}]')
        return super().to_internal_value(data)


_LATENCY_KEYS = ("message_bytes", "initiators", "flows", "overrides")
_LATENCY_SCHEMA = {
    "type": "object", "nullable": True, "additionalProperties": False,
    "description": "the latency view (docs/FORMATS.md, Scenario): one way and round trip of one "
                   "message per flow, per initiator; null or absent: none",
    "properties": {
        "message_bytes": {"type": "number", "minimum": 0, "exclusiveMinimum": True,
                          "description": "message size (bytes), default 65536"},
        "initiators": {"type": "array", "minItems": 1,
                       "items": {"type": "string", "enum": list(LATENCY_INITIATORS)},
                       "description": "who starts the transfer; default both"},
        "flows": {"type": "array", "nullable": True, "items": {"type": "string"},
                  "description": 'flow ids ("ar#0"); default the slowest flow of each pattern'},
        "overrides": {"type": "object", "additionalProperties": False,
                      "properties": {k: {"type": "number", "minimum": 0} for k in LATENCY_CONSTANTS},
                      "description": "latency constants replaced (ns)"}}}


@extend_schema_field(_LATENCY_SCHEMA)
class LatencyField(serializers.JSONField):
    """The latency view's request, or null. The shape is checked here, each problem at its key
    (``latency.message_bytes``); the engine checks it again when the scenario is saved."""

    def to_internal_value(self, data):
        if data is None:
            return None
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be an object or null")
        errors = {**{k: ["unknown field"] for k in sorted(set(data) - set(_LATENCY_KEYS))},
                  **_latency_errors(data)}
        if errors:
            raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


def _latency_errors(data: dict) -> dict:
    """``{key: [message]}`` of the keys of a latency request with a bad shape."""
    errors, size = {}, data.get("message_bytes", 1)
    if not isinstance(size, (int, float)) or isinstance(size, bool) or not size > 0:
        errors["message_bytes"] = ["must be a number of bytes > 0"]
    init = data.get("initiators", list(LATENCY_INITIATORS))
    if not isinstance(init, list) or not init or any(i not in LATENCY_INITIATORS for i in init):
        errors["initiators"] = [f"must be a non-empty list of {', '.join(LATENCY_INITIATORS)}"]
    flows = data.get("flows")
    if flows is not None and (not isinstance(flows, list) or not all(isinstance(f, str) for f in flows)):
        errors["flows"] = ['must be a list of flow ids like "ar#0"']
    over = data.get("overrides", {})
    if not isinstance(over, dict):
        errors["overrides"] = ["must be an object of constant name -> ns"]
    else:
        bad = {k: [f"unknown constant (choose from {', '.join(LATENCY_CONSTANTS)})"] if k not in LATENCY_CONSTANTS
               else ["must be ns >= 0"] for k, v in over.items()
               if k not in LATENCY_CONSTANTS or not isinstance(v, (int, float)) or isinstance(v, bool) or not v >= 0}
        if bad:
            errors["overrides"] = bad
    return errors


class ScenarioSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    topology = serializers.IntegerField(source="topology_id", help_text="topology id; fixed "
                                        "once created")
    revision = serializers.IntegerField(
        source="revision.number", required=False, min_value=1,
        help_text="revision number the scenario runs on (default: the current one)")
    name = StrictCharField(max_length=200)
    description = StrictCharField(required=False, allow_blank=True, default="")
    workload = WorkloadField(required=False, allow_null=True,
                             help_text='traffic patterns (docs/FORMATS.md, Scenario), or {"job": {...}}: '
                                       "a training step as a DAG of phases (docs/FORMATS.md, Jobs); "
                                       "null when the scenario has jobs")
    jobs = JobsField(required=False, allow_null=True, source="placed_jobs",
                     help_text="a shared cluster instead of workload: jobs with placements "
                               "(docs/FORMATS.md, Jobs with placements); null for a single workload")
    routing = JsonObjectField(required=False, default=dict,
                              help_text='{"nic_policy", "multipath", "seed"}')
    failures = JsonListField(required=False, default=list,
                             help_text='[{"target", "mode": "down"|"degrade", "factor"}]')
    mode = serializers.ChoiceField(choices=ScenarioMode.choices, default=ScenarioMode.STEADY)
    latency = LatencyField(required=False, allow_null=True, default=None,
                           help_text='the latency view: {"message_bytes", "initiators": ["cpu_proxy", '
                                     '"gpu_initiated"], "flows", "overrides"}; null: none')
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)

    def to_representation(self, instance):
        out = super().to_representation(instance)
        if out["jobs"] is not None:   # kept in the workload column as {"jobs": [...]}
            out["workload"] = None
        return out

    def validate(self, attrs):
        """``workload`` or ``jobs``, never both (one of them on create); ``jobs`` is stored as
        the workload ``{"jobs": [...]}`` (no schema change; the API and the engine say ``jobs``)."""
        workload, jobs = attrs.get("workload"), attrs.pop("placed_jobs", None)
        if workload is not None and jobs is not None:
            raise serializers.ValidationError({"jobs": ["give workload or jobs, not both "
                                                        "(a single workload is one job)"]})
        if jobs is not None:
            attrs["workload"] = {"jobs": jobs}
        elif workload is None and (not self.partial or "workload" in attrs):
            raise serializers.ValidationError({"workload": ["give workload (patterns or a job) or jobs"]})
        return attrs


class PlaceRequestSerializer(serializers.Serializer):
    """``POST /scenarios/{id}/place/``: the new job whose placement gives only its size."""

    job = serializers.JSONField(help_text='{"id", "patterns" | "job", "placement": {"gpus": N, '
                                          '"free": [ids]}} (docs/FORMATS.md, Place)')

    def validate_job(self, value):
        if not isinstance(value, dict):
            raise serializers.ValidationError('must be a job {"id", "patterns" | "job", "placement": {"gpus": N}}')
        return value

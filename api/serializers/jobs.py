"""Jobs: submitting a simulation, sweep or comparison, and the job rows."""
from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from api.serializers.fields import StrictCharField

from designer.choices import JobKind, JobState
from designer.services import NIC_POLICIES

__all__ = ["JobCreateSerializer", "JobSerializer", "JobListSerializer", "BuildResultSerializer"]


class JobCreateSerializer(serializers.Serializer):
    scenario = serializers.IntegerField(min_value=1)
    # A diagnosis is submitted with its runs (POST /topologies/<id>/diagnose/), an exploration with
    # its grid (POST /topologies/<id>/explore/), a build with its spec (POST /topologies/build-job/),
    # not a scenario.
    kind = serializers.ChoiceField(choices=[c for c in JobKind.choices if c[0] not in (
        JobKind.DIAGNOSE, JobKind.EXPLORE, JobKind.BUILD)])
    over = serializers.ListField(
        child=StrictCharField(max_length=64), required=False, max_length=32,
        help_text='sweep only: failure classes to try one by one, e.g. ["nic"]')
    chunks = serializers.IntegerField(min_value=1, max_value=256, required=False,
                                      help_text="sweep only: parallel tasks")
    degrade = serializers.FloatField(
        required=False, min_value=0.0, max_value=1.0,
        help_text="sweep only: degrade each candidate to this capacity factor (0 < f < 1) "
                  "instead of taking it down")
    policies = serializers.ListField(
        child=serializers.ChoiceField(choices=NIC_POLICIES), required=False, max_length=8,
        help_text="compare only: NIC policies to compare (default affinity, pxn, any)")

    def validate_over(self, value: list[str]) -> list[str]:
        from designer.bridge.facts import sweep_classes

        known = sweep_classes()
        bad = {k: [f"unknown failure class {c!r} (choose from {', '.join(known)})"]
               for k, c in enumerate(value) if c not in known}
        if bad:
            raise serializers.ValidationError(bad)
        return value

    def validate(self, attrs):
        if attrs["kind"] == JobKind.SWEEP and not attrs.get("over"):
            raise serializers.ValidationError({"over": 'a sweep needs "over", e.g. ["nic"]'})
        if attrs.get("degrade") in (0.0, 1.0):
            raise serializers.ValidationError({"degrade": "must be strictly between 0 and 1"})
        return attrs


class _JobBaseSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=JobKind.choices)
    state = serializers.ChoiceField(choices=JobState.choices)
    progress = serializers.IntegerField(help_text="0-100")
    message = serializers.CharField()
    topology = serializers.IntegerField(source="topology_id")
    topology_name = serializers.CharField(source="topology.name")
    # null while a build job has not yet saved its topology's first revision
    revision = serializers.IntegerField(source="revision.number", allow_null=True)
    scenario = serializers.IntegerField(source="scenario_id", allow_null=True)
    scenario_name = serializers.SerializerMethodField()
    attempts = serializers.IntegerField()
    cancel_requested = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    timings = serializers.SerializerMethodField()
    url = serializers.SerializerMethodField(help_text="this job's status: poll it until `state` is final")
    result_url = serializers.SerializerMethodField(
        help_text="once succeeded: the result (`/jobs/{id}/result/`), or for a build job the topology "
                  "it built (`/topologies/{id}/`); null before")

    def get_url(self, job) -> str:
        return reverse("job-detail", args=[job.pk])

    def get_result_url(self, job) -> str | None:
        if job.state != JobState.SUCCEEDED:
            return None
        if job.kind == JobKind.BUILD:  # a build's result is its topology
            return reverse("topology-detail", args=[job.topology_id])
        return reverse("job-result", args=[job.pk])

    def get_scenario_name(self, job) -> str | None:
        return job.scenario.name if job.scenario_id else None

    @extend_schema_field({"type": "object", "properties": {
        "queued_s": {"type": "number", "nullable": True},
        "run_s": {"type": "number", "nullable": True},
        "total_s": {"type": "number", "nullable": True}}})
    def get_timings(self, job) -> dict:
        """Seconds spent queued, running, and in all (None until known)."""
        def span(a, b):
            return round((b - a).total_seconds(), 3) if a and b else None
        return {"queued_s": span(job.created_at, job.started_at),
                "run_s": span(job.started_at, job.finished_at),
                "total_s": span(job.created_at, job.finished_at)}


class JobListSerializer(_JobBaseSerializer):
    """List rows: no parameters, error text or result (the selector does not load them)."""


class JobSerializer(_JobBaseSerializer):
    parameters = serializers.JSONField(help_text='sweep {"over", "chunks"}, compare {"policies"}, '
                                                 'diagnose {"op", "options", "plan"}')
    error = serializers.CharField(help_text="why it failed (empty otherwise)")


class BuildResultSerializer(serializers.Serializer):
    """``/jobs/{id}/result/`` of a succeeded build job: the topology it created."""

    topology = serializers.IntegerField(source="topology_id")
    url = serializers.SerializerMethodField(help_text="the topology (`/topologies/{id}/`)")
    revision = serializers.IntegerField(source="revision.number", help_text="the revision it saved (1)")
    host_count = serializers.IntegerField(source="topology.host_count")
    gpu_count = serializers.IntegerField(source="topology.gpu_count")
    node_count = serializers.IntegerField(source="topology.node_count")
    link_count = serializers.IntegerField(source="topology.link_count")

    def get_url(self, job) -> str:
        return reverse("topology-detail", args=[job.topology_id])

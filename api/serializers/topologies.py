"""Topologies: the row shape, create (document or cluster build), update, build preview."""
from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from api.serializers.fields import DocumentField, JsonObjectField, StrictBooleanField, StrictCharField
from designer.bridge.facts import FABRICS, MAX_BUILD_HOSTS, MAX_PREVIEW_HOSTS, SWITCH_MODEL_IDS, TEMPLATE_NAMES

__all__ = ["MAX_BUILD_HOSTS", "max_build_hosts", "BuildSpecSerializer", "TopologySerializer",
           "TopologyCreateSerializer", "TopologyUpdateSerializer", "BuildPreviewSerializer",
           "BuildJobSpecSerializer", "TopologyBuildJobSerializer", "BUILD_JOB_PATH"]

#: Where a build larger than the request's limit goes (``api.views.builds.TopologyBuildJobView``).
BUILD_JOB_PATH = "POST /api/v1/topologies/build-job/"


def max_build_hosts() -> int:
    return min(MAX_BUILD_HOSTS, getattr(settings, "FABRICSCOPE_API_MAX_BUILD_HOSTS",
                                        MAX_BUILD_HOSTS))


def _over_inline_limit(limit: int) -> str:
    """The inline build's host-limit error: it names the job path that builds larger ones."""
    return (f"at most {limit:,} hosts per build in the request (MAX_BUILD_HOSTS / "
            f"FABRICSCOPE_API_MAX_BUILD_HOSTS); a larger cluster, up to "
            f"{settings.FABRICSCOPE_BUILD_JOB_MAX_HOSTS:,} hosts, is built as a job: "
            f"{BUILD_JOB_PATH} with the same body (202, then poll the job)")


class BuildSpecSerializer(serializers.Serializer):
    """Arguments of ``engine.fabrics.build_cluster``: N hosts of a template wired by a fabric."""

    template = serializers.ChoiceField(choices=TEMPLATE_NAMES)
    # Over the field's maximum, DRF answers before validate_hosts: the same message, naming the job path.
    hosts = serializers.IntegerField(min_value=1, max_value=MAX_BUILD_HOSTS, error_messages={
        "max_value": "at most {max_value} hosts per build in the request (MAX_BUILD_HOSTS); a larger "
                     f"cluster is built as a job: {BUILD_JOB_PATH} with the same body"})
    fabric = serializers.ChoiceField(choices=FABRICS, default="rail-optimized")
    rails = serializers.IntegerField(min_value=1, required=False)
    leaves_per_rail = serializers.IntegerField(min_value=1, max_value=1024, required=False)
    spines = serializers.IntegerField(min_value=0, max_value=1024, required=False)
    oversubscription = serializers.FloatField(min_value=1.0, max_value=1024.0, required=False)
    hosts_per_rack = serializers.IntegerField(min_value=1, max_value=1024, required=False)
    k = serializers.IntegerField(min_value=2, max_value=128, required=False,
                                 help_text="fat-tree radix (even)")
    storage = serializers.IntegerField(min_value=0, max_value=1024, required=False)
    nic_link_tech = StrictCharField(required=False, max_length=64)
    uplink_tech = StrictCharField(required=False, max_length=64)
    switch = serializers.ChoiceField(choices=SWITCH_MODEL_IDS, required=False,
                                     help_text="catalog switch model (default by NIC family)")
    planes = serializers.IntegerField(min_value=1, max_value=64, required=False)
    tiers = serializers.ChoiceField(choices=(2, 3), required=False)
    sharp = StrictBooleanField(required=False,
                               help_text="SHARP-capable InfiniBand switches (CollNet all-reduce selectable)")
    params = JsonObjectField(required=False, help_text="template parameters (see /templates/)")

    def validate_hosts(self, value: int) -> int:
        limit = max_build_hosts()
        if value > limit:
            raise serializers.ValidationError(_over_inline_limit(limit))
        return value

    def options(self) -> dict:
        """Everything but template/hosts/fabric, as ``build_cluster`` keyword arguments."""
        return {k: v for k, v in self.validated_data.items()
                if k not in ("template", "hosts", "fabric")}


class TopologySerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    name = serializers.CharField(read_only=True)
    description = serializers.CharField(read_only=True)
    owner = serializers.CharField(source="owner.get_username", read_only=True)
    revision_number = serializers.IntegerField(read_only=True,
                                               help_text="current revision (0 = none yet)")
    host_count = serializers.IntegerField(read_only=True)
    gpu_count = serializers.IntegerField(read_only=True)
    node_count = serializers.IntegerField(read_only=True)
    link_count = serializers.IntegerField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)
    role = serializers.SerializerMethodField(
        help_text="your role: owner, editor, viewer (link for a share-link visitor)")

    def get_role(self, topology) -> str | None:
        # Annotated by designer.selectors.topology_list; a topology you just created is yours.
        return getattr(topology, "my_role", None) or "owner"


class TopologyCreateSerializer(serializers.Serializer):
    """Either ``document`` (a topology document) or ``build`` (a cluster spec), not both."""

    name = StrictCharField(max_length=200)
    description = StrictCharField(required=False, allow_blank=True, default="")
    document = DocumentField(required=False)
    build = BuildSpecSerializer(required=False)
    message = StrictCharField(required=False, allow_blank=True, default="", max_length=500)

    def validate(self, attrs):
        if ("document" in attrs) == ("build" in attrs):
            raise serializers.ValidationError(
                'give either "document" (a topology document) or "build" (a cluster spec)')
        return attrs


class TopologyUpdateSerializer(serializers.Serializer):
    name = StrictCharField(max_length=200, required=False)
    description = StrictCharField(required=False, allow_blank=True)


class BuildPreviewSerializer(BuildSpecSerializer):
    name = StrictCharField(max_length=200, required=False, default="preview")
    hosts = serializers.IntegerField(min_value=1, max_value=MAX_PREVIEW_HOSTS)
    document = StrictBooleanField(
        required=False, default=True,
        help_text=f"false: only the summary and the bill of materials, counted from the spec "
                  f"without building the document (up to {MAX_PREVIEW_HOSTS:,} hosts)")

    def validate_hosts(self, value: int) -> int:
        # Only a document-free preview may go past the build limit (it builds no host).
        if self.initial_data.get("document") is False:
            return value
        limit = max_build_hosts()
        if value > limit:
            raise serializers.ValidationError(
                f"at most {limit:,} hosts per build (MAX_BUILD_HOSTS / FABRICSCOPE_API_MAX_BUILD_HOSTS); "
                f"a preview with \"document\": false counts up to {MAX_PREVIEW_HOSTS:,}")
        return value

    def options(self) -> dict:
        return {k: v for k, v in super().options().items() if k not in ("name", "document")}


class BuildJobSpecSerializer(BuildSpecSerializer):
    """A build spec for the job path: the request's host limit does not apply; the job's limits
    (``FABRICSCOPE_BUILD_JOB_MAX_HOSTS`` and ``_MAX_ELEMENTS``, read when the job is submitted)
    do, in ``designer.services.builds``, with a 400 naming them."""

    hosts = serializers.IntegerField(
        min_value=1, max_value=settings.FABRICSCOPE_BUILD_JOB_MAX_HOSTS, error_messages={
            "max_value": "at most {max_value} hosts per build job (FABRICSCOPE_BUILD_JOB_MAX_HOSTS): "
                         "build fewer hosts, or use the CLI's build command"},
        help_text="up to FABRICSCOPE_BUILD_JOB_MAX_HOSTS (12,500 by default: 100,000 GPUs of "
                  "eight-GPU hosts)")

    def validate_hosts(self, value: int) -> int:
        return value

    def to_internal_value(self, data):
        # A misspelt option ("spine") would otherwise be dropped and found only when the job is
        # done, minutes later: refused here, located at its key.
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({k: ["unknown build option"] for k in unknown})
        return super().to_internal_value(data)


class TopologyBuildJobSerializer(serializers.Serializer):
    """``POST /topologies/build-job/``: the inline create's ``build`` body, built on a worker."""

    name = StrictCharField(max_length=200)
    description = StrictCharField(required=False, allow_blank=True, default="")
    build = BuildJobSpecSerializer()

    def options(self) -> dict:
        """The build's ``build_cluster`` keyword arguments (all but template/hosts/fabric)."""
        return {k: v for k, v in self.validated_data["build"].items()
                if k not in ("template", "hosts", "fabric")}

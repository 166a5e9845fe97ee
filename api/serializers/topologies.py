"""Topologies: the row shape, create (document or cluster build), update, build preview."""
from __future__ import annotations

from django.conf import settings
from rest_framework import serializers

from api.serializers.fields import DocumentField, JsonObjectField, StrictBooleanField, StrictCharField
from designer.bridge.facts import FABRICS, MAX_BUILD_HOSTS, MAX_PREVIEW_HOSTS, SWITCH_MODEL_IDS, TEMPLATE_NAMES

__all__ = ["MAX_BUILD_HOSTS", "max_build_hosts", "BuildSpecSerializer", "TopologySerializer",
           "TopologyCreateSerializer", "TopologyUpdateSerializer", "BuildPreviewSerializer"]


def max_build_hosts() -> int:
    return min(MAX_BUILD_HOSTS, getattr(settings, "FABRICSCOPE_API_MAX_BUILD_HOSTS",
                                        MAX_BUILD_HOSTS))


class BuildSpecSerializer(serializers.Serializer):
    """Arguments of ``engine.fabrics.build_cluster``: N hosts of a template wired by a fabric."""

    template = serializers.ChoiceField(choices=TEMPLATE_NAMES)
    hosts = serializers.IntegerField(min_value=1, max_value=MAX_BUILD_HOSTS)
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
            raise serializers.ValidationError(
                f"at most {limit:,} hosts per build (MAX_BUILD_HOSTS / FABRICSCOPE_API_MAX_BUILD_HOSTS); "
                f"a preview with \"document\": false counts up to {MAX_PREVIEW_HOSTS:,}")
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
        return super().validate_hosts(value)

    def options(self) -> dict:
        return {k: v for k, v in super().options().items() if k not in ("name", "document")}

"""Request and response shapes of the API.

Serializers check the *shape* of input (types, required fields, choices); the engine checks the
*content* (documents, scenarios) inside the services, and its located problems come back through
``api.exception_handlers``. No serializer writes to the database: views call services.
"""
from __future__ import annotations

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from designer.choices import JobKind, JobState, ScenarioMode, ShareRole
from designer.engine.fabrics import FABRICS
from designer.engine.io import FORMATS as IMPORT_FORMATS
from designer.engine.templates import TEMPLATES
from designer.services import NIC_POLICIES

__all__ = [
    "MAX_BUILD_HOSTS", "BuildSpecSerializer", "TopologySerializer", "TopologyCreateSerializer",
    "TopologyUpdateSerializer", "BuildPreviewSerializer", "ImportSerializer",
    "ImportResultSerializer", "ImportPreviewSerializer", "ImportPreviewResultSerializer",
    "RevisionSerializer", "RevisionDetailSerializer",
    "RevisionCreateSerializer", "ScenarioSerializer", "JobCreateSerializer", "JobSerializer",
    "JobListSerializer", "ValidateSerializer", "ValidationReportSerializer",
    "TemplateSerializer", "HostDocumentSerializer", "TokenSerializer", "ErrorSerializer",
    "max_build_hosts", "ForkSerializer", "TransferSerializer", "AuditEventSerializer",
    "ShareSerializer", "ShareCreateSerializer", "ShareUpdateSerializer", "ShareLinkSerializer",
    "ShareLinkCreateSerializer",
]

from designer.engine.fabrics import MAX_HOSTS as MAX_BUILD_HOSTS  # noqa: E402  (one limit for pages and API)


def max_build_hosts() -> int:
    return min(MAX_BUILD_HOSTS, getattr(settings, "FABRICSCOPE_API_MAX_BUILD_HOSTS",
                                        MAX_BUILD_HOSTS))


@extend_schema_field({"type": "object", "additionalProperties": True,
                      "description": "A fabricscope.topology/1 document (DESIGN.md §2.1)"})
class DocumentField(serializers.JSONField):
    """A JSON object; the engine, not the serializer, says what is wrong inside it.

    Anything else is refused here: the engine's loader reads a *string* as JSON text or as a
    file path, and a path from a request must never reach it.
    """

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be a JSON object (a topology document)")
        return super().to_internal_value(data)


@extend_schema_field({"type": "array", "items": {"type": "object", "additionalProperties": True}})
class JsonListField(serializers.JSONField):
    def to_internal_value(self, data):
        if not isinstance(data, list):
            raise serializers.ValidationError("must be a list")
        return super().to_internal_value(data)


@extend_schema_field({"type": "object", "additionalProperties": True})
class JsonObjectField(serializers.JSONField):
    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise serializers.ValidationError("must be an object")
        return super().to_internal_value(data)


# --- Errors (for the schema) -----------------------------------------------------------------------

class _ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="machine-readable: invalid, invalid_topology, "
                                           "not_found, conflict, payload_too_large, throttled…")
    message = serializers.CharField(help_text="one line for humans")
    details = serializers.JSONField(
        help_text='[{"path", "message"}] for input problems (paths locate them in the request, '
                  "e.g. document.links[3].b); an object for other errors "
                  '({"current_revision": 7} on a revision conflict)')


class ErrorSerializer(serializers.Serializer):
    error = _ErrorDetailSerializer()


# --- Topologies ------------------------------------------------------------------------------------

class BuildSpecSerializer(serializers.Serializer):
    """Arguments of ``engine.fabrics.build_cluster``: N hosts of a template wired by a fabric."""

    template = serializers.ChoiceField(choices=sorted(TEMPLATES))
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
    nic_link_tech = serializers.CharField(required=False, max_length=64)
    uplink_tech = serializers.CharField(required=False, max_length=64)
    params = JsonObjectField(required=False, help_text="template parameters (see /templates/)")

    def validate_hosts(self, value: int) -> int:
        limit = max_build_hosts()
        if value > limit:
            raise serializers.ValidationError(f"at most {limit} hosts per build")
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

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    document = DocumentField(required=False)
    build = BuildSpecSerializer(required=False)
    message = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)

    def validate(self, attrs):
        if ("document" in attrs) == ("build" in attrs):
            raise serializers.ValidationError(
                'give either "document" (a topology document) or "build" (a cluster spec)')
        return attrs


class TopologyUpdateSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False)
    description = serializers.CharField(required=False, allow_blank=True)


class BuildPreviewSerializer(BuildSpecSerializer):
    name = serializers.CharField(max_length=200, required=False, default="preview")


class ImportSerializer(serializers.Serializer):
    """An uploaded file (multipart ``file``) or its text (JSON ``text``), not both."""

    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    file = serializers.FileField(required=False, help_text="multipart upload")
    text = serializers.CharField(required=False, trim_whitespace=False,
                                 help_text="the file content, in a JSON body")
    format = serializers.ChoiceField(choices=IMPORT_FORMATS, required=False,
                                     help_text="sniffed from the content when omitted")
    host_id = serializers.RegexField(r"^[A-Za-z0-9_.:-]{1,64}$", required=False, default="h0")

    def validate(self, attrs):
        if ("file" in attrs) == ("text" in attrs):
            raise serializers.ValidationError('give either "file" (multipart) or "text"')
        return attrs

    def content(self) -> str | bytes:
        upload = self.validated_data.get("file")
        return upload.read() if upload is not None else self.validated_data["text"]


class ImportPreviewSerializer(ImportSerializer):
    """Like an import, but nothing is saved: the editor inserts the host into its document."""

    name = serializers.CharField(max_length=200, required=False, default="imported")


class ImportPreviewResultSerializer(serializers.Serializer):
    document = serializers.JSONField(help_text="a normalized fabricscope.topology/1 document")
    format = serializers.ChoiceField(choices=IMPORT_FORMATS)
    warnings = serializers.ListField(child=serializers.CharField())


class ImportResultSerializer(serializers.Serializer):
    topology = TopologySerializer()
    format = serializers.ChoiceField(choices=IMPORT_FORMATS)
    warnings = serializers.ListField(child=serializers.CharField(),
                                     help_text="defaults taken for what the source did not say")


# --- Revisions -------------------------------------------------------------------------------------

class RevisionSerializer(serializers.Serializer):
    number = serializers.IntegerField(read_only=True)
    message = serializers.CharField(read_only=True)
    author = serializers.SerializerMethodField()
    checksum = serializers.CharField(read_only=True, help_text="sha256 of the canonical JSON")
    created_at = serializers.DateTimeField(read_only=True)

    def get_author(self, revision) -> str | None:
        return revision.author.get_username() if revision.author_id else None


class RevisionDetailSerializer(RevisionSerializer):
    document = DocumentField(read_only=True)


class RevisionCreateSerializer(serializers.Serializer):
    document = DocumentField()
    base_revision = serializers.IntegerField(
        min_value=0, help_text="the revision number you edited (0 when there is none yet); "
                               "a stale one is a 409 carrying the current number")
    message = serializers.CharField(required=False, allow_blank=True, default="", max_length=500)


# --- Scenarios -------------------------------------------------------------------------------------

class ScenarioSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    topology = serializers.IntegerField(source="topology_id", help_text="topology id; fixed "
                                        "once created")
    revision = serializers.IntegerField(
        source="revision.number", required=False, min_value=1,
        help_text="revision number the scenario runs on (default: the current one)")
    name = serializers.CharField(max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, default="")
    workload = JsonListField(help_text="traffic patterns (DESIGN.md §2.3a)")
    routing = JsonObjectField(required=False, default=dict,
                              help_text='{"nic_policy", "multipath", "seed"}')
    failures = JsonListField(required=False, default=list,
                             help_text='[{"target", "mode": "down"|"degrade", "factor"}]')
    mode = serializers.ChoiceField(choices=ScenarioMode.choices, default=ScenarioMode.STEADY)
    created_at = serializers.DateTimeField(read_only=True)
    updated_at = serializers.DateTimeField(read_only=True)


# --- Jobs ------------------------------------------------------------------------------------------

class JobCreateSerializer(serializers.Serializer):
    scenario = serializers.IntegerField(min_value=1)
    kind = serializers.ChoiceField(choices=JobKind.choices)
    over = serializers.ListField(
        child=serializers.CharField(max_length=64), required=False, max_length=32,
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
        from designer.engine.whatif import SWEEP_CLASSES  # here: whatif loads the solver

        bad = {k: [f"unknown failure class {c!r} (choose from {', '.join(SWEEP_CLASSES)})"]
               for k, c in enumerate(value) if c not in SWEEP_CLASSES}
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
    revision = serializers.IntegerField(source="revision.number")
    scenario = serializers.IntegerField(source="scenario_id", allow_null=True)
    scenario_name = serializers.SerializerMethodField()
    attempts = serializers.IntegerField()
    cancel_requested = serializers.BooleanField()
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)
    timings = serializers.SerializerMethodField()

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
    parameters = serializers.JSONField(help_text='sweep {"over", "chunks"}, compare {"policies"}')
    error = serializers.CharField(help_text="why it failed (empty otherwise)")


# --- Validation, templates, tokens ----------------------------------------------------------------

class ValidateSerializer(serializers.Serializer):
    document = DocumentField()


class _ProblemSerializer(serializers.Serializer):
    path = serializers.CharField(help_text="location in the document, e.g. links[3].b")
    message = serializers.CharField()


class ValidationReportSerializer(serializers.Serializer):
    valid = serializers.BooleanField()
    problems = _ProblemSerializer(many=True)


class TemplateSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    details = serializers.CharField()
    params = serializers.DictField(child=serializers.DictField(),
                                   help_text="parameter -> {default, help}")


class HostDocumentSerializer(serializers.Serializer):
    template = serializers.CharField()
    host_id = serializers.CharField()
    document = DocumentField(help_text="a normalized document holding one host group")


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(allow_null=True, help_text="null when you have none")
    created = serializers.DateTimeField(allow_null=True)


# --- Sharing (issue 9) -----------------------------------------------------------------------------

def _user_named(username: str):
    from django.contrib.auth import get_user_model

    user = get_user_model().objects.filter(username=username, is_active=True).first()
    if user is None:
        raise serializers.ValidationError(f"no active user named {username!r}")
    return user


class ForkSerializer(serializers.Serializer):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True,
                                 help_text='default "<name> (fork)"')


class TransferSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=150, help_text="the new owner")

    def validate(self, attrs):
        return {"user": _user_named(attrs["username"])}


class ShareSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    user = serializers.CharField(source="user.get_username", read_only=True, allow_null=True,
                                 default=None)
    group = serializers.CharField(source="group.name", read_only=True, allow_null=True,
                                  default=None)
    role = serializers.ChoiceField(choices=ShareRole.choices, read_only=True)
    created_at = serializers.DateTimeField(read_only=True)


class ShareCreateSerializer(serializers.Serializer):
    """Exactly one of ``username`` and ``group`` (a Django group = a team)."""

    username = serializers.CharField(max_length=150, required=False)
    group = serializers.CharField(max_length=150, required=False, help_text="team (group) name")
    role = serializers.ChoiceField(choices=ShareRole.choices)

    def validate(self, attrs):
        from django.contrib.auth.models import Group

        if ("username" in attrs) == ("group" in attrs):
            raise serializers.ValidationError('give either "username" or "group"')
        if "username" in attrs:
            return {"user": _user_named(attrs["username"]), "role": attrs["role"]}
        group = Group.objects.filter(name=attrs["group"]).first()
        if group is None:
            raise serializers.ValidationError({"group": [f"no team named {attrs['group']!r}"]})
        return {"group": group, "role": attrs["role"]}


class ShareUpdateSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=ShareRole.choices)


class ShareLinkSerializer(serializers.Serializer):
    id = serializers.IntegerField(read_only=True)
    job = serializers.IntegerField(source="job_id", allow_null=True, read_only=True,
                                   help_text="set: the link opens this job's result only")
    label = serializers.CharField(read_only=True)
    created_at = serializers.DateTimeField(read_only=True)
    expires_at = serializers.DateTimeField(read_only=True, allow_null=True)
    revoked_at = serializers.DateTimeField(read_only=True, allow_null=True)
    active = serializers.BooleanField(source="is_active", read_only=True)


class ShareLinkCreateSerializer(serializers.Serializer):
    job = serializers.IntegerField(min_value=1, required=False, allow_null=True)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    label = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")


class AuditEventSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    action = serializers.CharField()
    summary = serializers.CharField()
    actor = serializers.SerializerMethodField()
    details = serializers.JSONField()
    created_at = serializers.DateTimeField()

    def get_actor(self, event) -> str | None:
        return event.actor.get_username() if event.actor_id else None

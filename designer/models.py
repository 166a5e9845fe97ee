"""Persistence for topologies, their immutable revisions, scenarios and simulation jobs.

Write through ``designer.services`` and read through ``designer.selectors``; models hold fields,
constraints and the job state machine, not workflows.
"""
from __future__ import annotations

import json

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import models
from django.db.models import Q
from django.utils import timezone

from designer.choices import (
    ALLOWED_TRANSITIONS, AuditAction, JobKind, JobState, ScenarioMode, ShareRole, TERMINAL_STATES,
    TokenScope)
from designer.bridge.common import DocumentJSONDecoder, DocumentJSONEncoder
from designer.exceptions import IllegalTransition, ImmutableRevision

__all__ = ["Topology", "TopologyRevision", "Scenario", "SimulationJob", "SimulationResult",
           "ResultFigures", "SweepChunk", "TopologyShare", "ShareLink", "AuditEvent", "SignInFailure",
           "ApiToken", "RevisionDigest", "DocumentField"]


class Topology(models.Model):
    """A named design owned by a user; its content lives in :class:`TopologyRevision` rows."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                              related_name="topologies")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)
    # Head pointer and its number (0 = no revision yet). Saves lock this row, compare the number
    # with the editor's base and append number + 1 (see services.revision_save).
    current_revision = models.ForeignKey("TopologyRevision", null=True, blank=True,
                                         on_delete=models.SET_NULL, related_name="+")
    revision_number = models.PositiveIntegerField(default=0)
    # Size figures of the current revision, cached so list pages never parse documents.
    host_count = models.PositiveIntegerField(default=0)
    gpu_count = models.PositiveIntegerField(default=0)
    node_count = models.PositiveIntegerField(default=0)
    link_count = models.PositiveIntegerField(default=0)
    # Devices moved by hand on the floor plan: {device id: {rack, position}} (docs/FORMATS.md,
    # "Physical plan"); written only by services.plan_placements_save / _reset.
    plan_placements = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["-updated_at", "-pk"]
        constraints = [
            models.UniqueConstraint(fields=["owner", "name"], name="topology_unique_owner_name"),
        ]
        indexes = [models.Index(fields=["owner", "-updated_at"], name="topology_owner_updated")]

    def __str__(self) -> str:
        return self.name


class DocumentField(models.JSONField):
    """A JSON column without SQLite's ``JSON_VALID`` check: every document is validated and
    written by the app (orjson), and SQLite re-parsing it on insert was 0.5-1.1 s of a 32k-GPU
    design's one-node save (90 MB; docs/PERFORMANCE.md, "One-node save of a 32k-GPU design").

    On PostgreSQL the column is ``json``, not ``jsonb``: ``jsonb``'s binary form stops at 256 MiB
    ("total size of jsonb object elements exceeds the maximum of 268435455 bytes"), and a
    100,000-GPU design is 259 MB of JSON; ``json`` keeps the text as written (up to 1 GB, the
    key order too) and nothing queries inside a document. The value is sent as ``json`` and read
    back as text (``designer.apps``), so orjson, not the driver, parses it. ``json`` has no
    equality or containment operators: a query that compares, filters on, ``distinct()``s or
    ``union()``s this column works on SQLite and fails on PostgreSQL — select it, never compare it."""

    def db_check(self, connection):
        return None

    def db_type(self, connection):
        return "json" if connection.vendor == "postgresql" else super().db_type(connection)

    def get_db_prep_value(self, value, connection, prepared=False):
        if connection.vendor != "postgresql":
            return super().get_db_prep_value(value, connection, prepared)
        from psycopg.types.json import Json  # PostgreSQL only: psycopg is its driver

        value = value if prepared else self.get_prep_value(value)
        return Json(value, dumps=lambda obj: json.dumps(obj, cls=self.encoder))


class TopologyRevision(models.Model):
    """One immutable version of a topology document (``fabricscope.topology/1``).

    Stored whole (``stored_document``), or as a patch against an earlier revision of the same
    topology that is stored whole (``base`` + ``patch``, docs/FORMATS.md "Revisions stored as
    patches"): a one-node edit of a 100,000-GPU design then writes a few hundred bytes, not
    259 MB. ``document`` reads either form the same way: the patch is the *whole* way from the
    base (edits compose into it), so a reader applies one patch, never a chain.
    """

    topology = models.ForeignKey(Topology, on_delete=models.CASCADE, related_name="revisions")
    number = models.PositiveIntegerField()
    # Written and read by orjson (designer.bridge.common): 40 MB documents, ~5x / ~3x faster.
    # Null for a revision stored as a patch (the column keeps its name: ``document``).
    stored_document = DocumentField(encoder=DocumentJSONEncoder, decoder=DocumentJSONDecoder,
                                    null=True, db_column="document")
    # A revision stored as a patch: its whole-document base (never itself a patch) and the patch
    # from it (``designer.engine.document.patch`` form, composed: designer/engine/document/delta.py).
    base = models.ForeignKey("self", null=True, blank=True, on_delete=models.RESTRICT,
                             related_name="+")
    patch = DocumentField(encoder=DocumentJSONEncoder, decoder=DocumentJSONDecoder, null=True,
                          blank=True)
    # sha256 of the canonical JSON (sorted keys, no whitespace): equal documents, equal checksums.
    checksum = models.CharField(max_length=64)
    author = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                               on_delete=models.SET_NULL, related_name="+")
    message = models.CharField(max_length=500, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["topology", "-number"]
        constraints = [
            # The last line of defence against lost updates: two saves on the same base can
            # never both write number N + 1.
            models.UniqueConstraint(fields=["topology", "number"],
                                    name="revision_unique_topology_number"),
            models.CheckConstraint(condition=Q(number__gte=1), name="revision_number_positive"),
            # Whole, or a patch on a base: never both, never neither.
            models.CheckConstraint(
                condition=(Q(stored_document__isnull=False, base__isnull=True, patch__isnull=True)
                           | Q(stored_document__isnull=True, base__isnull=False, patch__isnull=False)),
                name="revision_whole_or_patch"),
        ]

    def __str__(self) -> str:
        return f"{self.topology_id}@{self.number}"

    def save(self, *args, **kwargs):
        if not self._state.adding:
            raise ImmutableRevision(f"revision {self} is immutable; save a new revision instead")
        super().save(*args, **kwargs)

    @property
    def document(self) -> dict:
        """The revision's whole document: as stored, or its base's with the patch applied (read
        once per instance; revisions never change)."""
        if self.stored_document is not None or self.base_id is None:
            return self.stored_document
        composed = getattr(self, "_composed", None)
        if composed is None:
            from designer.bridge.deltas import compose_document

            base = TopologyRevision.objects.only("stored_document").get(pk=self.base_id)
            composed = self._composed = compose_document(base.stored_document, self.patch)
        return composed

    @document.setter
    def document(self, value: dict) -> None:
        self.stored_document = value


def workload_items(workload) -> list[dict]:
    """What a stored workload holds, for pages: one ``{"id", "kind"}`` per pattern of a pattern
    list, one ``{"id": <job name>, "kind": "job · N phases"}`` for a job (``{"job": {...}}``), or
    one ``{"id", "kind": "placed job"}`` per job of a shared cluster (``{"jobs": [...]}``, kept in
    this column: docs/FORMATS.md, Jobs with placements)."""
    if isinstance(workload, dict) and isinstance(workload.get("job"), dict):
        job = workload["job"]
        phases = job.get("phases") if isinstance(job.get("phases"), list) else []
        return [{"id": str(job.get("name") or "job"), "kind": f"job · {len(phases)} phases"}]
    if isinstance(workload, dict) and isinstance(workload.get("jobs"), list):   # a shared cluster
        return [{"id": str(j.get("id", "")), "kind": "placed job"} for j in workload["jobs"] if isinstance(j, dict)]
    return [{"id": p.get("id", ""), "kind": p.get("kind", "")} for p in workload or [] if isinstance(p, dict)]


def workload_size(workload) -> str:
    """The "Patterns" column of a scenario table: a count, or ``job · N phases``."""
    items = workload_items(workload)
    return items[0]["kind"] if items and items[0]["kind"].startswith("job ·") else str(len(items))


class Scenario(models.Model):
    """A question asked of one topology revision: workload, routing policy, failures, mode."""

    topology = models.ForeignKey(Topology, on_delete=models.CASCADE, related_name="scenarios")
    revision = models.ForeignKey(TopologyRevision, on_delete=models.PROTECT,
                                 related_name="scenarios")
    name = models.CharField(max_length=200)
    description = models.TextField(blank=True)
    workload = models.JSONField(default=list, blank=True)
    routing = models.JSONField(default=dict, blank=True)
    failures = models.JSONField(default=list, blank=True)
    mode = models.CharField(max_length=16, choices=ScenarioMode.choices,
                            default=ScenarioMode.STEADY)
    # The latency view asked for (docs/FORMATS.md, Scenario ``latency``): message size,
    # initiators, optional flows and constant overrides; null asks for none.
    latency = models.JSONField(null=True, blank=True, default=None)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-updated_at", "-pk"]
        indexes = [models.Index(fields=["topology", "-updated_at"], name="scenario_topo_updated")]

    def __str__(self) -> str:
        return self.name

    @property
    def workload_size(self) -> str:
        return workload_size(self.workload)

    @property
    def placed_jobs(self) -> list | None:
        """A shared cluster's jobs with placements (kept in ``workload`` as ``{"jobs": [...]}``:
        no schema change; the API calls them ``jobs``), else None. (``jobs`` is the reverse
        relation of the scenario's simulation jobs.)"""
        w = self.workload
        return w["jobs"] if isinstance(w, dict) and set(w) == {"jobs"} else None

    def clean(self) -> None:
        if self.revision_id and self.topology_id and self.revision.topology_id != self.topology_id:
            raise ValidationError({"revision": "the revision belongs to another topology"})


class SimulationJob(models.Model):
    """One run of a scenario on a worker. The row, not the broker, is the source of truth."""

    kind = models.CharField(max_length=16, choices=JobKind.choices)
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.QUEUED)
    topology = models.ForeignKey(Topology, on_delete=models.CASCADE, related_name="jobs")
    # Null only while a ``build`` job has not yet made its topology's first revision.
    revision = models.ForeignKey(TopologyRevision, null=True, blank=True, on_delete=models.PROTECT,
                                 related_name="jobs")
    scenario = models.ForeignKey(Scenario, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="jobs")
    submitted_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                     on_delete=models.SET_NULL, related_name="+")
    # The scenario's workload/routing/failures/mode as submitted: editing the scenario later does
    # not change what this job computed.
    inputs = models.JSONField(default=dict)
    # Kind-specific options: sweep {"over": [...], "chunks": n}, compare {"policies": [...]}.
    parameters = models.JSONField(default=dict, blank=True)
    progress = models.PositiveSmallIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True)
    error = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    # Runs started so far; also the token of the current run (a superseded runner's writes are
    # ignored because its attempt number no longer matches).
    attempts = models.PositiveSmallIntegerField(default=0)
    cancel_requested = models.BooleanField(default=False)
    worker_hostname = models.CharField(max_length=255, blank=True)
    celery_task_id = models.CharField(max_length=255, blank=True)
    # When the broker accepted the message of ``celery_task_id``; null while queued means it
    # was never sent (a process died between commit and publish): the reaper publishes it.
    published_at = models.DateTimeField(null=True, blank=True)
    chunks_total = models.PositiveIntegerField(default=0)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [
            models.CheckConstraint(condition=Q(progress__lte=100), name="job_progress_le_100"),
        ]
        indexes = [
            models.Index(fields=["state", "heartbeat_at"], name="job_state_heartbeat"),
            models.Index(fields=["topology", "-created_at"], name="job_topology_created"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.state})"

    @property
    def workload_items(self) -> list[dict]:
        return workload_items((self.inputs or {}).get("workload"))

    @property
    def is_terminal(self) -> bool:
        return self.state in TERMINAL_STATES

    def transition(self, new_state: str, *, message: str | None = None) -> list[str]:
        """Move to ``new_state`` if the state machine allows it, stamping timestamps.

        Returns the changed field names for ``save(update_fields=...)``; raises
        :class:`IllegalTransition` otherwise. Callers hold the row lock.
        """
        fields = _move(self, new_state)
        if message is not None:
            self.message = message[:500]
            fields.append("message")
        return fields


class _ResultManager(models.Manager):
    """Leaves ``body`` unread until it is used: pages and summary readers need ``data`` only."""

    def get_queryset(self):
        return super().get_queryset().defer("body")


class SimulationResult(models.Model):
    """The result of a finished job, in its own table so job lists never load it.

    A simulation result is stored in two parts (:mod:`designer.bridge.results`; docs/FORMATS.md,
    "Stored results"):
    ``data`` holds the document without its bulk keys (``format``, ``summary``, ``scenario``...:
    what the result page and ``?view=summary`` read, a few kB) and ``body`` the bulk (``flows``,
    ``resources``, ``diff``, ``latency``) as compressed columns, read only when used. Rows stored
    whole (sweeps, comparisons, results written before migration 0004) have the whole document
    in ``data`` and no body; a sweep's ranking is kept there as columns
    (``fabricscope.sweep-columns/1``; in row form before). :meth:`document` gives the whole
    document, records expanded, either way.
    """

    job = models.OneToOneField(SimulationJob, on_delete=models.CASCADE, primary_key=True,
                               related_name="result")
    data = models.JSONField()
    # ``encoding`` names the body's format (result_columns.ENCODING); empty: no body.
    body = models.BinaryField(null=True, blank=True, editable=False)
    encoding = models.CharField(max_length=40, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    objects = _ResultManager()

    def __str__(self) -> str:
        return f"result of job {self.job_id}"

    @classmethod
    def parts_of(cls, document: dict) -> dict:
        """The field values storing ``document``: split and packed when it is a simulation result."""
        from designer.bridge import results

        return results.parts_of(document)

    def document(self) -> dict:
        """The whole stored document (reads ``body`` when there is one)."""
        from designer.bridge import results

        return results.stored_document(data=self.data, body=self.body, encoding=self.encoding,
                                       label=f"result of job {self.job_id}")


class ResultFigures(models.Model):
    """The figures of one result page view, built once (a finished result never changes).

    ``key`` says what they were built from: the figure code's version, the view and the selected
    sweep entry (``designer.figures.base.figures_key``); a key of older figure code is replaced.
    ``figures`` and ``path_index`` are the page's two JSON texts (``figures.base.figure_texts``),
    zlib-compressed, so a visit embeds them without parsing; ``keys`` names the figures.
    """

    result = models.ForeignKey(SimulationResult, on_delete=models.CASCADE, related_name="figure_sets")
    key = models.CharField(max_length=100)
    keys = models.JSONField(default=list)
    figures = models.BinaryField()
    path_index = models.BinaryField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["result", "key"], name="figures_unique_result_key")]

    def __str__(self) -> str:
        return f"figures {self.key} of job {self.result_id}"


class SweepChunk(models.Model):
    """One slice of a sweep's failure list, run as its own Celery task."""

    job = models.ForeignKey(SimulationJob, on_delete=models.CASCADE, related_name="chunks")
    index = models.PositiveIntegerField()
    state = models.CharField(max_length=16, choices=JobState.choices, default=JobState.QUEUED)
    failures = models.JSONField(default=list)
    progress = models.PositiveSmallIntegerField(default=0)
    message = models.CharField(max_length=500, blank=True)
    attempts = models.PositiveSmallIntegerField(default=0)
    error = models.TextField(blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    heartbeat_at = models.DateTimeField(null=True, blank=True)
    worker_hostname = models.CharField(max_length=255, blank=True)
    celery_task_id = models.CharField(max_length=255, blank=True)
    published_at = models.DateTimeField(null=True, blank=True)  # as on SimulationJob
    result = models.JSONField(null=True, blank=True)

    class Meta:
        ordering = ["job", "index"]
        constraints = [
            models.UniqueConstraint(fields=["job", "index"], name="chunk_unique_job_index"),
            models.CheckConstraint(condition=Q(progress__lte=100), name="chunk_progress_le_100"),
        ]
        indexes = [models.Index(fields=["state", "heartbeat_at"], name="chunk_state_heartbeat")]

    def __str__(self) -> str:
        return f"chunk {self.index} of job {self.job_id} ({self.state})"

    def transition(self, new_state: str) -> list[str]:
        """Same state machine as jobs; returns the changed field names."""
        return _move(self, new_state)


def _move(row, new_state: str) -> list[str]:
    """The state machine shared by jobs and sweep chunks: check the move, stamp the times."""
    if new_state not in ALLOWED_TRANSITIONS[row.state]:
        raise IllegalTransition(row.state, new_state)
    now = timezone.now()
    row.state = new_state
    fields = ["state"]
    if new_state == JobState.RUNNING:
        row.started_at = row.heartbeat_at = now
        fields += ["started_at", "heartbeat_at"]
    elif new_state in TERMINAL_STATES:
        row.finished_at = now
        fields.append("finished_at")
    return fields


# --- Sharing, share links, audit trail, sign-in failures -----------------------------------------

class TopologyShare(models.Model):
    """A grant of a role on a topology to one user or one group (exactly one of the two).

    The grant covers everything under the topology (revisions, scenarios, jobs, results). Who
    may do what with which role is decided in ``designer.selectors`` only.
    """

    topology = models.ForeignKey(Topology, on_delete=models.CASCADE, related_name="shares")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                             on_delete=models.CASCADE, related_name="topology_shares")
    group = models.ForeignKey("auth.Group", null=True, blank=True, on_delete=models.CASCADE,
                              related_name="topology_shares")
    role = models.CharField(max_length=16, choices=ShareRole.choices, default=ShareRole.VIEWER)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["topology", "pk"]
        constraints = [
            models.CheckConstraint(
                condition=(Q(user__isnull=False, group__isnull=True)
                           | Q(user__isnull=True, group__isnull=False)),
                name="share_user_xor_group"),
            models.UniqueConstraint(fields=["topology", "user"], condition=Q(user__isnull=False),
                                    name="share_unique_topology_user"),
            models.UniqueConstraint(fields=["topology", "group"],
                                    condition=Q(group__isnull=False),
                                    name="share_unique_topology_group"),
        ]

    def __str__(self) -> str:
        who = f"user {self.user_id}" if self.user_id else f"group {self.group_id}"
        return f"{who} {self.role} on {self.topology_id}"

    @property
    def grantee(self) -> str:
        return self.user.get_username() if self.user_id else f"team {self.group.name}"


class ShareLink(models.Model):
    """A read-only link to a topology, or to one job's result, usable without an account.

    Only the sha256 of the token is stored: the token itself is shown once, at creation.
    """

    topology = models.ForeignKey(Topology, on_delete=models.CASCADE, related_name="links")
    # Set: the link opens this job's result only; empty: the whole topology (read-only).
    job = models.ForeignKey(SimulationJob, null=True, blank=True, on_delete=models.CASCADE,
                            related_name="links")
    token_hash = models.CharField(max_length=64, unique=True)
    label = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                                   on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]

    def __str__(self) -> str:
        return f"link {self.pk} to {'job ' + str(self.job_id) if self.job_id else self.topology_id}"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None and (self.expires_at is None
                                            or self.expires_at > timezone.now())


class AuditEvent(models.Model):
    """Who changed what on a topology. Kept (topology set to NULL) when the topology is deleted."""

    topology = models.ForeignKey(Topology, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="audit_events")
    topology_name = models.CharField(max_length=200, blank=True)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True,
                              on_delete=models.SET_NULL, related_name="+")
    action = models.CharField(max_length=32, choices=AuditAction.choices)
    summary = models.CharField(max_length=500)
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        indexes = [models.Index(fields=["topology", "-created_at"], name="audit_topology_created")]

    def __str__(self) -> str:
        return f"{self.action} on {self.topology_id}: {self.summary}"


class SignInFailure(models.Model):
    """One failed sign-in, keyed by username and client address (lockout, designer.accounts)."""

    username = models.CharField(max_length=150)
    ip = models.CharField(max_length=64)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["username", "ip", "created_at"], name="signin_fail_key")]

    def __str__(self) -> str:
        return f"{self.username}@{self.ip} {self.created_at:%Y-%m-%d %H:%M:%S}"


class ApiToken(models.Model):
    """An API key for ``Authorization: Bearer <key>``, named by its owner.

    Only the SHA-256 of the key is stored (``designer.services.tokens`` says why SHA-256 and
    not a slow or keyed hash); the key is shown once, when it is created. ``prefix`` (its first
    12 characters, not secret) finds the row; the digest is then compared in constant time.
    """

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE,
                             related_name="api_tokens")
    name = models.CharField(max_length=100)
    prefix = models.CharField(max_length=12, db_index=True)
    digest = models.CharField(max_length=64, unique=True)
    scope = models.CharField(max_length=8, choices=TokenScope.choices, default=TokenScope.WRITE)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-pk"]
        constraints = [models.UniqueConstraint(fields=["user", "name"],
                                               name="api_token_unique_user_name")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…, {self.scope}) of user {self.user_id}"

    @property
    def is_expired(self) -> bool:
        return self.expires_at <= timezone.now()


class RevisionDigest(models.Model):
    """What the pages of a revision show, computed once when the revision is saved, so that no
    page view parses its document (a 2,048-host design is ~40 MB of JSON: 2 s to parse).

    ``summary`` is small JSON (``designer.bridge.digest``: host list, groups, BOM, counts);
    ``targets`` the zlib-compressed ``id<TAB>label`` lines of every group, node and link, which
    the scenario page's failure picker searches (``/topologies/<id>/scenarios/targets/``)
    instead of embedding 300k ``<option>``s. Written with its revision, never changed.
    """

    revision = models.OneToOneField(TopologyRevision, on_delete=models.CASCADE, primary_key=True,
                                    related_name="digest")
    summary = models.JSONField(default=dict)
    targets = models.BinaryField(default=bytes)

    def __str__(self) -> str:
        return f"digest of revision {self.revision_id}"

"""Topologies and their append-only revisions.

A topology's content changes only through :func:`revision_save`, which appends revision
head + 1 under the topology's row lock (optimistic concurrency against the editor's base).
"""
from __future__ import annotations

import logging

from django.contrib.auth.models import AbstractBaseUser
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from designer import bridge, item_store, selectors
from designer.exceptions import RevisionConflict
from designer.bridge import common as bridge_common
from designer.bridge import digest as bridge_digest
from designer.models import RevisionDigest, Scenario, SimulationJob, Topology, TopologyRevision
from designer.ops import limits
from designer.params import check_printable
from designer.services.audit import audit_record
from designer.services.jobs import jobs_cancel_for_delete
from designer.services.patches import PatchedRevision, patched_revision

__all__ = ["topology_create", "topology_build", "topology_build_preview", "topology_new",
           "topology_update", "topology_delete", "revision_save", "revision_append", "store_items"]


def topology_create(*, owner: AbstractBaseUser, name: str, description: str = "",
                    document: dict | None = None, message: str = "") -> Topology:
    """Create a topology, with a first revision when ``document`` is given.

    Raises
    ------
    ValidationError
        Bad name (or one the owner already uses); EngineValidationError for a bad document.
    QuotaExceeded
        The owner has the most topologies allowed, or no room for the document (403).
    """
    check_printable(name)
    normalized = bridge.normalize_document(document) if document is not None else None
    with transaction.atomic():
        limits.check_topology_quota(user=owner)  # locks the owner's row: counts cannot race
        topology = Topology(owner=owner, name=name, description=description)
        topology.full_clean()
        if normalized is not None:
            limits.check_storage_quota(user=owner, adding_bytes=limits.document_bytes(normalized))
        topology.save()
        if normalized is not None:
            revision_append(topology, owner, normalized, message or "first revision")
    return topology


def topology_build(*, owner: AbstractBaseUser, name: str, template: str, hosts: int,
                   fabric: str = "rail-optimized", options: dict | None = None,
                   description: str = "", larger: str = "build fewer hosts") -> Topology:
    """Generate a cluster (``hosts`` × ``template`` wired by ``fabric``) as a new topology;
    ``larger`` ends the too-large message (what the caller offers for a larger build).

    Raises
    ------
    BuildTooLarge, BuildRateExceeded
        Too many nodes + links for one request (400), or for this user this minute (429);
        checked from the one-host spec before building.
    QuotaExceeded
        As :func:`topology_create` (403).
    """
    if not isinstance(hosts, int) or hosts < 1:
        raise ValidationError({"hosts": "a positive number of hosts is required"})
    # Cheap refusals first: the build itself is the expensive part (seconds for 2,048 hosts).
    check_printable(name)
    with transaction.atomic():  # checked again, under the lock, when the topology is created
        limits.check_topology_quota(user=owner)
    limits.check_build(user=owner, template=template, hosts=hosts, options=options, larger=larger)
    document = bridge.build_cluster_document(name=name, template=template, hosts=hosts,
                                             fabric=fabric, options=options)
    message = f"generated: {hosts} x {template}, {fabric} fabric"
    return topology_create(owner=owner, name=name, description=description, document=document,
                           message=message)


def topology_new(*, owner: AbstractBaseUser, name: str, description: str = "", source: str,
                 template: str = "", hosts: int | None = None, fabric: str = "rail-optimized",
                 options: dict | None = None) -> Topology:
    """The New page's topology: a generated cluster (``source="cluster"``: :func:`topology_build`),
    one host of ``template`` (``"host"``, host id ``h0``), or a blank topology (anything else).

    Raises as :func:`topology_create` and :func:`topology_build`.
    """
    common = {"owner": owner, "name": name, "description": description}
    if source == "cluster":
        return topology_build(template=template, hosts=hosts, fabric=fabric, options=options,
                              **common)
    if source == "host":
        document = bridge.host_document(template=template, host_id="h0", name=name)
        return topology_create(document=document, message=f"from template {template}", **common)
    return topology_create(**common)


def topology_build_preview(*, user: AbstractBaseUser, name: str, template: str, hosts: int,
                           fabric: str = "rail-optimized", options: dict | None = None,
                           document: bool = True) -> dict:
    """The document :func:`topology_build` would save and its summary, saving nothing; it
    costs the same CPU, so it spends the same build budget (``limits.check_build``).

    ``document=False``: only the summary and the BOM, counted from the spec without building
    the document (``bridge.plan_preview``: up to ``facts.MAX_PREVIEW_HOSTS`` hosts, well under
    a second at 100,000 GPUs), so it spends no build budget.
    """
    if not document:
        return bridge.plan_preview(template=template, hosts=hosts, fabric=fabric, options=options or {})
    limits.check_build(user=user, template=template, hosts=hosts, options=options)
    return bridge.build_preview(name=name, template=template, hosts=hosts, fabric=fabric,
                                options=options or {})


def topology_update(*, topology: Topology, name: str | None = None,
                    description: str | None = None) -> Topology:
    """Rename or re-describe a topology (its content changes only through revisions)."""
    fields = []
    if name is not None:
        check_printable(name)
        topology.name, fields = name, fields + ["name"]
    if description is not None:
        topology.description, fields = description, fields + ["description"]
    if fields:
        topology.full_clean()
        topology.save(update_fields=fields + ["updated_at"])
    return topology


def topology_delete(*, topology: Topology, actor: AbstractBaseUser | None = None) -> None:
    """Delete a topology with its revisions, scenarios, jobs and results (and, once committed,
    its revisions' files in this machine's disk caches).

    Its queued and running jobs are cancelled first (rows locked, workers told to drop their
    messages), so no worker goes on computing for a topology that no longer exists.
    """
    with transaction.atomic():
        revisions = list(topology.revisions.values_list("pk", "checksum"))
        transaction.on_commit(lambda: _forget_files(revisions))
        audit_record(topology=topology, actor=actor, action="topology.delete",
                     summary=f"deleted {topology.name!r}")
        jobs_cancel_for_delete(topology)
        # Scenarios and jobs PROTECT their revision: remove them first, then the rest cascades.
        SimulationJob.objects.filter(topology=topology).delete()
        Scenario.objects.filter(topology=topology).delete()
        Topology.objects.filter(pk=topology.pk).update(current_revision=None)
        topology.delete()


def revision_save(*, topology: Topology, user: AbstractBaseUser, document: dict | None = None,
                  base_revision: TopologyRevision | int | None, message: str = "",
                  patch: dict | None = None) -> TopologyRevision:
    """Append a revision edited from ``base_revision`` (a row, its number, or None for none).

    The new content is ``document``, or ``patch`` applied to the base revision's document
    (a small edit of a 40 MB design posts only what changed; validated as the whole result
    would be). A document is stored whole; a patch is stored as the cumulative patch from the
    base's whole revision (:mod:`designer.services.patches`), unless that grows too big.

    The topology row is locked (``select_for_update``) and its head number compared with the
    base: a stale base raises :class:`RevisionConflict` carrying the current number. The unique
    (topology, number) constraint backs this up, so of N concurrent saves on one base exactly one
    wins.

    Raises
    ------
    RevisionConflict
        ``base_revision`` is not the current revision.
    EngineValidationError
        The document is invalid, or the patch does not fit the base (``details`` locate each
        problem).
    ValidationError
        Neither or both of ``document`` and ``patch``; a patch with no base revision.
    QuotaExceeded
        The document does not fit in the owner's storage quota (403).
    """
    base_number = _revision_number(base_revision)
    if (document is None) == (patch is None):
        raise ValidationError({"document": "give either a document or a patch"})
    with bridge_common.collector_paused():
        return _revision_save(topology, user, document, patch, base_number, message)


def _revision_save(topology, user, document, patch, base_number: int, message: str) -> TopologyRevision:
    if patch is None:
        normalized = bridge.normalize_document(document)
        digest = _whole_document_digest(topology, base_number, normalized)
        # The canonical text made once: its length is the quota's size, its hash the checksum.
        text = bridge.canonical_json_bytes(normalized)
        saved = PatchedRevision(checksum=bridge.document_checksum(normalized, text), digest=digest,
                                size=len(text), document=normalized)
        del text
    else:
        saved = patched_revision(topology, base_number, patch)
    try:
        with transaction.atomic():
            locked = Topology.objects.select_for_update().get(pk=topology.pk)
            if locked.revision_number != base_number:
                raise RevisionConflict(current_number=locked.revision_number,
                                       base_number=base_number)
            # the owner's storage, whoever saves (an editor cannot fill someone else's quota
            # unnoticed, and the owner can free it by deleting)
            limits.check_storage_quota(user=locked.owner, adding_bytes=saved.size)
            revision = revision_append(locked, user, saved.document, message, checksum=saved.checksum,
                                       digest=saved.digest, warm=patch is None, stored_as=saved)
    except IntegrityError:
        current = Topology.objects.values_list("revision_number", flat=True).get(pk=topology.pk)
        if current == base_number:
            raise
        raise RevisionConflict(current_number=current, base_number=base_number) from None
    if saved.whole_base is not None:   # patched the slow way: index the base for the next edit
        store_items(saved.whole_base_id, saved.whole_base)
    _copy_head(revision.topology, topology)
    return revision


def _whole_document_digest(topology: Topology, base_number: int, normalized: dict) -> tuple | None:
    """The digest of a whole document saved over revision ``base_number``, with its diff from
    that revision kept (``bridge.digest.MAX_STORED_DIFF``): the diff page of any two revisions
    then composes the stored diffs instead of reading two documents (1.5 s at 2,048 hosts).
    None (the digest is made on append, without a diff) for a first revision or a stale base."""
    current = Topology.objects.values_list("revision_number", flat=True).get(pk=topology.pk)
    base = _stored_document(topology.pk, base_number) if base_number and current == base_number else None
    if base is None:
        return None
    summary, targets = bridge_digest.revision_digest(normalized)
    diff = bridge_digest.document_diff(base, normalized)
    summary["diff"] = diff if diff["total"] <= bridge_digest.MAX_STORED_DIFF else None
    return summary, targets


def _stored_document(topology_id: int, number: int) -> dict | None:
    """A revision's document parsed from its stored text (``selectors.revision_document_parsed``)."""
    return selectors.revision_document_parsed(topology_id=topology_id, number=number)


def _revision_number(base: TopologyRevision | int | None) -> int:
    if base is None:
        return 0
    if isinstance(base, TopologyRevision):
        return base.number
    if isinstance(base, int) and base >= 0:
        return base
    raise ValidationError({"base_revision": "must be a revision number (0 for none)"})


def revision_append(topology: Topology, user, document: dict | None, message: str,
                    checksum: str | None = None, digest: tuple | None = None,
                    warm: bool = True, stored_as: PatchedRevision | None = None) -> TopologyRevision:
    """Write revision head + 1 and its digest (what its pages show: ``bridge.digest``), and move
    the head; the caller holds the topology's row lock. ``checksum`` and ``digest``: the
    document's, when the caller already computed them; ``warm``: compress the editor's copy
    after commit; ``stored_as``: a patch save's revision (``services.patches``), stored as a
    patch on its base when it says so (``document`` may then be None)."""
    as_patch = stored_as is not None and stored_as.base_id is not None
    revision = TopologyRevision.objects.create(
        topology=topology, number=topology.revision_number + 1,
        stored_document=None if as_patch else document,
        base_id=stored_as.base_id if as_patch else None, patch=stored_as.patch if as_patch else None,
        checksum=checksum or bridge.document_checksum(document), author=user, message=message[:500])
    summary, targets = digest or bridge_digest.revision_digest(document)
    RevisionDigest.objects.create(revision=revision, summary=summary, targets=targets)
    topology.current_revision = revision
    topology.revision_number = revision.number
    figures = (stored_as.figures if stored_as is not None and stored_as.figures
               else bridge.document_figures(document))
    for field, value in figures.items():
        setattr(topology, field, value)
    topology.save(update_fields=["current_revision", "revision_number", "host_count",
                                 "gpu_count", "node_count", "link_count", "updated_at"])
    audit_record(topology=topology, actor=user, action="revision.save",
                 summary=f"r{revision.number}: {message or '(no message)'}"[:500],
                 details={"revision": revision.number})
    # The editor reopens the revision it just saved: compress it for the editor's document URL
    # now (after commit, once), not on that first open (a good part of a 32k-GPU design's opening
    # time); it is kept on disk too, so a build job's worker prepares it for the web processes.
    # Not after a patch: the editor that sent it holds the document, and the save (~1 s at 1,024
    # hosts) would wait 0.15 s more for an open that may never come; that open compresses it.
    if warm:
        transaction.on_commit(lambda: _warm_editor_document(topology.pk, revision.pk, document))
    return revision


def store_items(revision_id: int, document: dict, checksum: str | None = None) -> None:
    """Index a big whole revision on disk (``designer.item_store``) for the patches that follow;
    a failure only leaves them the slow way."""
    if not item_store.worth_storing(document):
        return
    if checksum is None:
        checksum = TopologyRevision.objects.values_list("checksum", flat=True).get(pk=revision_id)
    if item_store.store_ready(revision_id, checksum):
        return
    try:
        with bridge_common.collector_paused():
            item_store.store_write(revision_id, checksum, document)
    except Exception:  # noqa: BLE001 — a derived cache: the next patch reads the database
        logging.getLogger(__name__).warning("item store of revision %s not written", revision_id,
                                            exc_info=True)


def _warm_editor_document(topology_id: int, revision_id: int, document: dict | None = None) -> None:
    from designer import editor_document  # the page layer's cache; imported only when used

    try:
        editor_document.document_warm(topology_id, revision_id, document)
    except Exception:  # noqa: BLE001 — a cold cache only costs the first open its compression
        logging.getLogger(__name__).warning("editor document of revision %s not precompressed",
                                            revision_id, exc_info=True)


def _forget_files(revisions: list[tuple[int, str]]) -> None:
    """Remove a deleted topology's revisions from this machine's disk caches (their text must
    not outlive it; other machines' copies go with their least-recently-used pruning)."""
    from designer import disk_cache, editor_document  # the page layer's cache: only when used

    disk_cache.remove(path for pk, checksum in revisions for path in (
        item_store.store_path(pk, checksum), editor_document.stored_path(pk, checksum)))


def _copy_head(source: Topology, target: Topology) -> None:
    """Refresh the caller's instance so it does not keep a stale head number."""
    for field in ("current_revision", "revision_number", "host_count", "gpu_count",
                  "node_count", "link_count", "updated_at"):
        setattr(target, field, getattr(source, field))

"""A patch saved as a revision: what it is validated against, and how the revision is stored.

A revision saved by patch is stored as its whole-document base plus the cumulative patch from
it (``TopologyRevision.base`` + ``patch``; ``designer.engine.document.delta``), so a one-node
edit of a 100,000-GPU design writes bytes, not 259 MB. Two ways to the same answer:

- **indexed** (:func:`_indexed`): the base has an item store on this machine
  (``designer/item_store.py``) and the digest can be told from the edited items
  (``bridge.digest.digest_after_edit``: devices and links inside hosts edited, added or
  removed, a device moved, a rename, fabric devices' attributes the BOM does not read, a
  switch's model, fabric cables, switches, NICs and GPUs added or removed). Only the items the
  patch names are read; the checksum
  streams the kept items' canonical bytes from the store's file.
- **whole** (:func:`_whole`): anything else. The base document is read from the database, the
  patch applied and validated incrementally (``bridge.patch_document``), the digest patched,
  and the cumulative patch found by comparing with the base (``delta_from_documents``).

Both refuse a stale base first (a conflict costs nothing) and are done before the row lock, as
a whole document's validation is: revisions are immutable.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from django.core.exceptions import ValidationError

from designer import bridge, item_store, selectors
from designer.bridge import deltas as bridge_deltas
from designer.bridge import digest as bridge_digest
from designer.bridge.common import canonical_json_bytes
from designer.exceptions import RevisionConflict
from designer.models import RevisionDigest, Topology, TopologyRevision

__all__ = ["PatchedRevision", "patched_revision", "MAX_PATCH_BYTES"]

#: A cumulative patch over this many bytes is stored as a whole document instead (and becomes
#: the base of the next edits): a reader applies the patch to its base on every read.
MAX_PATCH_BYTES = 4 * 1024 * 1024


@dataclass
class PatchedRevision:
    """What the save appends: the checksum and digest, and either the whole ``document`` or
    ``base_id`` + ``patch``; ``size`` is what it adds to the owner's storage; ``figures`` the
    topology row's size figures when known without the document."""

    checksum: str
    digest: tuple
    size: int
    document: dict | None = None
    base_id: int | None = None
    patch: dict | None = None
    figures: dict = field(default_factory=dict)
    whole_base: dict | None = None   # the base read whole (the slow way), for its item store
    whole_base_id: int | None = None


def patched_revision(topology: Topology, base_number: int, patch: dict) -> PatchedRevision:
    """The revision ``patch`` on revision ``base_number`` makes.

    Raises
    ------
    RevisionConflict
        ``base_number`` is not the head.
    EngineValidationError
        ``patch`` does not fit the base, or the result is not a valid topology (located).
    ValidationError
        There is no base revision.
    """
    current, hosts, gpus = (Topology.objects.values_list("revision_number", "host_count", "gpu_count")
                            .get(pk=topology.pk))
    if current != base_number:
        raise RevisionConflict(current_number=current, base_number=base_number)
    row = (TopologyRevision.objects.filter(topology_id=topology.pk, number=base_number)
           .values("pk", "base_id", "checksum", "patch").first())
    if row is None:
        raise ValidationError({"patch": "a patch needs a base revision: save a whole document first"})
    whole_id = row["base_id"] or row["pk"]
    whole_checksum = row["checksum"] if row["base_id"] is None else (
        TopologyRevision.objects.values_list("checksum", flat=True).get(pk=whole_id))
    stored = _stored_digest(row["pk"])
    store = item_store.store_open(whole_id, whole_checksum)
    if store is not None:
        try:
            done = _indexed(store, whole_id, row["patch"], patch, stored,
                            {"host_count": hosts, "gpu_count": gpus})
        finally:
            store.close()
        if done is not None:
            return done
    return _whole(whole_id, row["patch"], patch, stored)


def _stored_digest(revision_id: int) -> tuple | None:
    stored = RevisionDigest.objects.filter(revision_id=revision_id).values_list("summary", "targets").first()
    return (stored[0], bytes(stored[1])) if stored else None


def _indexed(store, whole_id: int, stored_patch: dict | None, patch: dict, stored: tuple | None,
             figures: dict) -> PatchedRevision | None:
    """The indexed way, or None when it does not apply (then the whole way answers);
    ``figures``: the head's host and GPU counts (an edit this way changes no host; GPUs added or
    removed are counted)."""
    edit = bridge_deltas.indexed_edit(store, stored_patch, patch)
    if edit is None:
        return None
    edited = bridge_digest.digest_after_edit(stored, patch, edit.edits, edit)
    size = item_store.json_size(edit.patch)
    if edited is None or size > MAX_PATCH_BYTES:
        return None
    olds = {k: [i for _, i in e["removed"]] + [old for _, old, _ in e["updated"]] for k, e in edit.edits.items()}
    news = {k: [new for _, _, new in e["updated"]] + e["added"] for k, e in edit.edits.items()}
    summary = {**edited[0], "diff": bridge_digest.patch_diff(
        {"name": edit.names[0], **olds}, patch, {"name": edit.names[1], **news})}
    gpus = sum(sign for items, sign in ((olds.get("nodes", []), -1), (news.get("nodes", []), 1))
               for item in items if item.get("kind") == "gpu")   # a GPU updated is in both: counts 0
    figures = dict(figures, node_count=edited[0]["counts"]["nodes"], link_count=edited[0]["counts"]["links"],
                   gpu_count=figures["gpu_count"] + gpus)
    return PatchedRevision(checksum=edit.checksum(store.span), digest=(summary, edited[1]), size=size,
                           base_id=whole_id, patch=edit.patch, figures=figures)


def _whole(whole_id: int, stored_patch: dict | None, patch: dict, stored: tuple | None) -> PatchedRevision:
    """The whole way: the base document read from the database (see the module docstring)."""
    whole = selectors.revision_document_parsed(pk=whole_id)
    base = bridge_deltas.compose_document(whole, stored_patch)
    normalized = bridge.patch_document(base, patch)
    digest = bridge_digest.patched_digest(base, stored, patch, normalized)
    text = canonical_json_bytes(normalized)
    checksum = bridge.document_checksum(normalized, text)
    cumulative = bridge_deltas.patch_between(whole, normalized)
    size = item_store.json_size(cumulative) if cumulative is not None else None
    if size is None or size > MAX_PATCH_BYTES or size >= len(text):
        return PatchedRevision(checksum=checksum, digest=digest, size=len(text), document=normalized)
    return PatchedRevision(checksum=checksum, digest=digest, size=size, base_id=whole_id,
                           patch=cumulative, document=normalized, whole_base=whole,
                           whole_base_id=whole_id)

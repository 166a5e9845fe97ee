"""Revisions stored as a patch on a whole-document base (``designer.engine.document.delta``):
read one back, find the patch between two documents, and apply an edit reading only what it
touches of an indexed base (``designer/item_store.py``)."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from designer.bridge.common import canonical_json_bytes, json_safe, patch_errors

__all__ = ["compose_document", "composed_text", "patch_between", "IndexedEdit", "indexed_edit"]


def compose_document(base: dict, patch: dict | None) -> dict:
    """The document of a revision stored as ``patch`` on ``base`` (items shared with ``base``)."""
    from designer.engine.document.patch import apply_patch

    return apply_patch(base, patch) if patch else base


def composed_text(store, stored_patch: dict | None) -> bytes:
    """The canonical JSON text of the revision stored as ``stored_patch`` on the base ``store``
    indexes, without parsing the base: its kept runs of bytes copied from the store's file."""
    from designer.engine.document.delta import Delta

    delta = Delta.from_patch(store, stored_patch)
    return b"".join(delta.canonical_pieces(store.span, canonical_json_bytes))


def patch_between(base: dict, document: dict) -> dict | None:
    """A patch from ``base`` to ``document`` (a document patches made from it), or None when no
    patch can say it (``engine.document.delta.delta_from_documents``)."""
    from designer.engine.document.delta import delta_from_documents

    return delta_from_documents(base, document)


@dataclass
class IndexedEdit:
    """An edit applied to an indexed base: the cumulative ``patch`` from the base, the nodes
    and links it removes, updates and adds (``edits``, as ``bridge.digest.digest_after_edit``
    reads them), the names before and after, and the delta itself (for the checksum)."""

    patch: dict
    edits: dict
    names: tuple
    delta: object
    before: object = None

    def links_at(self, node_id: str) -> list[dict]:
        """The links at ``node_id`` in the edited document (read by the base's index)."""
        return self.delta.naming("links", "a", node_id) + self.delta.naming("links", "b", node_id)

    def node(self, node_id: str) -> dict | None:
        """Node ``node_id`` after the edit, or before it for a node it removed."""
        for delta in (self.delta, self.before):
            nodes = delta.collections["nodes"] if delta is not None else None
            position = nodes.get(node_id) if nodes is not None else None
            if position is not None:
                return nodes.at(position)
        return None

    def node_kind(self, node_id: str) -> str | None:
        """The kind of node ``node_id`` after the edit, or before it for a node it removed."""
        node = self.node(node_id)
        return node.get("kind") if node is not None else None

    def group(self, group_id: str) -> dict | None:
        """Group ``group_id`` after the edit (read by the base's index)."""
        groups = self.delta.collections["groups"]
        position = groups.get(group_id)
        return groups.at(position) if position is not None else None

    def checksum(self, base_span) -> str:
        """sha256 of the result's canonical JSON, the kept base items' bytes read with
        ``base_span(key, first, stop)`` (the store's file) instead of being serialized."""
        digest = hashlib.sha256()
        for piece in self.delta.canonical_pieces(base_span, canonical_json_bytes):
            digest.update(piece)
        return digest.hexdigest()


def indexed_edit(store, stored_patch: dict | None, patch) -> IndexedEdit | None:
    """``patch`` applied to the revision stored as ``stored_patch`` on the base ``store`` indexes,
    validated as the whole result would be; None when it needs the whole document (a
    whole-document field, counts over the limits).

    Raises
    ------
    EngineValidationError
        ``patch`` field when the patch does not fit; ``document`` field when the result is not a
        valid topology (located in the whole result).
    """
    from designer.engine.document import normalize
    from designer.engine.document.delta import Delta, NotIncremental

    before = Delta.from_patch(store, stored_patch)
    try:
        with patch_errors():
            after = before.apply_normalized(patch, lambda mini: json_safe(normalize(mini)))[0]
    except NotIncremental:
        return None
    return IndexedEdit(patch=after.to_patch(), edits=_edits(before, after, patch),
                       names=(before.fields().get("name"), after.fields().get("name")), delta=after, before=before)


def _edits(before, after, patch: dict) -> dict:
    """Per ``nodes``/``links``: ``{"removed": [(position, item)], "updated": [(position, old,
    new)], "added": [items]}``, positions in ``before`` (a patch that fit: every id resolves)."""
    edits = {}
    for key in ("nodes", "links"):
        part = patch.get(key) if isinstance(patch.get(key), dict) else {}
        old, new = before.collections[key], after.collections[key]
        removed = [(p, old.at(p)) for p in map(old.get, part.get("remove") or [])]
        updated = [(old.get(x["id"]), old.at(old.get(x["id"])), new.at(new.get(x["id"])))
                   for x in part.get("update") or []]
        added = [new.at(new.get(x["id"])) for x in part.get("add") or []]
        if removed or updated or added:
            edits[key] = {"removed": removed, "updated": updated, "added": added}
    return edits

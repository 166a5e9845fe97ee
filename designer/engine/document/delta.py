"""A document kept as a whole base plus one patch from it, edited without the base in memory.

A revision saved by patch is stored as its whole-document base and the *cumulative* patch from
that base (``TopologyRevision.base`` + ``patch``): :class:`Delta` is that patch held as state —
per collection, the base positions removed, the base items replaced, the items added — and
:meth:`Delta.apply_normalized` applies the next patch to it reading only the base items the
patch names, through a :class:`BaseItems` lookup (an indexed file of the base,
``designer/item_store.py``; or a parsed document, :class:`DocumentItems`). The result is
exactly ``normalize(apply_patch(apply_patch(base, delta.to_patch()), patch))`` — the same checks,
messages and problem locations as :func:`.patch.apply_patch_normalized`, whose context document
it builds from the lookup — and stays a patch from the same base.

Why: every step of a one-node save of a 100,000-GPU design was linear in its 259 MB document
(read, index, validate, serialize, insert); with the base indexed on disk the save reads what
the edit touches (docs/PERFORMANCE.md, "One-node save at 100,000 GPUs").
"""
from __future__ import annotations

import json
from bisect import bisect_left
from typing import Callable, Iterable, Iterator, Protocol

import orjson

from designer.engine.errors import InvalidTopology, Problem
from designer.engine.document.patch import (
    COLLECTIONS, InvalidPatch, _Problems, _WHOLE_DOCUMENT_KEYS, _check_part, _part_ops, _relocate)

__all__ = ["BaseItems", "DocumentItems", "Delta", "NotIncremental", "delta_from_documents"]

# The marker of a top-level field the delta deletes from the base (a patch writes it as null).
_DELETED = object()


class NotIncremental(Exception):
    """The patch needs the whole document (a whole-document field, a count over the limits):
    the caller applies it to the composed document instead."""


class BaseItems(Protocol):
    """What a delta reads of its base. Positions are the base's list positions."""

    fields: dict   # the top-level fields other than the collections

    def has(self, key: str) -> bool: ...          # whether the base holds this collection
    def count(self, key: str) -> int: ...
    def position(self, key: str, ident: str) -> int | None: ...
    def item(self, key: str, position: int) -> dict: ...
    def items(self, key: str) -> list[dict]: ...  # all of them (groups: few)
    # Positions whose base item may have ``field`` == ``ident`` (a superset: the caller checks):
    # ``links`` by ``a``/``b``, ``nodes`` by ``group``.
    def naming(self, key: str, field: str, ident: str) -> Iterable[int]: ...


class DocumentItems:
    """:class:`BaseItems` of a parsed document (what the tests compare the file index with)."""

    def __init__(self, document: dict):
        self.document = document
        self.fields = {k: v for k, v in document.items() if k not in COLLECTIONS}
        self._index: dict[str, dict] = {}

    def has(self, key):
        return isinstance(self.document.get(key), list)

    def count(self, key):
        return len(self.document.get(key) or [])

    def position(self, key, ident):
        if key not in self._index:
            index: dict = {}
            for i, item in enumerate(self.document.get(key) or []):
                index.setdefault(item.get("id"), i)
            self._index[key] = index
        return self._index[key].get(ident)

    def item(self, key, position):
        return self.document[key][position]

    def items(self, key):
        return list(self.document.get(key) or [])

    def naming(self, key, field, ident):
        return [i for i, item in enumerate(self.document.get(key) or []) if item.get(field) == ident]


class _Collection:
    """One collection of base + delta: ``removed`` base positions, ``updates`` {base position:
    item}, ``adds`` (items after the base's, in order)."""

    def __init__(self, base: BaseItems, key: str, removed=(), updates=None, adds=()):
        self.base, self.key = base, key
        self.removed = sorted(removed)
        self.updates = dict(updates or {})
        self.adds = list(adds)
        self.add_at = {item.get("id"): k for k, item in enumerate(self.adds)}

    # ------------------------------------------------------------------ positions
    def prefix(self) -> int:
        """How many base items are kept (the result's first items)."""
        return self.base.count(self.key) - len(self.removed)

    def __len__(self) -> int:
        return self.prefix() + len(self.adds)

    def base_position(self, position: int) -> int:
        """The base position of the result's ``position`` (< :meth:`prefix`)."""
        for r in self.removed:
            if r <= position:
                position += 1
            else:
                break
        return position

    def get(self, ident, default=None):
        """The result position of ``ident``, or ``default`` (the index the patch checks read)."""
        if not isinstance(ident, str):
            return default
        k = self.add_at.get(ident)
        if k is not None:
            return self.prefix() + k
        w = self.base.position(self.key, ident)
        if w is None or self._is_removed(w):
            return default
        return w - bisect_left(self.removed, w)

    def __contains__(self, ident) -> bool:
        return self.get(ident) is not None

    def __getitem__(self, ident) -> int:
        position = self.get(ident)
        if position is None:
            raise KeyError(ident)
        return position

    def _is_removed(self, w: int) -> bool:
        i = bisect_left(self.removed, w)
        return i < len(self.removed) and self.removed[i] == w

    def at(self, position: int) -> dict:
        """The result's item at ``position``."""
        prefix = self.prefix()
        if position >= prefix:
            return self.adds[position - prefix]
        w = self.base_position(position)
        item = self.updates.get(w)
        return item if item is not None else self.base.item(self.key, w)

    def result_positions(self, w_positions: Iterable[int]) -> list[int]:
        """Result positions of the kept ones of these base positions."""
        return [w - bisect_left(self.removed, w) for w in w_positions if not self._is_removed(w)]

    # ------------------------------------------------------------------ edits
    def apply(self, part, problems: _Problems) -> tuple["_Collection", dict] | None:
        """This collection with one patch part applied (``patch._patch_collection``'s checks and
        messages), and what it touched (result positions, removed ids); None after a problem."""
        key, before = self.key, len(problems)
        ops = _part_ops(part, key, problems)
        if ops is None:
            return None
        removed, updates = _check_part(ops, self, key, problems)
        if len(problems) > before:
            return None
        out = _Collection(self.base, key, self.removed, self.updates, self.adds)
        prefix, gone_adds = self.prefix(), set()
        new_removed = set(out.removed)
        for position in removed:
            if position < prefix:
                w = self.base_position(position)
                new_removed.add(w)
                out.updates.pop(w, None)
            else:
                gone_adds.add(position - prefix)
        for position, item in updates.items():
            if position < prefix:
                out.updates[self.base_position(position)] = item
            else:
                out.adds[position - prefix] = item
        out.removed = sorted(new_removed)
        out.adds = [a for k, a in enumerate(out.adds) if k not in gone_adds] + list(ops["add"])
        out.add_at = {item.get("id"): k for k, item in enumerate(out.adds)}
        gone = sorted(removed)
        positions = [p - bisect_left(gone, p) for p in sorted(updates)]
        positions += range(len(out) - len(ops["add"]), len(out))
        return out, {"positions": positions, "removed": {str(i) for i in ops["remove"]}}

    def set(self, position: int, item: dict) -> None:
        """Replace the result's item at ``position`` (a normalized copy put back)."""
        prefix = self.prefix()
        if position >= prefix:
            self.adds[position - prefix] = item
        else:
            self.updates[self.base_position(position)] = item

    def part(self) -> dict:
        """This collection's part of the patch from the base."""
        out = {}
        if self.removed:
            out["remove"] = [self.base.item(self.key, w).get("id") for w in self.removed]
        if self.updates:
            out["update"] = [self.updates[w] for w in sorted(self.updates)]
        if self.adds:
            out["add"] = list(self.adds)
        return out


class Delta:
    """A document as ``base`` + the patch from it (see the module docstring)."""

    def __init__(self, base: BaseItems, collections: dict | None = None, fields: dict | None = None,
                 patched: Iterable[str] = ()):
        self.base = base
        self.collections = collections or {key: _Collection(base, key) for key in COLLECTIONS}
        self.field_ops = dict(fields or {})   # field -> value, or _DELETED
        self.patched = set(patched)           # collections a patch named (present even if empty)

    @classmethod
    def from_patch(cls, base: BaseItems, patch: dict | None) -> "Delta":
        """The delta a stored patch describes (a patch from this base, as :meth:`to_patch` wrote)."""
        delta = cls(base)
        if patch:
            out = delta.apply(patch)
            delta.collections, delta.field_ops, delta.patched = out.collections, out.field_ops, out.patched
        return delta

    def to_patch(self) -> dict:
        """The patch from the base (``apply_patch(base, delta.to_patch())`` is the document)."""
        patch = {k: (None if v is _DELETED else v) for k, v in self.field_ops.items()}
        for key, collection in self.collections.items():
            part = collection.part()
            if part or (key in self.patched and not self.base.has(key)):
                patch[key] = part
        return patch

    def fields(self) -> dict:
        """The document's top-level fields other than the collections."""
        out = dict(self.base.fields)
        for key, value in self.field_ops.items():
            if value is _DELETED:
                out.pop(key, None)
            else:
                out[key] = value
        return out

    def has(self, key: str) -> bool:
        """Whether the document holds collection ``key`` (the base's, or one a patch named)."""
        return self.base.has(key) or key in self.patched

    # ------------------------------------------------------------------ applying a patch
    def apply(self, patch) -> "Delta":
        """This delta with ``patch`` applied (only checked to fit, as :func:`.patch.apply_patch`)."""
        return self._apply(patch)[0]

    def _apply(self, patch) -> tuple["Delta", dict]:
        problems = _Problems()
        if not isinstance(patch, dict):
            raise InvalidPatch("the patch must be a JSON object",
                               [Problem("", f"expected an object, got {type(patch).__name__}")])
        copies = {k: _Collection(self.base, k, c.removed, c.updates, c.adds)
                  for k, c in self.collections.items()}
        out = Delta(self.base, copies, self.field_ops, self.patched)
        touched: dict = {}
        for key, value in patch.items():
            if key in COLLECTIONS:
                applied = self.collections[key].apply(value, problems)
                if applied is not None:
                    out.collections[key], touched[key] = applied
                    out.patched.add(key)
            else:
                out.field_ops[key] = _DELETED if value is None else value
        if problems:
            raise InvalidPatch(f"the patch does not fit the base document ({len(problems)} "
                               f"problem{'s' if len(problems) > 1 else ''})", problems)
        return out, touched

    def apply_normalized(self, patch, normalize: Callable[[dict], dict]) -> tuple["Delta", dict, dict]:
        """This delta with ``patch`` applied and what it touched normalized
        (:func:`.patch.apply_patch_normalized` without the base's document).

        Returns
        -------
        (Delta, dict, dict)
            The new delta; the result positions normalized here (``{"nodes": [...], "links":
            [...]}``); and the normalized context document (its ``nodes`` and ``links`` are
            the items at those positions).

        Raises
        ------
        InvalidPatch, InvalidTopology
            As :func:`.patch.apply_patch_normalized` (problems located in the whole result).
        NotIncremental
            The patch changes a whole-document field, or a count is over the limits.
        """
        from designer.engine.document.rules import LIMITS

        if not isinstance(patch, dict) or _WHOLE_DOCUMENT_KEYS & patch.keys():
            raise NotIncremental("a whole-document field changes")
        result, touched = self._apply(patch)
        limits = {"nodes": "max_nodes", "links": "max_links", "groups": "max_groups"}
        if any(len(result.collections[k]) > LIMITS[v] for k, v in limits.items()):
            raise NotIncremental("over the count limits")
        mini, where = result._context_document(touched)
        try:
            normalized = normalize(mini)
        except InvalidTopology as exc:
            problems = [Problem(_relocate(p.path, where), p.message) for p in exc.problems]
            raise InvalidTopology(exc.message, problems) from None
        result._splice(normalized, where, touched)
        return result, where, normalized

    def _context_document(self, touched: dict) -> tuple[dict, dict]:
        """``patch._context_document`` read through the lookup: the fields, every group, the
        touched nodes and links, the nodes of removed groups, the links of removed nodes, and
        the nodes the held links name."""
        nodes, links = self.collections["nodes"], self.collections["links"]
        node_at = set(touched.get("nodes", {}).get("positions", ()))
        link_at = set(touched.get("links", {}).get("positions", ()))
        for gone in touched.get("groups", {}).get("removed") or ():
            node_at.update(self._naming(nodes, "group", gone))
        for gone in touched.get("nodes", {}).get("removed") or ():
            link_at.update(self._naming(links, "a", gone))
            link_at.update(self._naming(links, "b", gone))
        held = {p: links.at(p) for p in link_at}
        ends = {e for lk in held.values() if isinstance(lk, dict) for e in (lk.get("a"), lk.get("b"))
                if isinstance(e, str)}
        node_at.update(p for p in (nodes.get(e) for e in ends) if p is not None)
        where = {"nodes": sorted(node_at), "links": sorted(link_at)}
        mini = self.fields()
        if self.has("groups"):
            mini["groups"] = self.group_items()
        mini["nodes"] = [nodes.at(p) for p in where["nodes"]]
        mini["links"] = [held[p] for p in where["links"]]
        return mini, where

    def naming(self, key: str, field: str, ident: str) -> list[dict]:
        """The items of ``key`` whose ``field`` is ``ident`` in this document (a node's links:
        ``naming("links", "a", id) + naming("links", "b", id)``), read by the base's index."""
        collection = self.collections[key]
        return [collection.at(p) for p in self._naming(collection, field, ident)]

    def _naming(self, collection: _Collection, field: str, ident: str) -> list[int]:
        """Result positions of the items whose ``field`` is ``ident`` now."""
        positions = collection.result_positions(
            w for w in collection.base.naming(collection.key, field, ident)
            if w not in collection.updates)
        positions += collection.result_positions(
            w for w, item in collection.updates.items() if isinstance(item, dict) and item.get(field) == ident)
        prefix = collection.prefix()
        positions += [prefix + k for k, item in enumerate(collection.adds)
                      if isinstance(item, dict) and item.get(field) == ident]
        return [p for p in positions if collection.at(p).get(field) == ident]

    def group_items(self) -> list[dict]:
        """Every group of the document (few: read in one piece from the base)."""
        groups = self.collections["groups"]
        removed = set(groups.removed)
        return [groups.updates.get(w, item) for w, item in enumerate(self.base.items("groups"))
                if w not in removed] + list(groups.adds)

    def _splice(self, normalized: dict, where: dict, touched: dict) -> None:
        """Put the normalized context back: the touched items always (a patch's ``0`` is
        normalized to ``0.0``, equal but not the same JSON), the others where they changed."""
        for key in ("nodes", "links"):
            collection, mine = self.collections[key], set(touched.get(key, {}).get("positions", ()))
            for position, item in zip(where[key], normalized.get(key) or []):
                if position in mine or not _same(item, collection.at(position)):
                    collection.set(position, item)
        if "groups" in normalized:
            groups = self.collections["groups"]
            mine = set(touched.get("groups", {}).get("positions", ()))
            for position, item in enumerate(normalized["groups"]):
                if position in mine or not _same(item, groups.at(position)):
                    groups.set(position, item)
        self.patched.update(k for k in COLLECTIONS if k in normalized)   # normalize adds `groups: []`
        fields = {k: v for k, v in normalized.items() if k not in COLLECTIONS}
        base_fields = self.base.fields
        self.field_ops = {k: v for k, v in fields.items() if k not in base_fields or not _same(base_fields[k], v)}
        self.field_ops.update({k: _DELETED for k in base_fields if k not in fields})

    # ------------------------------------------------------------------ the canonical text
    def canonical_pieces(self, base_span: Callable[[str, int, int], bytes | memoryview],
                         dumps: Callable[[object], bytes]) -> Iterator[bytes | memoryview]:
        """The document's canonical JSON (sorted keys, no whitespace) in pieces: each run of
        kept, unchanged base items is ``base_span(key, first, stop)`` (the canonical bytes of
        items ``first`` … ``stop - 1`` with their commas, as the base's index holds them), the
        rest ``dumps(value)``. Joined, the pieces are ``dumps(document)`` — so a checksum streams
        over them without the document, in a few pieces per edit."""
        values = self.fields()
        keys = sorted(set(values) | {k for k in COLLECTIONS if self.has(k)})
        yield b"{"
        for n, key in enumerate(keys):
            yield (b"," if n else b"") + dumps(key) + b":"
            if key not in COLLECTIONS:
                yield dumps(values[key])
                continue
            yield b"["
            for i, piece in enumerate(self._item_runs(key, base_span, dumps)):
                if i:
                    yield b","
                yield piece
            yield b"]"
        yield b"}"

    def _item_runs(self, key: str, base_span, dumps) -> Iterator[bytes | memoryview]:
        """One collection's items as runs of kept base items and single changed ones."""
        collection, count = self.collections[key], self.base.count(key)
        first = 0
        for stop in sorted(set(collection.removed) | set(collection.updates)) + [count]:
            if first < stop:
                yield base_span(key, first, stop)
            if stop in collection.updates:
                yield dumps(collection.updates[stop])
            first = stop + 1
        for item in collection.adds:
            yield dumps(item)


def delta_from_documents(base: dict, document: dict) -> dict | None:
    """A patch from ``base`` to ``document`` (``apply_patch(base, patch) == document``), for a
    ``document`` that keeps the base's order as patches leave it: base items first, in base
    order, then added ones. Items by id; a base item that comes back out of order (removed
    and added again) is removed and added. None when no patch can say it (a field whose
    value is null)."""
    if any(value is None for key, value in document.items() if key not in COLLECTIONS):
        return None   # a null field: a patch's null deletes, so it cannot be written as one
    patch: dict = {}
    for key in COLLECTIONS:
        if isinstance(document.get(key), list):
            part = _collection_delta(base.get(key) if isinstance(base.get(key), list) else [],
                                     document[key])
            if part or key not in base:
                patch[key] = part
    for key in (set(base) | set(document)) - set(COLLECTIONS):
        if key not in document:
            patch[key] = None
        elif key not in base or not _same(base[key], document[key]):
            patch[key] = document[key]
    return patch


def _collection_delta(before: list, after: list) -> dict:
    """One collection's part of :func:`delta_from_documents`: the base items kept in order
    (updated where they differ), the rest removed, what follows added."""
    index = {item.get("id"): i for i, item in enumerate(before)}
    kept, last, adds, updates = set(), -1, [], []
    for item in after:
        w = index.get(item.get("id")) if not adds else None
        if w is not None and w > last:
            kept.add(w)
            last = w
            if not _same(item, before[w]):
                updates.append(item)
        else:
            adds.append(item)
    part = {"remove": [before[w].get("id") for w in range(len(before)) if w not in kept],
            "update": updates, "add": adds}
    return {op: items for op, items in part.items() if items}


def _same(a, b) -> bool:
    """Whether two JSON values are the same JSON: ``==`` takes ``1`` for ``1.0`` and ``True``
    for ``1``, which a stored document (and its checksum) tells apart."""
    return a is b or (a == b and _text(a) == _text(b))


def _text(value) -> bytes:
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except TypeError:   # what orjson refuses (an integer beyond 64 bits)
        return json.dumps(value, sort_keys=True).encode()

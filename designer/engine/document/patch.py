"""A patch against a ``fabricscope.topology/1`` document: save a small edit of a large design.

The editor sends what changed since the revision it loaded, not the whole document (a
2,048-host DGX-H100 cluster is ~40 MB of JSON; renaming one device should not post it all)::

    {"nodes":  {"add": [{"id": "h0/nvme9", "kind": "nvme", "group": "h0"}],
                "remove": ["h1/nic3"],
                "update": [{"id": "h0/gpu0", "kind": "gpu", "group": "h0", "attrs": {...}}]},
     "links":  {"add": [...], "remove": [...], "update": [...]},
     "groups": {"add": [...], "remove": [...], "update": [...]},
     "name": "pod-a (r2)",
     "layout": null}

- ``nodes``, ``links`` and ``groups`` address items by their ``id``; each part is optional.
  ``remove`` lists ids of the base; ``update`` replaces a base item *whole* by the one given
  (same ``id``); ``add`` appends items whose ids are not in the base (or are removed by the same
  patch). Applied in that order: remove, update, add.
- Any other key sets that top-level field of the document (``name``, ``layout``,
  ``capacity_basis``…); ``null`` deletes it.
- The result keeps the base order: removed items drop out, updated ones stay in place, added
  ones follow at the end. So a problem the validator finds later (``nodes[812].kind``) is
  located in that resulting document.

:func:`apply_patch` only checks that the patch fits the base (every id it names exists or does
not, as it must); whether the result is a valid topology is :func:`document.normalize`'s job.

:func:`apply_patch_normalized` is ``normalize(apply_patch(doc, patch))`` for a base that is
already normalized (a stored revision), at the cost of what the patch touches: it validates
and normalizes only the items the patch adds or updates and the ones a removal may have broken
(the nodes of a removed group, the links of a removed node), with the groups, the top-level
fields and the link ends they name as context, and keeps every other item of the base as it is.
A 172-byte edit of a 1,024-host design no longer re-validates 146k items.
"""
from __future__ import annotations

import operator
import re
from bisect import bisect_left

from designer.engine.errors import EngineError, InvalidTopology, Problem

__all__ = ["COLLECTIONS", "OPERATIONS", "InvalidPatch", "apply_patch", "apply_patch_normalized"]

COLLECTIONS = ("nodes", "links", "groups")
OPERATIONS = ("remove", "update", "add")
_SINGULAR = {"nodes": "node", "links": "link", "groups": "group"}
_MAX_PROBLEMS = 1000  # as document.LIMITS["max_problems"]: a garbage patch is not a 100k-line answer


class InvalidPatch(EngineError):
    """The patch does not fit its base document (unknown id, duplicate add, bad shape)."""

    code = "invalid_patch"


class _Problems(list):
    def add(self, path: str, message: str) -> None:
        if len(self) < _MAX_PROBLEMS:
            self.append(Problem(path, message))


def apply_patch(doc: dict, patch) -> dict:
    """The document ``doc`` with ``patch`` applied (see the module docstring for the shape).

    Pure: ``doc`` and ``patch`` are left as they are; the result shares unchanged items with
    ``doc`` (copy it before mutating).

    Parameters
    ----------
    doc : dict
        The base document (a revision's stored, normalized document).
    patch : dict
        ``{"nodes"|"links"|"groups": {"add": [...], "remove": [ids], "update": [...]}, field: value}``.

    Returns
    -------
    dict
        The patched document, not yet validated.

    Raises
    ------
    InvalidPatch
        With one located problem per misfit, e.g. ``links.update[3].id: no link "h9/x"``.

    Examples
    --------
    >>> base = {"name": "a", "nodes": [{"id": "g0", "kind": "gpu"}], "links": []}
    >>> apply_patch(base, {"nodes": {"add": [{"id": "g1", "kind": "gpu"}]}, "name": "b"})["name"]
    'b'
    """
    return _apply(doc, patch)[0]


def _apply(doc: dict, patch) -> tuple[dict, dict]:
    """:func:`apply_patch`'s result, and per collection what it touched: ``{"nodes":
    {"positions": [result positions updated or added], "removed": {ids}}, ...}``."""
    problems = _Problems()
    if not isinstance(patch, dict):
        raise InvalidPatch("the patch must be a JSON object",
                           [Problem("", f"expected an object, got {type(patch).__name__}")])
    result, touched = dict(doc), {}
    for key, value in patch.items():
        if key in COLLECTIONS:
            patched = _patch_collection(doc.get(key), value, key, problems)
            if patched is not None:
                result[key], touched[key] = patched
        elif value is None:
            result.pop(key, None)
        else:
            result[key] = value
    if problems:
        raise InvalidPatch(f"the patch does not fit the base document ({len(problems)} "
                           f"problem{'s' if len(problems) > 1 else ''})", problems)
    return result, touched


def _patch_collection(items, part, key: str, problems: _Problems) -> tuple[list, dict] | None:
    """``items`` (a base list) with one collection's part applied, and what it touched (see
    :func:`_apply`); None after a problem."""
    before = len(problems)
    ops = _part_ops(part, key, problems)
    if ops is None:
        return None
    base = items if isinstance(items, list) else []
    removed, updates = _check_part(ops, _index(base), key, problems)
    if len(problems) > before:
        return None
    kept = list(base)
    for i, item in updates.items():
        kept[i] = item
    if removed:   # a few removals: one pass; none (the usual edit): no pass at all
        kept = [item for i, item in enumerate(kept) if i not in removed]
    gone = sorted(removed)   # an updated item moves up by the removed items before it
    positions = [p - bisect_left(gone, p) for p in sorted(updates)]
    positions += range(len(kept), len(kept) + len(ops["add"]))
    removed_ids = {base[i].get("id") for i in removed}
    return kept + list(ops["add"]), {"positions": positions, "removed": removed_ids}


def _part_ops(part, key: str, problems: _Problems) -> dict | None:
    """A collection part's ``remove``, ``update`` and ``add`` lists (a bad shape noted in
    ``problems``); None when the part is not an object."""
    if not isinstance(part, dict):
        problems.add(key, "expected an object with add, remove and update lists")
        return None
    for op in part:
        if op not in OPERATIONS:
            problems.add(f"{key}.{op}", f"unknown operation (use {', '.join(OPERATIONS)})")
    return {op: _list(part, key, op, problems) for op in OPERATIONS}


def _check_part(ops: dict, index, key: str, problems: _Problems) -> tuple[set[int], dict[int, dict]]:
    """Whether each id the part names exists or not as it must, against ``index`` (id ->
    position: a dict, or anything with ``in``, ``[]`` and ``get``); the removed positions and
    the updates by position."""
    removed = _check_removals(ops["remove"], index, key, problems)
    updates = _check_updates(ops["update"], index, removed, key, problems)
    _check_adds(ops["add"], index, removed, key, problems)
    return removed, updates


def _list(part: dict, key: str, op: str, problems: _Problems) -> list:
    value = part.get(op, [])
    if isinstance(value, list):
        return value
    problems.add(f"{key}.{op}", f"expected a list, got {type(value).__name__}")
    return []


def _index(items: list) -> dict[str, int]:
    """Id -> position of the base's items (the first one for a duplicated id)."""
    try:   # a stored revision: dicts with distinct string ids, indexed at C speed
        index = dict(zip(map(operator.itemgetter("id"), items), range(len(items))))
    except (KeyError, TypeError, IndexError):
        index = None
    if index is not None and len(index) == len(items) and set(map(type, index)) == {str}:
        return index
    index = {}
    for i, item in enumerate(items):
        ident = item.get("id") if isinstance(item, dict) else None
        if isinstance(ident, str):
            index.setdefault(ident, i)
    return index


def _check_removals(ids: list, index: dict, key: str, problems: _Problems) -> set[int]:
    removed: set[int] = set()
    for i, ident in enumerate(ids):
        path = f"{key}.remove[{i}]"
        if not isinstance(ident, str):
            problems.add(path, f"expected an id (a string), got {type(ident).__name__}")
        elif ident not in index:
            problems.add(path, f"no {_SINGULAR[key]} {ident!r}")
        elif index[ident] in removed:
            problems.add(path, f"{ident!r} is removed twice")
        else:
            removed.add(index[ident])
    return removed


def _item_id(item, path: str, problems: _Problems) -> str | None:
    if not isinstance(item, dict):
        problems.add(path, f"expected an object, got {type(item).__name__}")
        return None
    ident = item.get("id")
    if not isinstance(ident, str):
        problems.add(f"{path}.id", "every added or updated item needs its id (a string)")
        return None
    return ident


def _check_updates(items: list, index: dict, removed: set, key: str,
                   problems: _Problems) -> dict[int, dict]:
    updates: dict[int, dict] = {}
    for i, item in enumerate(items):
        path = f"{key}.update[{i}]"
        ident = _item_id(item, path, problems)
        if ident is None:
            continue
        position = index.get(ident)
        if position is None:
            problems.add(f"{path}.id", f"no {_SINGULAR[key]} {ident!r}")
        elif position in removed:
            problems.add(f"{path}.id", f"{ident!r} is also removed by this patch")
        elif position in updates:
            problems.add(f"{path}.id", f"{ident!r} is updated twice")
        else:
            updates[position] = item
    return updates


def _check_adds(items: list, index: dict, removed: set, key: str, problems: _Problems) -> None:
    added: set[str] = set()
    for i, item in enumerate(items):
        path = f"{key}.add[{i}]"
        ident = _item_id(item, path, problems)
        if ident is None:
            continue
        if ident in added:
            problems.add(f"{path}.id", f"{ident!r} is added twice")
        elif ident in index and index[ident] not in removed:
            problems.add(f"{path}.id", f"{_SINGULAR[key]} {ident!r} already exists "
                                       f"(update it, or remove it first)")
        added.add(ident)


# ---------------------------------------------------------------------------- incremental
# Top-level fields whose change alters how every link is completed: such a patch is normalized whole.
_WHOLE_DOCUMENT_KEYS = frozenset({"capacity_basis"})
_ITEM_PATH = re.compile(r"^(nodes|links)\[(\d+)\]")


def apply_patch_normalized(doc: dict, patch) -> tuple[dict, dict | None]:
    """``normalize(apply_patch(doc, patch))`` for a normalized ``doc``, validating and normalizing
    only what the patch touches (module docstring).

    Parameters
    ----------
    doc : dict
        A *normalized* valid document (a stored revision's): its untouched items are kept as they
        are, so they must already be what :func:`~designer.engine.document.normalize` makes.
    patch : dict

    Returns
    -------
    (dict, dict or None)
        The normalized patched document (untouched items shared with ``doc``: copy before
        mutating), and the result positions that were normalized here, ``{"nodes": [...],
        "links": [...]}`` — None when the whole document was normalized (a patch of
        ``capacity_basis``, or a base that is not a document of lists).

    Raises
    ------
    InvalidPatch
        The patch does not fit the base (as :func:`apply_patch`).
    InvalidTopology
        The result is not valid: the problems :func:`~designer.engine.document.validate` finds in
        the whole result, located in it (``nodes[812].kind``).
    """
    from designer.engine.document.validator import normalize

    result, touched = _apply(doc, patch)
    if not _incremental(doc, result, patch):
        return normalize(result), None
    mini, where = _context_document(result, touched)
    try:
        normalized = normalize(mini)
    except InvalidTopology as exc:
        problems = [Problem(_relocate(p.path, where), p.message) for p in exc.problems]
        raise InvalidTopology(exc.message, problems) from None
    return _splice(result, normalized, where), where


def _incremental(doc, result: dict, patch: dict) -> bool:
    """Whether the patched items can be checked on their own: a base of lists within the count
    limits (the context document cannot see a count), and no whole-document field changed."""
    from designer.engine.document.rules import LIMITS

    if not isinstance(doc, dict) or _WHOLE_DOCUMENT_KEYS & patch.keys():
        return False
    limits = {"nodes": "max_nodes", "links": "max_links", "groups": "max_groups"}
    for key, limit in limits.items():
        items = result.get(key, [])
        if not isinstance(items, list) or len(items) > LIMITS[limit]:
            return False
    return isinstance(result.get("nodes"), list) and isinstance(result.get("links"), list)


def _context_document(result: dict, touched: dict) -> tuple[dict, dict]:
    """The small document validated in place of ``result``, and where its nodes and links are
    in ``result`` (``{"nodes": [positions], "links": [positions]}``, ascending: problems come
    out in the whole document's order).

    It holds the top-level fields and every group (few, and a group's problems depend on the
    others: parents, cycles), the touched nodes and links, the nodes of a removed group, the
    links of a removed node, and the nodes every held link names (so its ends resolve as they
    do in ``result``). Every other item is unchanged in a valid base and stays valid.
    """
    nodes, links = result["nodes"], result["links"]
    node_at = set(touched.get("nodes", {}).get("positions", ()))
    link_at = set(touched.get("links", {}).get("positions", ()))
    gone_groups = touched.get("groups", {}).get("removed")
    if gone_groups:
        node_at.update(i for i, n in enumerate(nodes) if isinstance(n, dict) and n.get("group") in gone_groups)
    gone_nodes = touched.get("nodes", {}).get("removed")
    if gone_nodes:
        link_at.update(i for i, lk in enumerate(links) if isinstance(lk, dict)
                       and (lk.get("a") in gone_nodes or lk.get("b") in gone_nodes))
    if link_at:
        node_at.update(_end_positions(nodes, [links[i] for i in link_at]))
    where = {"nodes": sorted(node_at), "links": sorted(link_at)}
    mini = {k: v for k, v in result.items() if k not in COLLECTIONS}
    if "groups" in result:
        mini["groups"] = result["groups"]
    mini["nodes"] = [nodes[i] for i in where["nodes"]]
    mini["links"] = [links[i] for i in where["links"]]
    return mini, where


def _end_positions(nodes: list, links: list) -> set[int]:
    """Positions in ``nodes`` of the nodes the ``links`` name as ends (an unknown end: none)."""
    ends = {e for lk in links if isinstance(lk, dict) for e in (lk.get("a"), lk.get("b"))
            if isinstance(e, str)}
    return {i for i, n in enumerate(nodes) if isinstance(n, dict) and n.get("id") in ends}


def _relocate(path: str, where: dict) -> str:
    """A context document's problem path in the whole result (``nodes[2].kind`` -> ``nodes[812].kind``)."""
    match = _ITEM_PATH.match(path)
    if match is None:
        return path
    key, index = match.group(1), int(match.group(2))
    return f"{key}[{where[key][index]}]{path[match.end():]}"


def _splice(result: dict, normalized: dict, where: dict) -> dict:
    """``normalized`` (the context document, normalized) with its nodes and links put back at
    their places among ``result``'s untouched ones."""
    out = dict(normalized)   # normalize's key order: top-level fields, groups, nodes, links
    for key in ("nodes", "links"):
        items = list(result[key])
        for position, item in zip(where[key], normalized[key]):
            items[position] = item
        out[key] = items
    return out

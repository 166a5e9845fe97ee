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
"""
from __future__ import annotations

from designer.engine.errors import EngineError, Problem

__all__ = ["COLLECTIONS", "OPERATIONS", "InvalidPatch", "apply_patch"]

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
    problems = _Problems()
    if not isinstance(patch, dict):
        raise InvalidPatch("the patch must be a JSON object",
                           [Problem("", f"expected an object, got {type(patch).__name__}")])
    result = dict(doc)
    for key, value in patch.items():
        if key in COLLECTIONS:
            patched = _patch_collection(doc.get(key), value, key, problems)
            if patched is not None:
                result[key] = patched
        elif value is None:
            result.pop(key, None)
        else:
            result[key] = value
    if problems:
        raise InvalidPatch(f"the patch does not fit the base document ({len(problems)} "
                           f"problem{'s' if len(problems) > 1 else ''})", problems)
    return result


def _patch_collection(items, part, key: str, problems: _Problems) -> list | None:
    """``items`` (a base list) with one collection's part applied; None after a problem."""
    if not isinstance(part, dict):
        problems.add(key, "expected an object with add, remove and update lists")
        return None
    before = len(problems)
    for op in part:
        if op not in OPERATIONS:
            problems.add(f"{key}.{op}", f"unknown operation (use {', '.join(OPERATIONS)})")
    ops = {op: _list(part, key, op, problems) for op in OPERATIONS}
    base = items if isinstance(items, list) else []
    index = _index(base)
    removed = _check_removals(ops["remove"], index, key, problems)
    updates = _check_updates(ops["update"], index, removed, key, problems)
    _check_adds(ops["add"], index, removed, key, problems)
    if len(problems) > before:
        return None
    kept = [updates.get(i, item) for i, item in enumerate(base) if i not in removed]
    return kept + list(ops["add"])


def _list(part: dict, key: str, op: str, problems: _Problems) -> list:
    value = part.get(op, [])
    if isinstance(value, list):
        return value
    problems.add(f"{key}.{op}", f"expected a list, got {type(value).__name__}")
    return []


def _index(items: list) -> dict[str, int]:
    """Id -> position of the base's items (the first one for a duplicated id)."""
    index: dict[str, int] = {}
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
